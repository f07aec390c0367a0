// mmgp predict on a wavefront application (predict_report.hpp): the accelerator-driven and the host-driven
// mapping at each node count, as a table with why each wins, or as JSON (docs/MODEL.md §6). Called by
// cmd_predict.cpp; calls the wavefront model (mmgp/wavefront.hpp).
#include "predict_report.hpp"

#include <algorithm>
#include <cmath>

#include "mmgp/wavefront.hpp"

namespace mmgp::cli::predict {

namespace {

// --- A wavefront application: the accelerator-driven and the host-driven mapping over the node counts ---------

struct wave_pair {
    int nodes = 1;
    configuration acc_c, host_c;
    wavefront_prediction acc, host;
};

wave_pair wave_at(const scenario& s, int nodes) {
    wave_pair w;
    w.nodes = nodes;
    w.acc_c = {s.plat.apus, 1, nodes, policy::edtlp};
    w.acc = wavefront_time(s.plat, s.app.wave, wave_mapping::accelerator_driven, w.acc_c);
    if (s.app.wave.has_host_driven)
        for (int m = 1; m <= std::min(s.plat.hpu_contexts, s.plat.apus); ++m) {
            const configuration c{m, s.plat.apus / m, nodes, policy::edtlp};
            const wavefront_prediction t = wavefront_time(s.plat, s.app.wave, wave_mapping::host_driven, c);
            if (t.valid && (!w.host.valid || t.time_s < w.host.time_s)) w.host = t, w.host_c = c;
        }
    return w;
}

std::string level_name(const scenario& s, int lv) {
    return lv < 0 ? std::string("none") : s.plat.hier.levels[static_cast<std::size_t>(lv)].name;
}

// The node counts a wavefront report shows: powers of two times the least, and the most.
std::vector<wave_pair> wave_rows(const scenario& s, int lo, int hi) {
    std::vector<int> counts;
    for (std::int64_t n = lo; n < hi; n *= 2) counts.push_back(static_cast<int>(n));
    counts.push_back(hi);
    std::vector<wave_pair> rows;
    for (int n : counts) rows.push_back(wave_at(s, n));
    return rows;
}

// One mapping of a wavefront row as a JSON object (null when it cannot run).
nlohmann::ordered_json wave_json(const scenario& s, const wavefront_prediction& t, const configuration& c) {
    if (!t.valid) return nullptr;
    return {{"m", c.m}, {"p", c.p}, {"time_s", json_number(t.time_s)}, {"compute", json_number(t.compute)},
            {"fill", json_number(t.fill)}, {"transfer", json_number(t.transfer)},
            {"communication", json_number(t.communication)}, {"grid", {t.px, t.py}},
            {"level_i", level_name(s, t.level_i)}, {"level_j", level_name(s, t.level_j)},
            {"step_s", json_number(t.step_s)}};
}

void wavefront_json(out_stream& out, const scenario& s, const std::vector<wave_pair>& rows,
                    const std::vector<std::string>& notes) {
    using json = nlohmann::ordered_json;
    json list = json::array();
    for (const wave_pair& r : rows)
        list.push_back({{"nodes", r.nodes}, {"accelerator_driven", wave_json(s, r.acc, r.acc_c)},
                        {"host_driven", wave_json(s, r.host, r.host_c)}});
    json doc = {{"schema", "mmgp/1"}, {"kind", "wavefront"}, {"scenario", s.name}, {"rows", list}};
    if (!notes.empty()) doc["notes"] = notes;
    out.print("{}\n", doc.dump());
}

// The table of both mappings at each node count, and which wins where.
void wavefront_table(out_stream& out, const std::vector<wave_pair>& rows) {
    out.print("{:>6} {:>7} {:>11} {:>20} {:>28} {:>24}\n", "nodes", "ranks", "grid", "accelerator-driven",
              "host-driven (best m x p)", "faster");
    int acc_wins = 0, host_wins = 0;
    std::optional<int> crossover;
    bool prev_acc = false;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& r = rows[i];
        std::string host = r.host.valid ? fmt::format("{} (m={} p={})", human_time(r.host.time_s), r.host_c.m, r.host_c.p) : "-";
        std::string faster = "-";
        if (r.acc.valid && r.host.valid) {
            const bool a = r.acc.time_s <= r.host.time_s;
            faster = a ? fmt::format("accelerator-driven {:.2f}x", r.host.time_s / r.acc.time_s)
                       : fmt::format("host-driven {:.2f}x", r.acc.time_s / r.host.time_s);
            (a ? acc_wins : host_wins) += 1;
            if (i > 0 && a != prev_acc && !crossover) crossover = r.nodes;
            prev_acc = a;
        }
        out.print("{:>6} {:>7} {:>11} {:>20} {:>28} {:>24}\n", r.nodes, static_cast<long long>(r.acc_c.m) * r.nodes,
                  fmt::format("{}x{}", r.acc.px, r.acc.py), r.acc.valid ? human_time(r.acc.time_s) : std::string(r.acc.why), host,
                  faster);
    }
    out.print("\n");
    if (acc_wins + host_wins > 0) {
        if (host_wins == 0) out.print("Winner: accelerator-driven at every node count shown.\n");
        else if (acc_wins == 0) out.print("Winner: host-driven at every node count shown.\n");
        else out.print("Winner changes: crossover near {} nodes.\n", crossover.value_or(0));
    }
}

// Why, term by term, at one node count: each mapping's terms, and where the host-driven one differs.
void wavefront_why(out_stream& out, const scenario& s, const wave_pair& r) {
    if (!r.acc.valid) return;
    out.print("\nAt {} node{}: accelerator-driven {} = compute {} + pipeline fill {} + communication {}\n", r.nodes,
              r.nodes > 1 ? "s" : "", human_time(r.acc.time_s), human_time(r.acc.compute), human_time(r.acc.fill),
              human_time(r.acc.communication));
    out.print("  one step {}: faces {} ({}) and {} ({}){}\n", human_time(r.acc.step_s), human_time(r.acc.message_i_s),
              level_name(s, r.acc.level_i), human_time(r.acc.message_j_s), level_name(s, r.acc.level_j),
              r.acc.forward_s > 0 ? fmt::format(", forwarding hosts busy {} per step", human_time(r.acc.forward_s)) : "");
    if (!r.host.valid) return;
    out.print("  host-driven m={} p={} {} = compute {} + fill {} + transfers {} + communication {}\n", r.host_c.m,
              r.host_c.p, human_time(r.host.time_s), human_time(r.host.compute), human_time(r.host.fill),
              human_time(r.host.transfer), human_time(r.host.communication));
    std::vector<difference> terms = {{r.host.compute - r.acc.compute, "compute"}, {r.host.fill - r.acc.fill, "fill"},
                                     {r.host.transfer - r.acc.transfer, "transfers"},
                                     {r.host.communication - r.acc.communication, "communication"}};
    largest_first(terms);
    std::string why;
    for (const auto& t : terms)
        if (std::fabs(t.first) > 1e-3 * r.acc.time_s) add_difference(why, t);
    out.print("  host-driven against accelerator-driven:{}\n", why.empty() ? " the same time" : why);
}

}  // namespace

