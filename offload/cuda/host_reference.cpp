// The GPU kernels' arithmetic on the host (host_reference.hpp): the same per-site functions as the CUDA kernels
// (likelihood_site.hpp), one site after the other.
#include "cuda/host_reference.hpp"

#include <algorithm>
#include <stdexcept>

namespace mmgp::offload {

std::vector<partial_op> to_partial_ops(const pll_operation* ops, std::size_t count) {
    std::vector<partial_op> out;
    out.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
        const pll_operation& o = ops[i];
        out.push_back({static_cast<int>(o.parent_clv_index), o.parent_scaler_index, static_cast<int>(o.child1_clv_index),
                       static_cast<int>(o.child1_matrix_index), o.child1_scaler_index, static_cast<int>(o.child2_clv_index),
                       static_cast<int>(o.child2_matrix_index), o.child2_scaler_index});
    }
    return out;
}

std::vector<std::vector<unsigned char>> tip_masks(const kernels::alignment& a, std::size_t lo, std::size_t hi) {
    std::vector<std::vector<unsigned char>> out(a.taxa());
    for (std::size_t t = 0; t < a.taxa(); ++t)
        for (std::size_t s = lo; s < hi; ++s)
            out[t].push_back(static_cast<unsigned char>(pll_map_nt[static_cast<unsigned char>(a.rows[t][s])]));
    return out;
}

slice_buffers::slice_buffers(const kernels::alignment& al, const kernels::model_arrays& m, std::size_t lo,
                             std::size_t hi, std::size_t edges)
    : sites(hi - lo), tips(al.taxa()), rate_cats(m.rates.size()), model(m) {
    if (lo >= hi || hi > al.sites() || tips < 3) throw std::logic_error("slice_buffers: empty or out-of-range site range");
    if (rate_cats == 0 || rate_cats > static_cast<std::size_t>(site::max_rates) || m.rate_weights.size() != rate_cats)
        throw std::logic_error("slice_buffers: 1 to 16 rate categories, each with its weight");
    const std::size_t nodes = 2 * tips - 2;
    clv.assign(nodes * sites * clv_span(), 0.0);
    const std::vector<std::vector<unsigned char>> masks = tip_masks(al, lo, hi);
    for (std::size_t t = 0; t < tips; ++t)
        for (std::size_t s = 0; s < sites; ++s) {
            const unsigned mask = masks[t][s];
            for (std::size_t r = 0; r < rate_cats; ++r)
                for (int k = 0; k < site::states; ++k)
                    clv[(t * sites + s) * clv_span() + r * site::states + static_cast<std::size_t>(k)] = site::tip_entry(mask, k);
        }
    scalers.assign((tips - 2) * sites, 0);
    pmatrices.assign(edges * pmatrix_span(), 0.0);
    weights.assign(sites, 1);
    sumtable.assign(sites * clv_span(), 0.0);
}

site::model_view slice_buffers::view() const {
    return {model.inv_eigenvecs.data(), model.eigenvecs.data(), model.eigenvals.data(), model.freqs.data(),
            model.rates.data(), model.rate_weights.data(), static_cast<int>(rate_cats)};
}

void host_slice::set_weights(const unsigned* all_sites) { std::copy(all_sites + lo_, all_sites + lo_ + b_.sites, b_.weights.begin()); }

void host_slice::update_matrices(const unsigned* matrices, const double* lengths, std::size_t count) {
    const site::model_view m = b_.view();
    for (std::size_t i = 0; i < count; ++i) {
        double* p = b_.pmatrices.data() + matrices[i] * b_.pmatrix_span();
        for (int r = 0; r < m.rate_cats; ++r)
            for (int row = 0; row < site::states; ++row)
                for (int col = 0; col < site::states; ++col)
                    p[(r * site::states + row) * site::states + col] = site::pmatrix_entry(m, lengths[i], r, row, col);
    }
}

unsigned host_slice::scaling(int node, std::size_t s) const {
    return static_cast<std::size_t>(node) < b_.tips ? 0u : b_.scalers[(static_cast<std::size_t>(node) - b_.tips) * b_.sites + s];
}

void host_slice::update_partials(const std::vector<partial_op>& ops) {
    const std::size_t span = b_.clv_span();
    for (const partial_op& o : ops) {
        const double* p1 = b_.pmatrices.data() + static_cast<std::size_t>(o.child1_matrix) * b_.pmatrix_span();
        const double* p2 = b_.pmatrices.data() + static_cast<std::size_t>(o.child2_matrix) * b_.pmatrix_span();
        double* parent = b_.clv.data() + static_cast<std::size_t>(o.parent) * b_.sites * span;
        for (std::size_t s = 0; s < b_.sites; ++s) {
            const unsigned scaled = site::newview_site(static_cast<int>(b_.rate_cats), p1, clv(o.child1) + s * span, p2,
                                                       clv(o.child2) + s * span, parent + s * span);
            if (o.parent_scaler >= 0)
                b_.scalers[static_cast<std::size_t>(o.parent_scaler) * b_.sites + s] =
                    scaling(o.child1, s) + scaling(o.child2, s) + scaled;
        }
    }
}

double host_slice::edge_loglik(int inner, int other, unsigned matrix) const {
    const site::model_view m = b_.view();
    const double* pm = b_.pmatrices.data() + matrix * b_.pmatrix_span();
    const std::size_t span = b_.clv_span();
    double sum = 0;
    for (std::size_t s = 0; s < b_.sites; ++s)
        sum += b_.weights[s] * site::edge_site(m, pm, clv(inner) + s * span, clv(other) + s * span,
                                               scaling(inner, s) + scaling(other, s));
    return sum;
}

void host_slice::update_sumtable(int inner, int other) {
    const site::model_view m = b_.view();
    const std::size_t span = b_.clv_span();
    for (std::size_t s = 0; s < b_.sites; ++s)
        site::sumtable_site(m, clv(inner) + s * span, clv(other) + s * span, b_.sumtable.data() + s * span);
}

std::array<double, 2> host_slice::derivatives(int, int, double t) const {
    const site::model_view m = b_.view();
    double d1 = 0, d2 = 0;
    for (std::size_t s = 0; s < b_.sites; ++s) {
        double f = 0, g = 0;
        site::derivatives_site(m, b_.sumtable.data() + s * b_.clv_span(), t, f, g);
        d1 += b_.weights[s] * f;
        d2 += b_.weights[s] * g;
    }
    return {d1, d2};
}

}  // namespace mmgp::offload
