// A wavefront sweep mapped accelerator-driven or host-driven (docs/MODEL.md §6). The base is the pipeline of a
// 2-D wavefront (steps = octants x blocks + fills x (Px + Py - 2)); the machine enters through one step's time:
// the block's compute, the host-driven port's transfers, and the face messages at the hierarchy level they cross.
#include "mmgp/wavefront.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <utility>

namespace mmgp {

std::string_view to_string(wave_mapping m) noexcept {
    return m == wave_mapping::accelerator_driven ? "accelerator-driven" : "host-driven";
}

double message_time(const hierarchy_level& level, double bytes, bool host_only) noexcept {
    double t = 0;
    for (const auto& part : level.path)
        if (!host_only || part.host) t += part.latency_s + bytes * part.s_per_byte;
    return t;
}

namespace {

// The level two ranks' messages cross: the network level when their nodes differ, else the innermost level
// whose unit holds both accelerator slots. -1 when the hierarchy cannot place them.
int level_of(const hierarchy& h, std::int64_t node_a, std::int64_t slot_a, std::int64_t node_b, std::int64_t slot_b) noexcept {
    if (node_a != node_b) return h.levels.back().ranks == 0 ? static_cast<int>(h.levels.size()) - 1 : -1;
    for (std::size_t i = 0; i < h.levels.size(); ++i) {
        const std::int64_t r = h.levels[i].ranks;
        if (r > 0 && slot_a / r == slot_b / r) return static_cast<int>(i);
    }
    return -1;
}

// n = larger x smaller with the two as close as possible (the largest divisor up to the square root; at most
// 2^20 candidates are tried: a count with no divisor that close to its root, only possible far beyond any
// machine, is split 1 x n).
std::pair<std::int64_t, std::int64_t> square_split(std::int64_t n) noexcept {
    std::int64_t small = static_cast<std::int64_t>(std::sqrt(static_cast<double>(n)));
    for (int tries = 0; small > 1 && n % small != 0; ++tries) small = tries < (1 << 20) ? small - 1 : 1;
    small = std::max<std::int64_t>(small, 1);
    return {n / small, small};
}

struct crossing {
    int outermost = -2;        // -2: no pair; -1: a pair the hierarchy cannot place
    double per_level[hierarchy::max_levels] = {};  // pairs per node and step at each level
};

// The pairs (r, r + d) of one direction over one period of the layout, their outermost level and how many
// there are per node and step at each level.
crossing cross(const hierarchy& h, std::int64_t R, std::int64_t m, std::int64_t px, std::int64_t d, std::int64_t slot_width) {
    crossing out;
    // The level of (r, r + d) depends on r mod m, and for I pairs (d = 1) on r mod px: one period is lcm(m, px).
    // At most max_pairs pairs are looked at: beyond that the first ones stand for the layout's average (a period
    // that long only comes with grids of millions of ranks per row).
    constexpr std::int64_t max_pairs = 1 << 22;
    std::int64_t period = m;
    if (d == 1) {
        const std::int64_t step = m / std::gcd(m, px);
        period = px > max_pairs / step ? max_pairs : step * px;
    }
    const std::int64_t last = std::min({R - d, period, max_pairs});  // pairs r < R - d
    if (last <= 0) return out;
    for (std::int64_t r = 0; r < last; ++r) {
        if (d == 1 && r % px == px - 1) continue;  // the end of a grid row has no I neighbour
        const int lv = level_of(h, r / m, (r % m) * slot_width, (r + d) / m, ((r + d) % m) * slot_width);
        if (lv < 0) {
            out.outermost = -1;
            return out;
        }
        out.outermost = std::max(out.outermost, lv);
        out.per_level[lv] += 1;
    }
    const double nodes_in_period = static_cast<double>(last) / static_cast<double>(m);
    for (double& v : out.per_level) v /= std::max(nodes_in_period, 1.0);
    return out;
}

}  // namespace

wavefront_prediction wavefront_time(const platform& pl, const wavefront& w, wave_mapping mapping,
                                    const configuration& c) noexcept {
    wavefront_prediction out;
    const hierarchy& h = pl.hier;
    const bool acc = mapping == wave_mapping::accelerator_driven;
    if (h.empty()) return out.why = "the platform has no communication hierarchy", out;
    if (c.m < 1 || c.p < 1 || c.nodes < 1) return out.why = "m, p and nodes >= 1", out;
    if (acc && c.p != 1) return out.why = "accelerator-driven: every accelerator is a rank (p = 1)", out;
    if (static_cast<std::int64_t>(c.m) * c.p > pl.apus) return out.why = "m * p within the node's accelerators", out;
    if (!acc && !w.has_host_driven)
        return out.why = "host-driven: the wavefront's dma_s_per_cell / control_s_per_cell", out;
    const std::int64_t R = static_cast<std::int64_t>(c.m) * c.nodes;
    const auto [px, py] = square_split(R);
    out.px = static_cast<int>(px);
    out.py = static_cast<int>(py);

    // One rank's block and its faces.
    // cells_per_rank is per accelerator (weak scaling keeps the work per accelerator): a host-driven process
    // with p accelerators holds p such blocks, pi x pj of them in I and J (the most nearly square split).
    const auto [pi, pj] = square_split(acc ? 1 : c.p);
    const double ci = w.per_rank ? w.cells[0] * static_cast<double>(pi) : w.cells[0] / static_cast<double>(px);
    const double cj = w.per_rank ? w.cells[1] * static_cast<double>(pj) : w.cells[1] / static_cast<double>(py);
    const double ck = w.cells[2];
    const double cell_angles = ci * cj * w.k_block * w.angles;
    const double bytes_i = cj * w.k_block * w.angles * w.bytes_per_value;  // the face sent to the I neighbour
    const double bytes_j = ci * w.k_block * w.angles * w.bytes_per_value;
    const double t_comp = cell_angles * w.t_cell_s / (acc ? 1.0 : static_cast<double>(c.p));
    const double t_transfer = acc ? 0.0 : cell_angles * (w.dma_s_per_cell + w.control_s_per_cell);

    // The levels the faces cross: accelerator-driven ranks occupy one accelerator slot each, host-driven
    // processes p slots (their first accelerator stands for them).
    const std::int64_t slot = acc ? 1 : c.p;
    const crossing ci_x = px > 1 ? cross(h, R, c.m, px, 1, slot) : crossing{};
    const crossing cj_x = py > 1 ? cross(h, R, c.m, px, px, slot) : crossing{};
    if (ci_x.outermost == -1 || cj_x.outermost == -1)
        return out.why = "a hierarchy with a network level (a level without \"ranks\") for several nodes", out;
    out.level_i = ci_x.outermost >= 0 ? ci_x.outermost : -1;
    out.level_j = cj_x.outermost >= 0 ? cj_x.outermost : -1;
    out.message_i_s = out.level_i >= 0 ? message_time(h.levels[static_cast<std::size_t>(out.level_i)], bytes_i, !acc) : 0.0;
    out.message_j_s = out.level_j >= 0 ? message_time(h.levels[static_cast<std::size_t>(out.level_j)], bytes_j, !acc) : 0.0;

    // The host cores that forward messages over a level handle every message of their node that crosses it, one
    // at a time (both mappings: a host-driven process's faces take the same host path).
    for (std::size_t lv = 0; lv < h.levels.size(); ++lv) {
        const auto& L = h.levels[lv];
        if (L.forwarders <= 0) continue;
        // Per node and step: each message crossing the level has two ends, each costing a forwarder half its
        // host parts (both ends on this node for a level inside the node, one end on average beyond).
        const double host_i = message_time(L, bytes_i, true), host_j = message_time(L, bytes_j, true);
        out.forward_s += (ci_x.per_level[lv] * host_i + cj_x.per_level[lv] * host_j) / L.forwarders;
    }
    const double comm = std::max(out.message_i_s + out.message_j_s, out.forward_s);
    out.step_s = t_comp + t_transfer + comm;

    const double blocks = std::ceil(ck / w.k_block);
    const double work_steps = w.octants * blocks;
    const double fill_steps = w.fills * static_cast<double>(px + py - 2);
    out.compute = w.iterations * work_steps * t_comp;
    out.fill = w.iterations * fill_steps * t_comp;
    out.transfer = w.iterations * (work_steps + fill_steps) * t_transfer;
    out.communication = w.iterations * (work_steps + fill_steps) * comm;
    out.time_s = out.compute + out.fill + out.transfer + out.communication;
    out.valid = std::isfinite(out.time_s);
    if (!out.valid) out.why = "a finite time";
    return out;
}

}  // namespace mmgp