void wavefront_report(out_stream& out, const scenario& s, bool as_json, const std::vector<std::string>& notes) {
    if (s.plat.hier.empty())
        throw input_error(s.file, "/platform/hierarchy", "a communication hierarchy for the wavefront's mappings", "none");
    const int lo = static_cast<int>(std::max<std::int64_t>(1, s.space.nodes.lo));
    const int hi = static_cast<int>(std::min<std::int64_t>(s.plat.nodes, s.space.nodes.hi));
    const std::vector<wave_pair> rows = wave_rows(s, lo, hi);
    if (as_json) {
        wavefront_json(out, s, rows, notes);
        return;
    }
    const auto& w = s.app.wave;
    out.print("# {}: a wavefront ({} x {} x {} cells {}, {:g} angles, {:g}-plane blocks, {:g} octants) mapped two ways, "
              "nodes {}..{} (docs/MODEL.md §6)\n\n",
              one_line(s.name), w.cells[0], w.cells[1], w.cells[2], w.per_rank ? "per accelerator" : "in all", w.angles, w.k_block,
              w.octants, lo, hi);
    for (const auto& n : notes) out.print("note: {}\n", one_line(n));
    if (!notes.empty()) out.print("\n");
    wavefront_table(out, rows);
    // Why, term by term, at the smallest and the largest node count.
    for (const auto* r : {&rows.front(), &rows.back()}) wavefront_why(out, s, *r);
}

}  // namespace mmgp::cli::predict
