// The off-load runtime's seam (kernels::detail::offloader) over the GPU kernels' interface: one process's off-loads
// as calls on one slice of its sites, every call a grid of p blocks on the device (device_slice) or the same
// per-site arithmetic on the host (host_slice). Each request does what an APU's setup and compute do on libpll
// (workload_bootstrap.cpp's phylo_slice): the P matrices every APU repeats, then newview, evaluate, the sumtable,
// the derivatives or the site weights; the reply is the slice's sum (no per-APU parts to add). The bootstrap
// program runs unchanged on it. Used by the kernels tests (the host twin against libpll_offloader, below,
// tests/offload) and by mmgp-gpu-likelihood (on the device).
#pragma once

#include <cstddef>
#include <stdexcept>

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
