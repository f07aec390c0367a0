// The platform profile: its key table (mmgp/profile_keys.hpp) and its reader. The table is the one list of the
// platform's keys: the reader accepts those keys and reads each by its member's type, calibrate writes them by
// member, the uncertainty sampler varies those marked log_normal, docs/PROFILES.md's table is checked against it.
// Called by the scenario reader and the public load/parse functions; calls the shared value readers, the OSU
// parser and the JSON reader (never the model: the evaluator fits the communication models).
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "model/comm.hpp"
#include "profile/osu.hpp"
#include "profile/profile_json.hpp"

namespace mmgp {

namespace {

using enum key_sampling;

// Each row names the fields it sets; the others take platform_key's defaults (optional, no unit, fixed, none shown).
constexpr platform_key platform_key_table[] = {
    {.name = "hpu_contexts", .required = true, .member = &platform::hpu_contexts,
     .meaning = "H: host hardware contexts per node (PPE threads, host cores/SMT threads)"},
    {.name = "apus", .required = true, .member = &platform::apus,
     .meaning = "A: accelerators per node (SPEs, worker cores; on a GPU node its SMs, docs/MODEL.md §7)"},
    {.name = "nodes", .member = &platform::nodes, .shown_default = "1", .meaning = "nodes available"},
    {.name = "max_processes_per_node", .member = &platform::max_processes_per_node, .meaning = "limit on m"},
    {.name = "O_offload", .required = true, .unit = "seconds", .member = &platform::O_offload, .spread = log_normal,
     .meaning = "s, off-load round trip O_s + O_r (start an off-load and get its result)"},
    {.name = "T_csw", .required = true, .unit = "seconds", .member = &platform::T_csw, .spread = log_normal,
     .meaning = "s, one host context switch"},
    {.name = "alpha", .required = true, .member = &platform::alpha,
     .meaning = "host contention α(m); α(1) = 1. `1.28` or `{\"constant\": c}` (for m ≥ 2), `{\"table\": {\"1\": 1, "
     "\"2\": 1.28, ...}}` (must cover every searched m), `{\"linear\": {\"intercept\": a, \"slope\": b}}`: α(m) = a "
     "+ b·m/H ([C]: linear in threads per hardware context)"},
    {.name = "dma", .member = &platform::dma,
     .meaning = "host↔accelerator transfer cost `{\"latency_s\": l, \"bandwidth_Bps\": B}` (or `\"s_per_byte\"`)"},
    {.name = "network", .member = &platform::comm_tables,
     .meaning = "cluster communication: `{\"tables\": [...], \"models\": {...}}` (below)"},
    {.name = "cores", .member = &platform::cores,
     .meaning = "time-shared cores: HPUs and APUs are software threads sharing this many cores (docs/MODEL.md §4); "
     "`apus` then only bounds m·p"},
    {.name = "T_wake", .unit = "seconds", .member = &platform::T_wake, .spread = log_normal, .time_shared = true,
     .shown_default = "T_csw",
     .meaning = "s, with `cores`: waking a blocked thread while a core is idle (an edtlp switch then costs T_wake, "
     "else T_csw)"},
    {.name = "T_wake_busy", .unit = "seconds", .member = &platform::T_wake_busy, .spread = log_normal,
     .time_shared = true, .shown_default = "T_csw",
     .meaning = "s, with `cores`: processor time of a hand-back to a blocked thread when more threads are runnable "
     "than cores (an edtlp switch with p = 1 then costs T_wake_busy)"},
    {.name = "spin_pause", .unit = "seconds", .member = &platform::spin_pause, .spread = log_normal,
     .time_shared = true, .shown_default = "0",
     .meaning = "s, with `cores`: one iteration of a spin-wait loop (`mmgp calibrate`'s spin harness)"},
    {.name = "sched_slice", .unit = "seconds", .member = &platform::sched_slice, .spread = log_normal,
     .time_shared = true,
     .meaning = "s, with `cores`: how long the OS lets a spinning thread keep its core while another waits for it"},
    {.name = "hierarchy", .member = &platform::hier,
     .meaning = "where the accelerators sit and what a message between two of them costs, for the accelerator-driven "
     "mapping of a `wavefront` application (below, docs/MODEL.md §6)"},
    {.name = "sharing", .member = &platform::sharing, .shown_default = "dedicated",
     .meaning = "how the processes of a node may share its accelerators, each searched: `[\"mps\", \"time_sliced\"]` "
     "on a GPU node (docs/MODEL.md §7; without `cores`)"},
    {.name = "T_slice_switch", .unit = "seconds", .member = &platform::T_slice_switch, .spread = log_normal,
     .meaning = "s, with `sharing` `time_sliced`: the accelerator's switch from one process's kernels to another's"},
    {.name = "apu_slots", .member = &platform::apu_slots, .shown_default = "1",
     .meaning = "blocks one accelerator holds at once (a GPU's SM at the reference block size: its occupancy, at "
     "most 1024); p (time-sliced) or m·p (otherwise) may reach apus·apu_slots (docs/MODEL.md §7)"},
    {.name = "slot_time", .member = &platform::slot_time,
     .meaning = "`[[1, 1], [2, f2], [4, f4], ...]`: the time of a grid with k blocks per accelerator over one "
     "block's, every block the same work (the GPU harness's reference kernel); required when `apu_slots` > 1"},
};

}  // namespace

std::span<const platform_key> platform_keys() noexcept { return platform_key_table; }

namespace detail {

namespace {

template <class... F>
struct overloaded : F... {
    using F::operator()...;
};
template <class... F>
overloaded(F...) -> overloaded<F...>;  // spelled out: Clang 14 (the fuzz build) lacks aggregate deduction

// network.tables[i].points: [[bytes, seconds], ...], sizes increasing.
void read_points(const json& t, const reader& r, const std::string& ip, comm_table& ct) {
    const std::string pp = child(ip, "points");
    if (!t.contains("points") && ct.points.empty())
        r.fail(pp, "an array of [bytes, seconds] pairs (or \"osu\": a file)", "nothing (the key is missing)");
    const json& pts = t.contains("points") ? t["points"] : json::array();
    if (t.contains("points") && (!pts.is_array() || pts.empty())) r.fail(pp, "a non-empty array of [bytes, seconds] pairs", pts);
    for (std::size_t k = 0; k < pts.size(); ++k) {
        const std::string kp = child(pp, k);
        const json& pt = pts[k];
        if (!pt.is_array() || pt.size() != 2) r.fail(kp, "a [bytes, seconds] pair", pt);
        comm_point cp{r.number(pt[0], child(kp, 0), at_least(0.0, "bytes")), r.number(pt[1], child(kp, 1), at_least(0.0, "seconds"))};
        if (cp.seconds > max_operation_s)
            r.fail(child(kp, 1), "at most " + format_double(max_operation_s) + " seconds (one collective's time)", pt[1]);
        if (!ct.points.empty() && cp.bytes <= ct.points.back().bytes)
            r.fail(child(kp, 0), "sizes in increasing order, above " + format_double(ct.points.back().bytes), describe(pt[0]));
        ct.points.push_back(cp);
    }
}

// network.tables[i].osu: the output of an OSU latency test, in a file beside the profile.
std::vector<comm_point> read_osu_ref(const json& t, const reader& r, const std::string& ip, const std::string& base_dir) {
    const std::string op = child(ip, "osu");
    if (t.contains("points")) r.fail(op, "either \"points\" or \"osu\"", "both");
    const json& f = t["osu"];
    if (!f.is_string() || f.get<std::string>().empty()) r.fail(op, "the path of an OSU output file", f);
    std::string file = f.get<std::string>();
    if (file[0] != '/' && base_dir != ".") file = base_dir + "/" + file;
    if (std::FILE* probe = std::fopen(file.c_str(), "rb"))
        std::fclose(probe);
    else
        r.fail(op, "a readable OSU output file", "\"" + file + "\" (" + std::strerror(errno) + ")");
    return read_osu(file, file);
}

// network.tables[i], one per (primitive, nodes, ppn) among `before`.
comm_table read_comm_table(const json& v, const reader& r, const std::string& ip, const std::string& base_dir,
                           const std::vector<comm_table>& before) {
    const json& t = r.object(v, ip);
    r.known_keys(t, ip, {"primitive", "nodes", "ppn", "points", "osu"});
    comm_table ct;
    ct.prim = read_primitive(t, r, ip);
    ct.nodes = static_cast<int>(r.integer_at(t, ip, "nodes", 1, int_max));
    ct.ppn = static_cast<int>(r.integer_at(t, ip, "ppn", 1, int_max));
    if (t.contains("osu")) ct.points = read_osu_ref(t, r, ip, base_dir);
    read_points(t, r, ip, ct);
    for (const auto& other : before)
        if (other.prim == ct.prim && other.nodes == ct.nodes && other.ppn == ct.ppn)
            r.fail(ip, "one table per primitive, nodes and ppn",
                   "a second table for " + std::string(to_string(ct.prim)) + " nodes=" + std::to_string(ct.nodes) +
                       " ppn=" + std::to_string(ct.ppn));
    return ct;
}

// network.models: {"PRIMITIVE": {"intra": link, "inter": link}, ...}.
std::vector<std::pair<primitive, comm_model>> read_comm_models(const json& v, const reader& r, const std::string& mp) {
    std::vector<std::pair<primitive, comm_model>> out;
    const json& ms = r.object(v, mp);
    for (auto it = ms.begin(); it != ms.end(); ++it) {
        const std::string ip = child(mp, it.key());
        const auto* named = std::find(std::begin(primitive_names), std::end(primitive_names), it.key());
        if (named == std::end(primitive_names)) {
            std::string list;
            for (std::string_view n : primitive_names) list += (list.empty() ? "" : ", ") + std::string(n);
            r.fail(ip, "a primitive name (" + list + ")", "the key " + json(it.key()).dump());
        }
        const json& m = r.object(it.value(), ip);
        r.known_keys(m, ip, {"intra", "inter"});
        comm_model cm;
        cm.has_intra = m.contains("intra");
        cm.has_inter = m.contains("inter");
        if (!cm.has_intra && !cm.has_inter) r.fail(ip, "\"intra\" and/or \"inter\" link costs", "neither");
        if (cm.has_intra) cm.intra = read_link(m["intra"], r, child(ip, "intra"));
        if (cm.has_inter) cm.inter = read_link(m["inter"], r, child(ip, "inter"));
        out.emplace_back(static_cast<primitive>(named - std::begin(primitive_names)), cm);
    }
    return out;
}

// platform.network: {"tables": [...], "models": {...}}.
void read_network(const json& v, const reader& r, const std::string& path, platform& pl, const std::string& base_dir) {
    r.object(v, path);
    r.known_keys(v, path, {"tables", "models"});
    if (v.contains("tables")) {
        const std::string tp = child(path, "tables");
        const json& ts = v["tables"];
        if (!ts.is_array()) r.fail(tp, "an array of tables", ts);
        for (std::size_t i = 0; i < ts.size(); ++i)
            pl.comm_tables.push_back(read_comm_table(ts[i], r, child(tp, i), base_dir, pl.comm_tables));
    }
    if (v.contains("models")) pl.comm_models = read_comm_models(v["models"], r, child(path, "models"));
}

// One part of a hierarchy level's path: {"name", "latency_s", "bandwidth_Bps" (optional), "host" (optional)}.
path_part read_path_part(const json& v, const reader& r, const std::string& kp) {
    const json& part = r.object(v, kp);
    r.known_keys(part, kp, {"name", "latency_s", "bandwidth_Bps", "host"});
    path_part pt;
    pt.name = r.string_at(part, kp, "name");
    pt.latency_s = r.number_at(part, kp, "latency_s", at_least(0.0, "seconds"));
    if (part.contains("bandwidth_Bps")) pt.s_per_byte = 1.0 / r.number_at(part, kp, "bandwidth_Bps", above(0.0, "bytes per second"));
    if (part.contains("host")) {
        if (!part["host"].is_boolean()) r.fail(child(kp, "host"), "true or false", part["host"]);
        pt.host = part["host"].get<bool>();
    }
    return pt;
}

// One level; `last_ranks` is the ranks of the level inside it (0: none yet, -1: the network level came before).
hierarchy_level read_level(const json& v, const reader& r, const std::string& ip, std::size_t i, int& last_ranks) {
    const json& l = r.object(v, ip);
    r.known_keys(l, ip, {"name", "ranks", "forwarders", "path"});
    hierarchy_level lv;
    lv.name = r.string_at(l, ip, "name");
    if (l.contains("ranks")) {
        if (last_ranks < 0)
            r.fail(child(ip, "ranks"), "no level inside the network level (the one without \"ranks\" comes last)",
                   describe(l["ranks"]));
        lv.ranks = static_cast<int>(r.integer_at(l, ip, "ranks", 1, int_max));
        if (lv.ranks <= last_ranks || (last_ranks > 0 && lv.ranks % last_ranks != 0))
            r.fail(child(ip, "ranks"), "a multiple of the level inside it (" + std::to_string(last_ranks) + " ranks), larger",
                   describe(l["ranks"]));
        last_ranks = lv.ranks;
    } else {
        if (i == 0) r.fail(child(ip, "ranks"), "the ranks of the innermost level", "nothing (the key is missing)");
        last_ranks = -1;
    }
    lv.forwarders = static_cast<int>(r.integer_or(l, ip, "forwarders", 0, 1, int_max));
    const std::string pp = child(ip, "path");
    if (!l.contains("path") || !l["path"].is_array() || l["path"].empty())
        r.fail(pp, "a non-empty array of path parts {\"name\", \"latency_s\", \"bandwidth_Bps\"}",
               l.contains("path") ? describe(l["path"]) : "nothing (the key is missing)");
    for (std::size_t k = 0; k < l["path"].size(); ++k) lv.path.push_back(read_path_part(l["path"][k], r, child(pp, k)));
    return lv;
}

// platform.hierarchy: {"levels": [{"name", "ranks", "forwarders", "path": [...]}, ...]}, innermost first.
hierarchy read_hierarchy(const json& v, const reader& r, const std::string& path, int apus) {
    r.object(v, path);
    r.known_keys(v, path, {"levels"});
    const std::string lp = child(path, "levels");
    if (!v.contains("levels") || !v["levels"].is_array() || v["levels"].empty() || v["levels"].size() > hierarchy::max_levels)
        r.fail(lp, "an array of 1 to " + std::to_string(hierarchy::max_levels) + " levels, innermost first",
               v.contains("levels") ? describe(v["levels"]) : "nothing (the key is missing)");
    hierarchy h;
    const json& levels = v["levels"];
    int last_ranks = 0;
    std::size_t node_level = 0;  // the outermost level with ranks: one node
    for (std::size_t i = 0; i < levels.size(); ++i) {
        h.levels.push_back(read_level(levels[i], r, child(lp, i), i, last_ranks));
        if (last_ranks > 0) node_level = i;
    }
    if (h.levels[node_level].ranks != apus)
        r.fail(child(child(lp, node_level), "ranks"),
               "the node's accelerators (apus = " + std::to_string(apus) + ") as the ranks of the outermost level with ranks",
               std::to_string(h.levels[node_level].ranks));
    return h;
}

// platform.sharing: a non-empty array of distinct "mps" / "time_sliced" ("dedicated": the default, alone).
std::vector<accelerator_sharing> read_sharing(const json& v, const reader& r, const std::string& path) {
    static const char* expected = "a non-empty array of distinct sharing modes (\"mps\", \"time_sliced\"; or [\"dedicated\"])";
    if (!v.is_array() || v.empty() || v.size() > 3) r.fail(path, expected, v);
    std::vector<accelerator_sharing> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
        accelerator_sharing a{};
        if (!v[i].is_string() || !parse_sharing(v[i].get<std::string>(), a)) r.fail(child(path, i), expected, v[i]);
        if (std::find(out.begin(), out.end(), a) != out.end()) r.fail(child(path, i), expected, "a second " + describe(v[i]));
        out.push_back(a);
    }
    if (out.size() > 1 && std::find(out.begin(), out.end(), accelerator_sharing::dedicated) != out.end())
        r.fail(path, "\"dedicated\" alone (the processes have their own accelerators) or GPU modes", v);
    return out;
}

// The accelerators' block slots: at most 1024 each, and with more than one the curve that prices them.
void check_slots(const json& obj, const reader& r, const std::string& path, const platform& pl) {
    if (pl.apu_slots > 1024) r.fail(child(path, "apu_slots"), "at most 1024 blocks per accelerator", obj["apu_slots"]);
    if (pl.apu_slots > 1 && pl.slot_time.empty())
        r.fail(child(path, "slot_time"), "the accelerator's time against its resident blocks (apu_slots > 1)",
               "nothing (the key is missing)");
    if (pl.apu_slots > 1 && pl.cores > 0)
        r.fail(child(path, "apu_slots"), "apu_slots only on dedicated accelerators (without \"cores\")", obj["apu_slots"]);
}

// The sharing keys agree: time-sliced sharing with its switch cost, neither on time-shared cores.
void check_sharing(const json& obj, const reader& r, const std::string& path, const platform& pl) {
    const bool sliced =
        std::find(pl.sharing.begin(), pl.sharing.end(), accelerator_sharing::time_sliced) != pl.sharing.end();
    if (!pl.sharing.empty() && pl.cores > 0)
        r.fail(child(path, "sharing"), "no sharing modes with \"cores\" (threads share cores, not accelerators)",
               obj["sharing"]);
    if (sliced && !obj.contains("T_slice_switch"))
        r.fail(child(path, "T_slice_switch"), "the switch cost of time-sliced sharing (seconds)", "nothing (the key is missing)");
    if (!sliced && obj.contains("T_slice_switch"))
        r.fail(child(path, "T_slice_switch"), "T_slice_switch only with \"time_sliced\" in \"sharing\"",
               describe(obj["T_slice_switch"]));
}

// The provenance of a calibrated platform. Its sections are free-form (provenance keys): a member of another
// shape is left out, never an error.
platform_provenance read_provenance(const json& obj) {
    platform_provenance p;
    p.calibrated = obj.contains("calibration") && obj["calibration"].is_object();
    p.spreads = read_spreads(obj);
    if (obj.contains("machine") && obj["machine"].is_object()) {
        const json& m = obj["machine"];
        auto text = [&](const char* key) { return m.contains(key) && m[key].is_string() ? m[key].get<std::string>() : ""; };
        p.host_hash = text("host_hash");
        if (p.host_hash.empty() && !text("host_name").empty()) p.host_hash = host_hash(text("host_name"));
        p.cpu_model = text("cpu_model");
        p.kernel = text("kernel");
        p.date = text("date");
        if (m.contains("cores") && m["cores"].is_number_integer()) p.cores = m["cores"].get<int>();
    }
    for (auto it = obj.begin(); it != obj.end(); ++it) {  // the parameters written as {"value": ..., ...}
        const json& v = it.value();
        if (!v.is_object() || !v.contains("value")) continue;
        if (v.contains("repetitions") && v["repetitions"].is_number_integer()) {
            const int reps = v["repetitions"].get<int>();
            if (reps > 0 && (p.min_repetitions == 0 || reps < p.min_repetitions)) p.min_repetitions = reps;
        }
        if (v.contains("flagged") && v["flagged"].is_boolean() && v["flagged"].get<bool>())
            p.flagged.push_back(it.key() + ": " +
                                (v.contains("warning") && v["warning"].is_string() ? v["warning"].get<std::string>()
                                                                                  : std::string("flagged noisy")));
    }
    return p;
}

// Where the keys of the table are read into a platform.
struct platform_reading {
    const json& obj;
    const reader& r;
    const std::string& path;
    const std::string& base_dir;
    platform& pl;

