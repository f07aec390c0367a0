// mmgp-gpu-likelihood: the off-loaded likelihood kernels on the GPU against libpll on the same inputs (the gpu
// suite). A simulated DNA alignment (GTR+G4, IUPAC codes and gaps added), a random tree and a bootstrap resample's
// weights; every edge focused in turn as the bootstrap program does (newview through the orientation, evaluate,
// the sumtable and the derivatives at three branch lengths, the P matrices recomputed each time), on libpll
// (kernels::site_slice) and on the GPU (device_slice) with grids of p blocks, p in {1, 7, SMs, 4 x SMs}; then two
// units of the bootstrap program through the off-load runtime's seam (slice_offloader) at p = 1 and SMs; each with
// both of newview's kernels (device_slice::set_newview_kernel).
//   mmgp-gpu-likelihood [--taxa N] [--sites N]
// Prints one line per grid and exits 0 when every log-likelihood and derivative is within 1e-9 (relative) of
// libpll's, 1 otherwise, 77 where no GPU is usable (a skip), 2 on bad arguments.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cuda/device_slice.hpp"
#include "cuda/host_reference.hpp"
#include "cuda/slice_offloader.hpp"
#include "kernels.hpp"

namespace K = mmgp::kernels;
namespace O = mmgp::offload;

namespace {

struct tally {
    long compared = 0, failed = 0;
    double worst = 0;
    const char* place = "edge";  ///< what the index of a value counts
    void add(double got, double want, const char* what, std::size_t edge) {
        const double rel = std::fabs(got - want) / std::max(std::fabs(want), 1e-300);
        ++compared;
        worst = std::max(worst, rel);
        if (rel <= 1e-9) return;
        if (++failed <= 5) std::printf("  %s at %s %zu: GPU %.17g, libpll %.17g (relative %.3g)\n", what, place, edge, got, want, rel);
    }
};

// Sets newview's kernel `nk` on `gpu`, or throws where it cannot take the model's rate categories.
void use_kernel(O::device_slice& gpu, O::newview_kernel nk) {
    if (!gpu.set_newview_kernel(nk)) throw std::runtime_error("newview's kernel does not take the model's rate categories");
}

// The walk on libpll and on the GPU with `blocks` blocks per grid and newview's kernel `nk`.
tally walk(const K::alignment& a, const K::tree& t, const std::vector<unsigned>& w, std::size_t lo, std::size_t hi, int blocks,
           O::newview_kernel nk) {
    const K::model m = K::default_model(a);
    K::site_slice ref(a, m, lo, hi);
    O::device_slice gpu(O::tip_masks(a, lo, hi), ref.arrays(), t.edges(), blocks);
    use_kernel(gpu, nk);
    ref.set_weights(w.data());
    gpu.set_weights(w.data() + lo);
    tally out;
    O::compare_walk(t, ref, gpu, [&out](double got, double want, const char* what, std::size_t e) { out.add(got, want, what, e); });
    return out;
}

// The bootstrap program's units through the runtime's seam: libpll's off-loads against the GPU's (slice_offloader
// over device_slice, `blocks` per grid), each unit's log-likelihood after its smoothing round.
tally units(const K::alignment& a, const K::tree& t, std::size_t lo, std::size_t hi, int blocks, O::newview_kernel nk) {
    const K::model m = K::default_model(a);
    O::libpll_offloader ref(a, m, lo, hi);
    const K::site_slice arrays_of(a, m, lo, hi);
    O::device_slice gpu(O::tip_masks(a, lo, hi), arrays_of.arrays(), t.edges(), blocks);
    use_kernel(gpu, nk);
    O::slice_offloader<O::device_slice> off(gpu, lo);
    K::detail::bootstrap_search on_libpll(t, a.sites(), 1, 4, 7), on_gpu(t, a.sites(), 1, 4, 7);
    tally out;
    out.place = "unit";
    for (int unit = 0; unit < 2; ++unit)
        out.add(on_gpu.run_unit(unit, off), on_libpll.run_unit(unit, ref), "log-likelihood", static_cast<std::size_t>(unit));
    return out;
}

int run(int argc, char** argv) {
    std::size_t taxa = 24, sites = 5000;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if ((arg == "--taxa" || arg == "--sites") && i + 1 < argc) {
            const long v = std::strtol(argv[++i], nullptr, 10);
            if (v < (arg == "--taxa" ? 4 : 20) || v > 100000) {
                std::fprintf(stderr, "mmgp-gpu-likelihood: %s: expected an integer in [%d, 100000]\n", arg.c_str(), arg == "--taxa" ? 4 : 20);
                return 2;
            }
            (arg == "--taxa" ? taxa : sites) = static_cast<std::size_t>(v);
        } else {
            std::fprintf(stderr, "mmgp-gpu-likelihood: unknown argument \"%s\" (usage: mmgp-gpu-likelihood [--taxa N] [--sites N])\n", arg.c_str());
            return 2;
        }
    }
    if (O::device_slice::usable_devices() == 0) {
        std::printf("SKIP mmgp-gpu-likelihood: no usable GPU\n");
        return 77;
    }
    K::alignment a = K::simulate_alignment(taxa, sites, 21);
    a.rows[1][3] = 'N', a.rows[2][4] = '-', a.rows[3][5] = 'R', a.rows[0][6] = 'Y';
    const K::tree t = K::random_tree(taxa, 5);
    std::vector<unsigned> w(sites);
    std::mt19937_64 rng(3);
    std::uniform_int_distribution<std::size_t> pick(0, sites - 1);
    for (std::size_t i = 0; i < sites; ++i) ++w[pick(rng)];
    const int sms = O::device_slice::multiprocessors();
    const std::size_t lo = sites / 10, hi = sites - sites / 20;  // a slice inside the alignment, as a process's share
    int status = 0;
    for (const auto& [nk, name] : O::newview_kernels) {
        for (int blocks : {1, 7, sms, 4 * sms}) {
            const tally r = walk(a, t, w, lo, hi, blocks, nk);
            std::printf("%s p=%d, newview by %s: %ld values of %zu taxa x %zu sites, largest relative difference from "
                        "libpll %.3g\n",
                        r.failed == 0 && r.compared > 0 ? "ok  " : "FAIL", blocks, name, r.compared, taxa, hi - lo, r.worst);
            if (r.failed > 0 || r.compared == 0) status = 1;
        }
        for (int blocks : {1, sms}) {
            const tally r = units(a, t, lo, hi, blocks, nk);
            std::printf("%s p=%d, newview by %s: the bootstrap program's %ld units through the off-load seam, largest "
                        "relative difference from libpll %.3g\n",
                        r.failed == 0 && r.compared > 0 ? "ok  " : "FAIL", blocks, name, r.compared, r.worst);
            if (r.failed > 0 || r.compared == 0) status = 1;
        }
    }
    return status;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "mmgp-gpu-likelihood: %s\n", e.what());
        return 1;
    }
}
