// The off-load runtime's seam (kernels::detail::offloader) over the GPU kernels' interface: one process's off-loads
// as calls on one slice of its sites, every call a grid of p blocks on the device (device_slice) or the same
// per-site arithmetic on the host (host_slice). Each request does what an APU's setup and compute do on libpll
// (workload_bootstrap.cpp's phylo_slice): the P matrices every APU repeats, then newview, evaluate, the sumtable,
// the derivatives or the site weights; the reply is the slice's sum (no per-APU parts to add). The bootstrap
// program runs unchanged on it. Used by the kernels tests (the host twin against libpll_offloader, below,
// tests/offload), by mmgp-gpu-likelihood (on the device) and, owning its slice, by the runtime's processes
// (cuda_accelerator.cpp; host_twin_accelerator below).
#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <utility>

#include "cuda/host_reference.hpp"
#include "runtime_internal.hpp"

namespace mmgp::offload {

/// The alignment's weights (request k_weights: one per site of the whole alignment) given to a slice of sites
/// [lo, hi): host_slice takes the whole array; a slice whose set_weights takes its own sites' (device_slice) is
/// given them by its overload beside it.
inline void set_alignment_weights(host_slice& s, const unsigned* all_sites, std::size_t /*lo*/) { s.set_weights(all_sites); }

template <class Slice>
class slice_offloader final : public kernels::detail::offloader {
public:
    /// `slice`: the process's sites [lo, hi) of the alignment (kept by reference).
    slice_offloader(Slice& slice, std::size_t lo) : s_(slice), lo_(lo) {}

    kernels::detail::reply offload(const kernels::detail::request& r) override {
        namespace d = kernels::detail;
        d::reply out;
        switch (r.kind) {
            case d::k_weights: set_alignment_weights(s_, static_cast<const unsigned*>(r.data), lo_); break;
            case d::k_newview: {
                const auto* b = static_cast<const kernels::newview_batch*>(r.data);
                s_.update_matrices(b->matrices.data(), b->lengths.data(), b->matrices.size());
                s_.update_partials(to_partial_ops(b->ops.data(), b->ops.size()));
                break;
            }
            case d::k_evaluate:
                s_.update_matrices(&r.matrix, &r.x, 1);
                out.v[0] = s_.edge_loglik(r.a, r.b, r.matrix);
                break;
            case d::k_sumtable: s_.update_sumtable(r.a, r.b); break;
            case d::k_derivatives: {
                const auto dv = s_.derivatives(r.a, r.b, r.x);
                out.v[0] = dv[0];
                out.v[1] = dv[1];
                break;
            }
            default: throw std::logic_error("slice_offloader: an off-load kind the likelihood kernels do not have");
        }
        return out;
    }

private:
    Slice& s_;
    std::size_t lo_;
};

/// A slice_offloader that owns its slice of the whole alignment: what a process accelerator makes for each process
/// (kernels::run_processes), one over device_slice on a GPU, one over host_slice for the runtime's tests. Timed,
/// it reports what the slice's kernels took: a device_slice's own times (CUDA events), how often the host waited
/// for them and one empty grid's round trip; a host_slice's calls by the host's clock, all of it as split work.
template <class Slice>
class owned_slice_offloader final : public kernels::detail::offloader {
public:
    explicit owned_slice_offloader(std::unique_ptr<Slice> slice, bool timed = false)
        : s_(std::move(slice)), off_(*s_, 0), timed_(timed) {
        if constexpr (has_device_times) {
            s_->time_kernels(timed);
            if (timed) empty_ = s_->empty_roundtrip(200);
        }
    }
    kernels::detail::reply offload(const kernels::detail::request& r) override {
        if (has_device_times || !timed_) return off_.offload(r);
        const double t0 = kernels::detail::now();
        const kernels::detail::reply out = off_.offload(r);
        host_split_ += kernels::detail::now() - t0;
        return out;
    }
    void add_times(kernels::timers& t) const override {
        if (!timed_) return;
        double split = host_split_, serial = 0;
        if constexpr (has_device_times) {
            const auto kt = s_->times();
            split = kt.split_s, serial = kt.serial_s;
            t.bytes += kt.bytes;
            t.empty_roundtrip_s += empty_;
            t.device_waits += kt.split_calls + kt.serial_calls;  // one per launched(): the host waits for its grids
        }
        t.apu_split_s += split, t.apu_serial_s += serial, t.apu_busy_s += split + serial;
    }

private:
    static constexpr bool has_device_times = requires(Slice& s) { s.times(); };
    std::unique_ptr<Slice> s_;
    slice_offloader<Slice> off_;
    bool timed_;
    double host_split_ = 0, empty_ = 0;
};

/// The model's arrays after libpll's eigendecomposition (the same for every slice: taken from one site's).
inline kernels::model_arrays arrays_of(const kernels::alignment& a, const kernels::model& m) {
    return kernels::site_slice(a, m, 0, 1).arrays();
}

/// The GPU kernels' host twin as the runtime's accelerator: every process's off-loads through host_slice, the
/// per-site arithmetic the device runs (timed: by the host's clock). It checks run_processes, the seam and the
/// processes' profile without a GPU (tests/offload).
inline kernels::process_accelerator host_twin_accelerator(bool timed = false) {
    return {"host-twin", [timed](const kernels::alignment& a, const kernels::model& m, const kernels::tree& t, int) {
                return std::unique_ptr<kernels::detail::offloader>(std::make_unique<owned_slice_offloader<host_slice>>(
                    std::make_unique<host_slice>(a, arrays_of(a, m), 0, a.sites(), t.edges()), timed));
            }};
}

/// The reference: libpll's off-loads done in order on one slice of sites [lo, hi), what one APU's setup and compute
/// do in the CPU runtime.
class libpll_offloader final : public kernels::detail::offloader {
public:
    libpll_offloader(const kernels::alignment& a, const kernels::model& m, std::size_t lo, std::size_t hi)
        : s_(a, m, lo, hi) {}
    kernels::detail::reply offload(const kernels::detail::request& r) override {
        kernels::detail::reply out;
        s_.setup(r);
        s_.compute(r, out);
        return out;
    }

private:
    kernels::detail::phylo_slice s_;
};

}  // namespace mmgp::offload
