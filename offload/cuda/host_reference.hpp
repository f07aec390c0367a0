// The GPU kernels' arithmetic run on the host: one process's share of the sites in the device's layout
// (offload/cuda/likelihood_site.hpp), with site_slice's interface, so that the code the GPU runs site by site is
// checked against libpll on any machine (tests/offload/test_kernels.cpp), and a device's results against this
// (the gpu suite). Called by the tests and by the GPU check program (offload/cuda/likelihood_check.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <utility>
#include <vector>

#include "kernels.hpp"
#include "cuda/likelihood_site.hpp"

namespace mmgp::offload {

using site::partial_op;
/// Each tip's state sets (pll_map_nt's bit masks) at the sites [lo, hi) of an alignment: tip_masks[t][s].
std::vector<std::vector<unsigned char>> tip_masks(const kernels::alignment& a, std::size_t lo, std::size_t hi);
/// libpll's operations as partial_ops.
std::vector<partial_op> to_partial_ops(const pll_operation* ops, std::size_t count);

/// The buffers of one slice [lo, hi) in the device's layout: a CLV per node (tips: indicators of their
/// characters), a scaler per inner node, the P matrices per edge, the site weights and a sumtable.
struct slice_buffers {
    slice_buffers(const kernels::alignment& a, const kernels::model_arrays& m, std::size_t lo, std::size_t hi,
                  std::size_t edges);
    std::size_t sites, tips, rate_cats;
    std::vector<double> clv;         ///< node-major: [node][site][rate][4]
    std::vector<unsigned> scalers;   ///< [inner node - tips][site]
    std::vector<double> pmatrices;   ///< [edge][rate][4][4]
    std::vector<unsigned> weights;   ///< [site]
    std::vector<double> sumtable;    ///< [site][rate][4]
    kernels::model_arrays model;
    std::size_t clv_span() const { return rate_cats * site::states; }
    std::size_t pmatrix_span() const { return rate_cats * site::states * site::states; }
    site::model_view view() const;
};

/// site_slice's operations on slice_buffers, each site through likelihood_site.hpp's functions.
class host_slice {
public:
    host_slice(const kernels::alignment& a, const kernels::model_arrays& m, std::size_t lo, std::size_t hi,
               std::size_t edges)
        : b_(a, m, lo, hi, edges), lo_(lo) {}
    void set_weights(const unsigned* all_sites);
    void update_matrices(const unsigned* matrices, const double* lengths, std::size_t count);
    void update_partials(const std::vector<partial_op>& ops);
    double edge_loglik(int inner, int other, unsigned matrix) const;
    void update_sumtable(int inner, int other);
    std::array<double, 2> derivatives(int inner, int other, double t) const;
    const slice_buffers& buffers() const { return b_; }

private:
    const double* clv(int node) const { return b_.clv.data() + static_cast<std::size_t>(node) * b_.sites * b_.clv_span(); }
    unsigned scaling(int node, std::size_t site) const;
    slice_buffers b_;
    std::size_t lo_;
};

/// The bootstrap program's walk over every edge of `t` in turn (its CLVs at both ends made valid through the
/// orientation, the P matrices recomputed, evaluate, the sumtable, the derivatives at three branch lengths), done
/// on libpll (`ref`) and on the GPU's code (`other`: host_slice or device_slice); `compare(value, libpll's, what,
/// edge)` for every log-likelihood and derivative.
template <class Other, class Compare>
void compare_walk(const kernels::tree& t, kernels::site_slice& ref, Other& other, Compare&& compare) {
    kernels::orientation o(t);
    for (std::size_t e = 0; e < t.edges(); ++e) {
        auto [in, ot] = t.ends[e];
        if (t.is_tip(in)) std::swap(in, ot);
        kernels::newview_batch batch;
        o.orient(t, in, ot, batch);
        o.orient(t, ot, in, batch);
        const unsigned mi = static_cast<unsigned>(e);
        batch.matrices.push_back(mi);
        batch.lengths.push_back(t.length[e]);
        ref.update_matrices(batch.matrices.data(), batch.lengths.data(), batch.matrices.size());
        other.update_matrices(batch.matrices.data(), batch.lengths.data(), batch.matrices.size());
        ref.update_partials(batch.ops.data(), batch.ops.size());
        other.update_partials(to_partial_ops(batch.ops.data(), batch.ops.size()));
        compare(other.edge_loglik(in, ot, mi), ref.edge_loglik(in, ot, mi), "log-likelihood", e);
        ref.update_sumtable(in, ot);
        other.update_sumtable(in, ot);
        for (double x : {0.01, 0.13, 0.7}) {
            const auto want = ref.derivatives(in, ot, x), got = other.derivatives(in, ot, x);
            compare(got[0], want[0], "first derivative", e);
            compare(got[1], want[1], "second derivative", e);
        }
    }
}

}  // namespace mmgp::offload
