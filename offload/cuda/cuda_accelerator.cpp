// The GPU behind the runtime's processes (cuda_accelerator.hpp): a host unit over device_slice (device_slice.cu).
#include "cuda/cuda_accelerator.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "cuda/device_slice.hpp"
#include "cuda/host_reference.hpp"
#include "cuda/slice_offloader.hpp"
#include "forked.hpp"  // run/: the probe's child

namespace mmgp::offload {

cuda_facts probe_cuda() {
    cuda_facts f;
    int v[2] = {0, 0};
    // A driver that hangs in its initialisation is given 60 s.
    const bool got = run::answer_of_child([](int to_parent) {
        int v[2] = {0, 0};
        try {
            v[0] = device_slice::usable_devices();
            if (v[0] > 0) v[1] = device_slice::multiprocessors();
        } catch (const std::exception&) {
            v[0] = 0;
        }
        return run::write_all(to_parent, v, sizeof v) ? 0 : 1;
    }, v, sizeof v, run::steady_seconds() + 60);
    f.devices = got ? v[0] : 0;
    f.sms = got ? v[1] : 0;
    if (!got) f.why = "the probe of the CUDA driver did not answer";
    else if (f.devices == 0 || f.sms <= 0) f.why = "no usable GPU (no NVIDIA driver or device, or none visible)";
    return f;
}

kernels::process_accelerator cuda_accelerator(const cuda_facts& facts, kernels::host_policy wait, bool timed) {
    const int sms = std::max(facts.sms, 1);
    const bool block = wait == kernels::host_policy::edtlp;
    return {"cuda", [sms, block, timed](const kernels::alignment& a, const kernels::model& m, const kernels::tree& t, int p) {
                if (const char* mode = std::getenv("MMGP_SHARING"); mode && std::strcmp(mode, "mps") == 0)
                    setenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", std::to_string(std::clamp((100 * p + sms - 1) / sms, 1, 100)).c_str(), 0);
                setenv("CUDA_MODULE_LOADING", "EAGER", 0);
                device_slice::set_host_wait(block);
                auto slice = std::make_unique<device_slice>(tip_masks(a, 0, a.sites()), arrays_of(a, m), t.edges(), p);
                return std::unique_ptr<kernels::detail::offloader>(
                    std::make_unique<owned_slice_offloader<device_slice>>(std::move(slice), timed));
            }};
}

}  // namespace mmgp::offload
