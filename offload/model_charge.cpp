// model_offload_charge() (model_charge.hpp): the engine's own prediction of one bare off-load, so that the profile
// subtracts what the model adds back and nothing is restated here.
#include "model_charge.hpp"

#include "mmgp/model.hpp"

namespace mmgp::kernels {

std::function<double(double, int)> model_offload_charge(const platform& pl, policy pol) {
    return [pl, pol](double bytes, int p) {
        scenario s;
        s.name = "one off-load";
        s.plat = pl;
        s.app.name = "one off-load";
        s.app.N = 1;
        s.app.dma_bytes = bytes;
        s.space.p = {p, p};
        s.space.pol = pol;
        configuration c;
        c.p = p;
        c.pol = pol;
        c.share = pl.sharing_modes().front();  // one process: no other to share the accelerator with
        s.space.sharing = {c.share};
        const evaluator ev(s, model_kind::mmgp);
        return ev(c).time_s;
    };
}

}  // namespace mmgp::kernels