    // One key, read by its member's type; an absent optional key leaves the member's default.
    void read(const platform_key& k) const {
        const bool given = obj.contains(k.name);
        const std::string kp = child(path, k.name);
        std::visit(overloaded{
                       [&](int platform::*m) {
                           pl.*m = static_cast<int>(k.required ? r.integer_at(obj, path, k.name, 1, int_max)
                                                               : r.integer_or(obj, path, k.name, pl.*m, 1, int_max));
                       },
                       [&](double platform::*m) {
                           if (!given && !k.required) return;
                           if (k.time_shared && pl.cores == 0)
                               r.fail(kp, std::string(k.name) + " only with \"cores\" (time-shared cores)",
                                      std::string(k.name) + " without cores");
                           pl.*m = r.number_at(obj, path, k.name, at_least(0.0, k.unit));
                           // A platform's times are the costs of one operation: no machine takes an hour for one.
                           if (pl.*m > max_operation_s)
                               r.fail(kp, "at most " + format_double(max_operation_s) + " seconds (the cost of one "
                                          "operation on a machine)", obj[k.name]);
                       },
                       [&](m_function platform::*m) {  // a platform's function of m is its contention α(m)
                           if (!given && k.required)
                               r.fail(kp, "a number or {\"constant\"|\"table\"|\"linear\": ...}", "nothing (the key is missing)");
                           if (given) pl.*m = read_m_function(obj[k.name], r, kp, m_quantity::contention);
                       },
                       [&](link_cost platform::*m) {
                           if (given) pl.*m = read_link(obj[k.name], r, kp);
                       },
                       [&](std::vector<comm_table> platform::*) {
                           if (given) read_network(obj[k.name], r, kp, pl, base_dir);
                       },
                       [&](hierarchy platform::*m) {
                           if (given) pl.*m = read_hierarchy(obj[k.name], r, kp, pl.apus);
                       },
                       [&](std::vector<accelerator_sharing> platform::*m) {
                           if (given) pl.*m = read_sharing(obj[k.name], r, kp);
                       },
                       [&](slot_curve platform::*m) {
                           if (given) pl.*m = read_slot_curve(obj[k.name], r, kp);
                       },
                   },
                   k.member);
    }
};

bool is_count(const platform_key& k) { return std::holds_alternative<int platform::*>(k.member); }

}  // namespace

platform platform_from_json(const json& obj, const reader& r, const std::string& path, const std::string& base_dir) {
    r.object(obj, path);
    r.document(obj, path, "platform");
    r.known_keys(obj, path, key_names<platform_key_table>());
    platform pl;
    pl.name = r.string_or(obj, path, "name", "");
    const platform_reading reading{obj, r, path, base_dir, pl};
    // The counts first: other keys are checked against them (time-shared keys need cores, the hierarchy apus);
    // then the time-shared keys, then the rest, each in the table's order.
    for (const platform_key& k : platform_key_table)
        if (is_count(k)) reading.read(k);
    for (const platform_key& k : platform_key_table)
        if (k.time_shared) reading.read(k);
    for (const platform_key& k : platform_key_table)
        if (!is_count(k) && !k.time_shared) reading.read(k);
    check_sharing(obj, r, path, pl);
    check_slots(obj, r, path, pl);
    pl.has_dma = obj.contains(key_of(&platform::dma));
    pl.provenance = read_provenance(obj);
    return pl;
}

}  // namespace detail

}  // namespace mmgp
