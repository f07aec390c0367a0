// The off-loaded likelihood kernels on a GPU: one process's share of the sites in device memory, every off-load a
// grid of p blocks of 256 threads over those sites (a thread a site at a time, the sums reduced per block and the
// blocks' partial sums added on the host in block order). The arithmetic is likelihood_site.hpp's, the layout
// host_reference.hpp's. C++17 without CUDA's headers: host code includes it, device_slice.cu implements it.
// Called by the GPU check program (likelihood_check.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "cuda/likelihood_site.hpp"
#include "model_arrays.hpp"

namespace mmgp::offload {

/// What a slice's kernels took on the device (CUDA events, when timed) and the bytes copied either way. A timed
/// call's span runs from an event recorded before its first launch to one after its last, so it holds the launch's
/// own latency too; `times()` takes off one empty grid's span (timed the same way) per call.
struct kernel_times {
    double split_s = 0;    ///< the grids of p blocks: newview, evaluate, sumtable, derivatives
    double serial_s = 0;   ///< the P-matrix updates (one grid whatever p)
    long long bytes = 0;   ///< host <-> device: indices, branch lengths, weights, the blocks' partial sums
    long long split_calls = 0, serial_calls = 0;  ///< timed calls
    double span_overhead_s = 0;  ///< one empty grid's span, taken off every timed call (in times())
};

/// How newview's threads of a site agree whether to scale it: through shared memory with barriers, or by warp
/// shuffles with 16-byte loads and stores (rate categories a power of two, at most site::max_rates: the default
/// where the model's are, the faster on an H200).
enum class newview_kernel { shared_memory, warp_shuffle };
/// Each of them, with the name the device check and the benchmark print.
inline constexpr std::pair<newview_kernel, const char*> newview_kernels[] = {{newview_kernel::shared_memory, "shared memory"},
                                                                             {newview_kernel::warp_shuffle, "warp shuffles"}};

class device_slice {
public:
    /// `tip_masks[t][s]`: tip t's state set at site s of the slice (pll_map_nt's bit mask); `edges` P matrices;
    /// `blocks`: p, the grid of every off-load. Throws mmgp::failure when CUDA fails.
    device_slice(const std::vector<std::vector<unsigned char>>& tip_masks, const kernels::model_arrays& m, std::size_t edges,
                 int blocks);
    ~device_slice();
    device_slice(const device_slice&) = delete;
    device_slice& operator=(const device_slice&) = delete;

    void set_blocks(int blocks);
    int blocks() const;
    /// The slice's own sites' weights (not the whole alignment's).
    void set_weights(const unsigned* slice_weights);
    void update_matrices(const unsigned* matrices, const double* lengths, std::size_t count);
    void update_partials(const std::vector<site::partial_op>& ops);
    /// newview's kernel from now on; false (and shared_memory taken) where warp_shuffle cannot take the model's rate
    /// categories.
    bool set_newview_kernel(newview_kernel k);
    double edge_loglik(int inner, int other, unsigned matrix);
    void update_sumtable(int inner, int other);
    std::array<double, 2> derivatives(int inner, int other, double t);

    /// Times every call's kernels with CUDA events from now on (off by default: events cost the host time); the
    /// first call measures the span of an empty grid timed the same way (the median of 50).
    void time_kernels(bool on);
    /// The kernels' time so far, each call's span less the empty grid's (never below 0).
    kernel_times times() const;
    /// One empty grid's round trip on this slice's context (launch and synchronise), the median of `reps`.
    double empty_roundtrip(int reps) const;
    /// The device memory's bandwidth as a device-to-device copy of `bytes` moves it (bytes read + bytes written per
    /// second, the best of 5 copies timed by CUDA events): the physical reference of the kernels' speed.
    static double copy_bandwidth(std::size_t bytes);
    /// How this process's host thread waits for its grids, set before its first device_slice opens the context:
    /// blocked in the driver (`block`, the core yielded) or spinning. Throws mmgp::failure when CUDA refuses.
    static void set_host_wait(bool block);
    /// Devices CUDA can use here (0: none, or no driver); the multiprocessors of device 0.
    static int usable_devices();
    static int multiprocessors();

private:
    struct impl;
    std::unique_ptr<impl> d_;
};

/// The alignment's weights (one per site of the whole alignment) given to a slice of sites [lo, hi): its own
/// (slice_offloader's weights off-load).
inline void set_alignment_weights(device_slice& s, const unsigned* all_sites, std::size_t lo) { s.set_weights(all_sites + lo); }

}  // namespace mmgp::offload
