// The phylogenetic workload of the off-load runtime: the bootstrap search on the host (control logic) and the
// libpll site slice each APU computes its share of an off-loaded likelihood call on.
#include "runtime_internal.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

namespace mmgp::kernels::detail {

void phylo_slice::setup(const request& r) {
    if (r.kind == k_newview) {
        const auto* b = static_cast<const newview_batch*>(r.data);
        s_.update_matrices(b->matrices.data(), b->lengths.data(), b->matrices.size());
    } else if (r.kind == k_evaluate) {
        s_.update_matrices(&r.matrix, &r.x, 1);
    }
}

void phylo_slice::setup_copy(const apu_slice& first, const request& r) {
    const site_slice& from = static_cast<const phylo_slice&>(first).s_;
    if (r.kind == k_newview) {
        const auto* b = static_cast<const newview_batch*>(r.data);
        s_.copy_matrices(from, b->matrices.data(), b->matrices.size());
    } else if (r.kind == k_evaluate) {
        s_.copy_matrices(from, &r.matrix, 1);
    }
}

void phylo_slice::compute(const request& r, reply& out) {
    switch (r.kind) {
        case k_weights: s_.set_weights(static_cast<const unsigned*>(r.data)); break;
        case k_newview: {
            const auto* b = static_cast<const newview_batch*>(r.data);
            s_.update_partials(b->ops.data(), b->ops.size());
            break;
        }
        case k_evaluate: out.v[0] = s_.edge_loglik(r.a, r.b, r.matrix); break;
        case k_sumtable: s_.update_sumtable(r.a, r.b); break;
        case k_derivatives: {
            auto d = s_.derivatives(r.a, r.b, r.x);
            out.v[0] = d[0];
            out.v[1] = d[1];
            break;
        }
        default: throw std::logic_error("phylo_slice: unknown off-load kind");
    }
}

bootstrap_search::bootstrap_search(const tree& start, std::size_t sites, int rounds, int newton, std::uint64_t seed)
    : start_(start), sites_(sites), rounds_(rounds), newton_(newton), seed_(seed), orient_(start) {
    // depth-first edge order from tip 0, so that consecutive edges are mostly adjacent
    depth_first_edges(start_, 0, [this](int, int, int e) { order_.push_back(e); });
}

double bootstrap_search::run_unit(int unit, offloader& off) {
    std::mt19937_64 rng(seed_ * 1000003ULL + static_cast<std::uint64_t>(unit) * 7919ULL + 17);
    // bootstrap resampling of the sites
    weights_.assign(sites_, 0);
    std::uniform_int_distribution<std::size_t> site(0, sites_ - 1);
    for (std::size_t s = 0; s < sites_; ++s) ++weights_[site(rng)];
    request rq;
    rq.kind = k_weights;
    rq.data = weights_.data();
    off.offload(rq);
    // proposed branch lengths
    tree t = start_;
    std::exponential_distribution<double> blen(10.0);
    for (double& l : t.length) l = std::clamp(blen(rng), 1e-4, 2.0);
    orient_.invalidate();
    double lnl = 0;
    bool have_lnl = false;
    for (int r = 0; r < rounds_; ++r) {
        for (int e : order_) {
            auto [a, b] = t.ends[static_cast<std::size_t>(e)];
            if (t.is_tip(a)) std::swap(a, b);
            batch_.ops.clear();
            batch_.matrices.clear();
            batch_.lengths.clear();
            orient_.orient(t, a, b, batch_);
            orient_.orient(t, b, a, batch_);
            if (!batch_.ops.empty()) {
                rq = request{};
                rq.kind = k_newview;
                rq.data = &batch_;
                off.offload(rq);
            }
            if (!have_lnl) {
                lnl = evaluate(off, a, b, e, t.length[static_cast<std::size_t>(e)]);
                have_lnl = true;
            }
            rq = request{};
            rq.kind = k_sumtable;
            rq.a = a;
            rq.b = b;
            off.offload(rq);
            double x = t.length[static_cast<std::size_t>(e)];
            for (int k = 0; k < newton_; ++k) {
                rq.kind = k_derivatives;
                rq.x = x;
                reply d = off.offload(rq);
                double nx;
                if (d.v[1] < 0) nx = x - d.v[0] / d.v[1];
                else nx = d.v[0] > 0 ? 2 * x : 0.5 * x;
                nx = std::clamp(nx, 1e-6, 10.0);
                bool done = std::fabs(nx - x) < 1e-7;
                x = nx;
                if (done) break;
            }
            double nl = evaluate(off, a, b, e, x);
            if (nl >= lnl - 1e-7) {
                t.length[static_cast<std::size_t>(e)] = x;
                lnl = nl;
            }
            // else: keep the old length (the CLVs pointing at this edge do not depend on it)
        }
    }
    return lnl;
}

double bootstrap_search::evaluate(offloader& off, int a, int b, int e, double x) {
    request rq;
    rq.kind = k_evaluate;
    rq.a = a;
    rq.b = b;
    rq.matrix = static_cast<unsigned>(e);
    rq.x = x;
    return off.offload(rq).v[0];
}

}  // namespace mmgp::kernels::detail
