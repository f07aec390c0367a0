// mmgp-bench-gpu: the GPU's newview kernel against the physical limit. For 10^4, 10^5 and 10^6 sites (24 taxa,
// GTR+G4, simulated), every inner CLV of a full post-order traversal is recomputed on the device
// (device_slice::update_partials, one grid per operation) at p = SMs, 2 SMs, 4 SMs and 8 SMs blocks, 7 times each;
// the kernels' device time (CUDA events) gives the bytes newview must move per second: each operation reads two
// children's CLVs and writes the parent's (sites x rates x 4 doubles each) and their scalers (4 bytes a site, for
// inner nodes). That is reported against the device memory's bandwidth as a device-to-device copy measures it in
// the same run (device_slice::copy_bandwidth). Prints one line per size and newview kernel (device_slice's
// newview_kernel: the threads of a site agreeing through shared memory, or by warp shuffles), the median of the 7
// passes at the best p, and exits 0; 77 where no GPU is usable. Run by scripts/gpu-check.sh.
#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "cuda/device_slice.hpp"
#include "cuda/host_reference.hpp"
#include "cuda/slice_offloader.hpp"
#include "kernels.hpp"

namespace K = mmgp::kernels;
namespace O = mmgp::offload;

namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The bytes one newview operation moves per site: two children's CLVs read, the parent's written, and the scalers
// of the inner nodes among them (read for children, written for the parent).
double bytes_per_site(const O::partial_op& o, std::size_t tips, std::size_t span) {
    double b = 3.0 * static_cast<double>(span) * sizeof(double);
    for (int child : {o.child1, o.child2})
        if (static_cast<std::size_t>(child) >= tips) b += sizeof(unsigned);
    if (o.parent_scaler >= 0) b += sizeof(unsigned);
    return b;
}

// The best rate of `ops` (moving `bytes` a pass) over grids of SMs to 8 SMs blocks, and its p: the median of 7
// passes after a warm-up at each.
std::pair<double, int> best_rate(O::device_slice& dev, const std::vector<O::partial_op>& ops, double bytes, int sms) {
    double best = 0;
    int best_p = 0;
    for (int k : {1, 2, 4, 8}) {
        dev.set_blocks(k * sms);
        dev.update_partials(ops);  // warm-up
        std::vector<double> pass;
        for (int r = 0; r < 7; ++r) {
            const double before = dev.times().split_s;
            dev.update_partials(ops);
            pass.push_back(dev.times().split_s - before);
        }
        const double rate = bytes / median(pass);
        if (rate > best) best = rate, best_p = k * sms;
    }
    return {best, best_p};
}

}  // namespace

int main() {
    try {
        if (O::device_slice::usable_devices() == 0) {
            std::printf("SKIP mmgp-bench-gpu: no usable GPU\n");
            return 77;
        }
        const int sms = O::device_slice::multiprocessors();
        const double copy = O::device_slice::copy_bandwidth(std::size_t{1} << 30);
        std::printf("device-to-device copy: %.1f GB/s (read + write, 1 GiB, best of 5); %d SMs\n", copy * 1e-9, sms);
        for (std::size_t sites : {std::size_t{10000}, std::size_t{100000}, std::size_t{1000000}}) {
            const std::size_t taxa = 24;
            const K::alignment a = K::simulate_alignment(taxa, sites, 11);
            const K::tree t = K::random_tree(taxa, 3);
            const K::model m = K::default_model(a);
            const K::model_arrays arrays = O::arrays_of(a, m);
            O::device_slice dev(O::tip_masks(a, 0, sites), arrays, t.edges(), sms);
            std::vector<unsigned> idx(t.edges());
            for (std::size_t e = 0; e < idx.size(); ++e) idx[e] = static_cast<unsigned>(e);
            dev.update_matrices(idx.data(), t.length.data(), idx.size());
            K::orientation o(t);
            K::newview_batch batch;
            auto [in, ot] = t.ends[0];
            o.orient(t, in, ot, batch);
            o.orient(t, ot, in, batch);
            const std::vector<O::partial_op> ops = O::to_partial_ops(batch.ops.data(), batch.ops.size());
            const std::size_t span = arrays.rates.size() * 4;
            double bytes = 0;
            for (const auto& op : ops) bytes += bytes_per_site(op, taxa, span) * static_cast<double>(sites);
            dev.time_kernels(true);
            for (const auto& [nk, name] : O::newview_kernels) {
                if (!dev.set_newview_kernel(nk)) continue;
                const auto [rate, best_p] = best_rate(dev, ops, bytes, sms);
                // A pass's CLVs may fit in the device's L2 cache at the smaller sizes: then the rate is not the
                // device memory's and may pass 100 % of the copy's (the 10^6-site row is the one against the
                // physical limit).
                std::printf("newview by %s, %zu sites: %.1f GB/s at p = %d (%zu operations, %.3g MB each pass), %.0f %% of "
                            "the copy's bandwidth%s\n", name, sites, rate * 1e-9, best_p, ops.size(), bytes * 1e-6,
                            100 * rate / copy, sites < 1000000 ? " (its CLVs may sit in L2)" : "");
            }
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "mmgp-bench-gpu: %s\n", e.what());
        return 1;
    }
}
