// The cluster communication term: stage counts, table interpolation and the latency-bandwidth fit (the
// evaluator calls it; it calls the NNLS solver).
#include "model/comm.hpp"
#include "base/nnls.hpp"

#include <Eigen/Dense>
#include <bit>
#include <cmath>

namespace mmgp::detail {

int ceil_log2(long long x) noexcept {
    return x <= 1 ? 0 : static_cast<int>(std::bit_width(static_cast<unsigned long long>(x - 1)));
}

stages stage_counts(primitive prim, int nodes, int ppn) noexcept {
    stages s;
    switch (prim) {
        case primitive::sendrecv:
            if (nodes > 1)
                s.inter = 1;
            else if (ppn > 1)
                s.intra = 1;
            break;
        case primitive::alltoall:
            s.intra = ppn - 1;
            s.inter = static_cast<double>(nodes - 1) * ppn;
            break;
        default:  // tree collectives: a binomial tree inside the node, then across nodes
            s.intra = ceil_log2(ppn);
            s.inter = ceil_log2(nodes);
            break;
    }
    return s;
}

double model_cost(const comm_model& m, primitive prim, int nodes, int ppn, double bytes) noexcept {
    stages s = stage_counts(prim, nodes, ppn);
    return s.intra * (m.intra.latency_s + m.intra.s_per_byte * bytes) +
           s.inter * (m.inter.latency_s + m.inter.s_per_byte * bytes);
}

std::optional<double> table_cost(const std::vector<comm_table>& tables, primitive prim, int nodes, int ppn,
                                 double bytes) noexcept {
    for (const auto& t : tables) {
        if (t.prim != prim || t.nodes != nodes || t.ppn != ppn || t.points.empty()) continue;
        const auto& pts = t.points;
        if (bytes < pts.front().bytes || bytes > pts.back().bytes) return std::nullopt;
        for (std::size_t i = 0; i + 1 < pts.size(); ++i) {
            if (bytes <= pts[i + 1].bytes) {
                double w = (bytes - pts[i].bytes) / (pts[i + 1].bytes - pts[i].bytes);
                return pts[i].seconds + w * (pts[i + 1].seconds - pts[i].seconds);
            }
        }
        return pts.back().seconds;  // single point, bytes equal to it
    }
    return std::nullopt;
}

std::optional<comm_model> fit_comm_model(primitive prim, const std::vector<comm_table>& tables) {
    // Rows: one per measured point; columns: intra stages, intra stages * bytes, inter stages,
    // inter stages * bytes. Rows are divided by the measured time (relative least squares).
    std::vector<std::array<double, 4>> rows;
    std::vector<double> rhs;
    for (const auto& t : tables) {
        if (t.prim != prim) continue;
        stages s = stage_counts(prim, t.nodes, t.ppn);
        if (s.intra == 0 && s.inter == 0) continue;
        for (const auto& pt : t.points) {
            if (!(pt.seconds > 0)) continue;
            double w = 1.0 / pt.seconds;
            rows.push_back({s.intra * w, s.intra * pt.bytes * w, s.inter * w, s.inter * pt.bytes * w});
            rhs.push_back(1.0);
        }
    }
    if (rows.empty()) return std::nullopt;
    const int n = static_cast<int>(rows.size());
    Eigen::MatrixXd X(n, 4);
    Eigen::VectorXd y(n);
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < 4; ++j) X(i, j) = rows[i][j];
        y(i) = rhs[i];
    }
    // Columns that are identically zero cannot be identified.
    bool present[4];
    std::vector<bool> usable(4);
    for (int j = 0; j < 4; ++j) usable[static_cast<std::size_t>(j)] = present[j] = X.col(j).cwiseAbs().maxCoeff() > 0;
    Eigen::VectorXd best;
    if (!nnls_small(X, y, usable, best)) return std::nullopt;
    comm_model m;
    m.intra = {best(0), best(1)};
    m.inter = {best(2), best(3)};
    m.has_intra = present[0];
    m.has_inter = present[2];
    return m;
}

comm_models models_for(const platform& pl, const std::vector<comm_pattern>& patterns) {
    comm_models out;
    for (const auto& [prim, model] : pl.comm_models) out[static_cast<std::size_t>(prim)] = model;
    for (const comm_pattern& cp : patterns) {
        auto& model = out[static_cast<std::size_t>(cp.prim)];
        if (!model) model = fit_comm_model(cp.prim, pl.comm_tables);
    }
    return out;
}

}  // namespace mmgp::detail
