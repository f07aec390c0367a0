#include "mmgp/profile.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <utility>

#include "detail/comm.hpp"
#include "detail/profile_json.hpp"

namespace mmgp {

namespace detail {
// Defined in the generated bundled_profiles.cpp.
struct bundled_entry {
    const char* key;
    const char* text;
};
extern const bundled_entry bundled_profiles[];
extern const std::size_t bundled_profiles_count;
}  // namespace detail

std::string_view to_string(decomposition d) noexcept { return d == decomposition::data ? "data" : "task"; }
std::string_view to_string(scaling s) noexcept { return s == scaling::strong ? "strong" : "weak"; }
std::string_view to_string(policy p) noexcept { return p == policy::edtlp ? "edtlp" : "os"; }

namespace {
constexpr std::string_view primitive_names[] = {"allreduce", "bcast",   "reduce",   "barrier", "allgather",
                                                "gather",    "scatter", "alltoall", "sendrecv"};
constexpr int primitive_count = 9;
constexpr std::int64_t int_max = std::numeric_limits<int>::max();
}  // namespace

std::string_view to_string(primitive p) noexcept { return primitive_names[static_cast<int>(p)]; }

bool parse_policy(std::string_view text, policy& out) noexcept {
    static constexpr std::pair<std::string_view, policy> names[] = {{"edtlp", policy::edtlp}, {"os", policy::os}};
    return detail::parse_named(text, names, out);
}

bool m_function::covers(int m) const noexcept {
    if (kind != form::table) return m >= 1;
    return m >= 1 && static_cast<std::size_t>(m) < table.size() && !std::isnan(table[static_cast<std::size_t>(m)]);
}

std::vector<std::string> bundled_names(std::string_view kind) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < detail::bundled_profiles_count; ++i) {
        std::string_view key = detail::bundled_profiles[i].key;
        if (key.size() > kind.size() && key.substr(0, kind.size()) == kind && key[kind.size()] == '/')
            out.emplace_back(key.substr(kind.size() + 1));
    }
    return out;
}

std::string_view bundled_text(std::string_view key) noexcept {
    for (std::size_t i = 0; i < detail::bundled_profiles_count; ++i)
        if (key == detail::bundled_profiles[i].key) return detail::bundled_profiles[i].text;
    return {};
}

namespace detail {

std::string dir_of(const std::string& path) {
    auto p = std::filesystem::path(path).parent_path();
    return p.empty() ? std::string(".") : p.string();
}

located_json load_ref(const std::string& ref, std::string_view kind, const std::string& base_dir,
                      const std::string& from_file, const std::string& from_path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    bool looks_like_path = ref.find('/') != std::string::npos || (ref.size() > 5 && ref.ends_with(".json"));
    std::vector<std::string> candidates;
    if (fs::path(ref).is_absolute()) {
        candidates.push_back(ref);
    } else {
        if (!base_dir.empty() && base_dir != ".") candidates.push_back((fs::path(base_dir) / ref).string());
        candidates.push_back(ref);
    }
    for (const auto& c : candidates) {
        if (fs::is_regular_file(c, ec)) return {parse_json(read_file(c), c), c, dir_of(c)};
    }
    if (!looks_like_path) {
        std::string key = std::string(kind) + "/" + ref;
        std::string_view text = bundled_text(key);
        if (!text.empty()) return {parse_json(text, "bundled:" + key), "bundled:" + key, "."};
    }
    if (looks_like_path) {
        // A path that does not resolve: name the file as the user wrote it (and where it was written).
        std::string shown = candidates.front();
        if (fs::exists(shown, ec)) throw input_error(shown, "", "a readable JSON file", "something that is not a regular file");
        if (from_path.empty()) throw input_error(shown, "", "a readable file", "no such file or directory");
        throw input_error(from_file, from_path, "a readable file", "no such file or directory: " + shown);
    }
    std::string names;
    for (const auto& n : bundled_names(kind)) names += (names.empty() ? "" : ", ") + n;
    throw input_error(from_path.empty() ? ref : from_file, from_path,
                      "an existing file or a bundled " + std::string(kind) + " name (" + names + ")",
                      "the string " + json(ref).dump());
}

namespace {

struct table_entry {
    int m;
    double v;
};

m_function read_m_function(const json& v, const reader& r, const std::string& path, bool is_alpha) {
    m_function f;
    const char* what = is_alpha ? "contention factor" : "seconds";
    double lo = is_alpha ? 0.0 : 0.0;
    bool strict = is_alpha;
    if (v.is_number()) {
        f.kind = m_function::form::constant;
        f.value = r.number(v, path, lo, strict, what);
        return f;
    }
    if (!v.is_object())
        r.fail(path, std::string("a number or an object with \"constant\", \"table\" or \"linear\"") , v);
    r.known_keys(v, path, {"constant", "table", "linear", "value"});
    int forms = static_cast<int>(v.contains("constant")) + static_cast<int>(v.contains("table")) +
                static_cast<int>(v.contains("linear")) + static_cast<int>(v.contains("value"));
    if (forms != 1) r.fail(path, "exactly one of \"constant\", \"table\", \"linear\"", std::to_string(forms) + " of them");
    if (v.contains("value") || v.contains("constant")) {
        f.kind = m_function::form::constant;
        const char* key = v.contains("value") ? "value" : "constant";
        f.value = r.number(v[key], child(path, key), lo, strict, what);
        return f;
    }
    if (v.contains("linear")) {
        std::string lp = child(path, "linear");
        const json& l = r.object(v["linear"], lp);
        r.known_keys(l, lp, {"intercept", "slope"});
        f.kind = m_function::form::linear;
        f.intercept = r.number_at(l, lp, "intercept", -1e300, false, is_alpha ? "factor" : "seconds");
        f.slope = r.number_at(l, lp, "slope", 0.0, false, is_alpha ? "factor per thread per context" : "seconds");
        return f;
    }
    std::string tp = child(path, "table");
    const json& t = r.object(v["table"], tp);
    if (t.empty()) r.fail(tp, "a table with at least one entry {\"m\": value}", "an empty object");
    f.kind = m_function::form::table;
    std::vector<table_entry> entries;
    for (auto it = t.begin(); it != t.end(); ++it) {
        const std::string& k = it.key();
        std::int64_t m = 0;
        bool ok = !k.empty() && k.size() <= 9 && std::all_of(k.begin(), k.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (ok) m = std::stoll(k);
        if (!ok || m < 1 || m > 100000000)
            r.fail(child(tp, k), "a key that is a process count m between 1 and 100000000", "the key " + json(k).dump());
        entries.push_back({static_cast<int>(m), r.number(it.value(), child(tp, k), lo, strict, what)});
    }
    int maxm = 0;
    for (auto& e : entries) maxm = std::max(maxm, e.m);
    f.table.assign(static_cast<std::size_t>(maxm) + 1, std::numeric_limits<double>::quiet_NaN());
    for (auto& e : entries) f.table[static_cast<std::size_t>(e.m)] = e.v;
    return f;
}

link_cost read_link(const json& v, const reader& r, const std::string& path) {
    r.object(v, path);
    r.known_keys(v, path, {"latency_s", "bandwidth_Bps", "s_per_byte"});
    link_cost c;
    c.latency_s = r.number_at(v, path, "latency_s", 0.0, false, "seconds");
    bool bw = v.contains("bandwidth_Bps"), spb = v.contains("s_per_byte");
    if (bw == spb) r.fail(path, "exactly one of \"bandwidth_Bps\" and \"s_per_byte\"", bw ? "both" : "neither");
    if (bw)
        c.s_per_byte = 1.0 / r.number_at(v, path, "bandwidth_Bps", 0.0, true, "bytes per second");
    else
        c.s_per_byte = r.number_at(v, path, "s_per_byte", 0.0, false, "seconds per byte");
    return c;
}

primitive read_primitive(const json& obj, const reader& r, const std::string& path) {
    std::size_t i = r.choice(obj, path, "primitive",
                             {"allreduce", "bcast", "reduce", "barrier", "allgather", "gather", "scatter", "alltoall",
                              "sendrecv"},
                             0, true);
    return static_cast<primitive>(i);
}

// The points of an OSU micro-benchmarks latency test's output (osu_allreduce, osu_latency, ...): '#' lines are
// comments, the header names the latency column in microseconds, each data line is "SIZE LATENCY_US ...".
std::vector<comm_point> read_osu(const std::string& osu_path, const std::string& shown) {
    const std::string text = read_file(osu_path);
    std::vector<comm_point> out;
    bool latency = false;
    std::size_t line_no = 0;
    for (std::size_t at = 0; at < text.size();) {
        std::size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(at, end - at);
        at = end + 1;
        ++line_no;
        const auto first = line.find_first_not_of(" \t\r");
        if (first == std::string::npos) continue;
        const std::string where = "line " + std::to_string(line_no);
        if (line[first] == '#') {
            if (line.find("Latency") != std::string::npos && line.find("(us)") != std::string::npos) latency = true;
            if (line.find("MB/s") != std::string::npos || line.find("Bandwidth") != std::string::npos)
                throw input_error(shown, where, "the output of an OSU latency test (a \"Latency (us)\" column)",
                                  "a bandwidth test");
            continue;
        }
        if (!latency)
            throw input_error(shown, where, "an OSU header naming the latency column in microseconds before the data",
                              "\"" + line.substr(first, 40) + "\"");
        char* rest = nullptr;
        const double bytes = std::strtod(line.c_str() + first, &rest);
        char* after = nullptr;
        const double us = std::strtod(rest, &after);
        if (after == rest || !std::isfinite(bytes) || !std::isfinite(us) || bytes < 0 || us < 0)
            throw input_error(shown, where, "SIZE LATENCY_US (two non-negative numbers)", "\"" + line.substr(first, 40) + "\"");
        if (!out.empty() && bytes <= out.back().bytes)
            throw input_error(shown, where, "sizes in increasing order, above " + format_double(out.back().bytes),
                              format_double(bytes));
        out.push_back({bytes, us * 1e-6});
    }
    if (out.empty()) throw input_error(shown, "", "at least one SIZE LATENCY_US line", "none");
    return out;
}

void read_network(const json& v, const reader& r, const std::string& path, platform& pl, const std::string& base_dir) {
    r.object(v, path);
    r.known_keys(v, path, {"tables", "models"});
    if (v.contains("tables")) {
        std::string tp = child(path, "tables");
        const json& ts = v["tables"];
        if (!ts.is_array()) r.fail(tp, "an array of tables", ts);
        for (std::size_t i = 0; i < ts.size(); ++i) {
            std::string ip = child(tp, i);
            const json& t = r.object(ts[i], ip);
            r.known_keys(t, ip, {"primitive", "nodes", "ppn", "points", "osu"});
            comm_table ct;
            ct.prim = read_primitive(t, r, ip);
            ct.nodes = static_cast<int>(r.integer_at(t, ip, "nodes", 1, int_max));
            ct.ppn = static_cast<int>(r.integer_at(t, ip, "ppn", 1, int_max));
            std::string pp = child(ip, "points");
            if (t.contains("osu")) {  // the output of an OSU latency test, in a file beside the profile
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
                ct.points = read_osu(file, file);
            }
            if (!t.contains("points") && ct.points.empty())
                r.fail(pp, "an array of [bytes, seconds] pairs (or \"osu\": a file)", "nothing (the key is missing)");
            const json& pts = t.contains("points") ? t["points"] : json::array();
            if (t.contains("points") && (!pts.is_array() || pts.empty()))
                r.fail(pp, "a non-empty array of [bytes, seconds] pairs", pts);
            for (std::size_t k = 0; k < pts.size(); ++k) {
                std::string kp = child(pp, k);
                const json& pt = pts[k];
                if (!pt.is_array() || pt.size() != 2) r.fail(kp, "a [bytes, seconds] pair", pt);
                comm_point cp{r.number(pt[0], child(kp, 0), 0.0, false, "bytes"),
                              r.number(pt[1], child(kp, 1), 0.0, false, "seconds")};
                if (!ct.points.empty() && cp.bytes <= ct.points.back().bytes)
                    r.fail(child(kp, 0), "sizes in increasing order, above " + format_double(ct.points.back().bytes),
                           describe(pt[0]));
                ct.points.push_back(cp);
            }
            for (const auto& other : pl.comm_tables)
                if (other.prim == ct.prim && other.nodes == ct.nodes && other.ppn == ct.ppn)
                    r.fail(ip, "one table per primitive, nodes and ppn",
                           "a second table for " + std::string(to_string(ct.prim)) + " nodes=" +
                               std::to_string(ct.nodes) + " ppn=" + std::to_string(ct.ppn));
            pl.comm_tables.push_back(std::move(ct));
        }
    }
    if (v.contains("models")) {
        std::string mp = child(path, "models");
        const json& ms = r.object(v["models"], mp);
        for (auto it = ms.begin(); it != ms.end(); ++it) {
            std::string ip = child(mp, it.key());
            int idx = -1;
            for (int k = 0; k < primitive_count; ++k)
                if (primitive_names[k] == it.key()) idx = k;
            if (idx < 0) r.fail(ip, "a primitive name (allreduce, bcast, reduce, barrier, allgather, gather, scatter, alltoall, sendrecv)", "the key " + json(it.key()).dump());
            const json& m = r.object(it.value(), ip);
            r.known_keys(m, ip, {"intra", "inter"});
            comm_model cm;
            cm.has_intra = m.contains("intra");
            cm.has_inter = m.contains("inter");
            if (!cm.has_intra && !cm.has_inter) r.fail(ip, "\"intra\" and/or \"inter\" link costs", "neither");
            if (cm.has_intra) cm.intra = read_link(m["intra"], r, child(ip, "intra"));
            if (cm.has_inter) cm.inter = read_link(m["inter"], r, child(ip, "inter"));
            pl.comm_models.emplace_back(static_cast<primitive>(idx), cm);
        }
    }
    // Primitives with tables but no given model get a fitted one (when the tables identify it).
    for (int k = 0; k < primitive_count; ++k) {
        auto prim = static_cast<primitive>(k);
        bool given = std::any_of(pl.comm_models.begin(), pl.comm_models.end(),
                                 [&](const auto& pm) { return pm.first == prim; });
        if (given) continue;
        if (auto fitted = fit_comm_model(prim, pl.comm_tables)) pl.comm_models.emplace_back(prim, *fitted);
    }
}

int_range read_range(const json& obj, const reader& r, const std::string& path, std::string_view key, int_range dflt) {
    if (!obj.contains(key)) return dflt;
    std::string p = child(path, key);
    const json& v = obj.at(std::string(key));
    constexpr std::int64_t big = 1000000000000LL;
    if (v.is_number()) {
        std::int64_t x = r.integer(v, p, 1, big);
        return {x, x};
    }
    if (!v.is_array() || v.size() != 2) r.fail(p, "[lo, hi] with 1 <= lo <= hi, or one integer", v);
    int_range out{r.integer(v[0], child(p, 0), 1, big), r.integer(v[1], child(p, 1), 1, big)};
    if (out.lo > out.hi) r.fail(p, "[lo, hi] with lo <= hi", v);
    return out;
}

search_space read_search(const json& v, const reader& r, const std::string& path, const platform& pl) {
    search_space s;
    s.m = {1, pl.apus};
    s.p = {1, pl.apus};
    s.nodes = {1, pl.nodes};
    if (v.is_null()) return s;
    r.object(v, path);
    r.known_keys(v, path, detail::schema::search);
    s.m = read_range(v, r, path, "m", s.m);
    s.p = read_range(v, r, path, "p", s.p);
    s.nodes = read_range(v, r, path, "nodes", s.nodes);
    s.pol = static_cast<policy>(r.choice(v, path, "policy", {"edtlp", "os"}, 0, false));
    s.tolerance = r.number_or(v, path, "tolerance", 0.05, 0.0, false, "fraction of the best time");
    return s;
}

}  // namespace

namespace {
// The spreads written beside values: {"value": v, "spread"|"mad"|"std_error": s} at the top level of a profile.
std::vector<parameter_spread> read_spreads(const json& obj) {
    std::vector<parameter_spread> out;
    for (auto it = obj.begin(); it != obj.end(); ++it) {
        const json& v = it.value();
        if (!v.is_object() || !v.contains("value") || !v["value"].is_number()) continue;
        for (const char* key : {"spread", "mad", "std_error"})
            if (v.contains(key) && v[key].is_number() && v[key].get<double>() > 0 && std::isfinite(v[key].get<double>())) {
                out.push_back({it.key(), v[key].get<double>(), std::string(key) != "std_error"});
                break;
            }
    }
    return out;
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
}  // namespace

namespace {
// platform.hierarchy: {"levels": [{"name", "ranks", "forwarders", "path": [{"name", "latency_s", "bandwidth_Bps", "host"}]}]}
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
        const std::string ip = child(lp, i);
        const json& l = r.object(levels[i], ip);
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
            node_level = i;
        } else {
            if (i == 0) r.fail(child(ip, "ranks"), "the ranks of the innermost level", "nothing (the key is missing)");
            last_ranks = -1;
        }
        lv.forwarders = static_cast<int>(r.integer_or(l, ip, "forwarders", 0, 1, int_max));
        const std::string pp = child(ip, "path");
        if (!l.contains("path") || !l["path"].is_array() || l["path"].empty())
            r.fail(pp, "a non-empty array of path parts {\"name\", \"latency_s\", \"bandwidth_Bps\"}",
                   l.contains("path") ? describe(l["path"]) : "nothing (the key is missing)");
        for (std::size_t k = 0; k < l["path"].size(); ++k) {
            const std::string kp = child(pp, k);
            const json& part = r.object(l["path"][k], kp);
            r.known_keys(part, kp, {"name", "latency_s", "bandwidth_Bps", "host"});
            path_part pt;
            pt.name = r.string_at(part, kp, "name");
            pt.latency_s = r.number_at(part, kp, "latency_s", 0.0, false, "seconds");
            if (part.contains("bandwidth_Bps")) pt.s_per_byte = 1.0 / r.number_at(part, kp, "bandwidth_Bps", 0.0, true, "bytes per second");
            if (part.contains("host")) {
                if (!part["host"].is_boolean()) r.fail(child(kp, "host"), "true or false", part["host"]);
                pt.host = part["host"].get<bool>();
            }
            lv.path.push_back(std::move(pt));
        }
        h.levels.push_back(std::move(lv));
    }
    if (h.levels[node_level].ranks != apus)
        r.fail(child(child(lp, node_level), "ranks"),
               "the node's accelerators (apus = " + std::to_string(apus) + ") as the ranks of the outermost level with ranks",
               std::to_string(h.levels[node_level].ranks));
    return h;
}

// application.wavefront (docs/PROFILES.md).
wavefront read_wavefront(const json& v, const reader& r, const std::string& path) {
    r.object(v, path);
    r.known_keys(v, path, {"cells_per_rank", "cells", "angles", "k_block", "octants", "fills", "iterations", "t_cell_s",
                           "bytes_per_value", "dma_s_per_cell", "control_s_per_cell"});
    wavefront w;
    const bool pr = v.contains("cells_per_rank"), tot = v.contains("cells");
    if (pr == tot) r.fail(path, "exactly one of \"cells_per_rank\" and \"cells\"", pr ? "both" : "neither");
    w.per_rank = pr;
    const std::string cp = child(path, pr ? "cells_per_rank" : "cells");
    const json& c = v[pr ? "cells_per_rank" : "cells"];
    if (!c.is_array() || c.size() != 3) r.fail(cp, "[I, J, K] cells", c);
    for (std::size_t i = 0; i < 3; ++i) w.cells[i] = r.number(c[i], child(cp, i), 0.0, true, "cells");
    w.angles = r.number_or(v, path, "angles", 1.0, 0.0, true, "angles per octant");
    w.k_block = r.number_or(v, path, "k_block", 1.0, 0.0, true, "K planes per block");
    if (w.k_block > w.cells[2]) r.fail(child(path, "k_block"), "at most the K cells (" + format_double(w.cells[2]) + ")", v["k_block"]);
    w.octants = r.number_or(v, path, "octants", 8.0, 0.0, true, "sweeps per iteration");
    w.fills = r.number_or(v, path, "fills", w.octants, 0.0, false, "pipeline fills per iteration");
    if (w.fills > w.octants) r.fail(child(path, "fills"), "at most the octants (" + format_double(w.octants) + ")", v["fills"]);
    w.iterations = r.number_or(v, path, "iterations", 1.0, 0.0, true, "iterations");
    w.t_cell_s = r.number_at(v, path, "t_cell_s", 0.0, true, "seconds per cell and angle");
    w.bytes_per_value = r.number_or(v, path, "bytes_per_value", 8.0, 0.0, true, "bytes");
    w.has_host_driven = v.contains("dma_s_per_cell") || v.contains("control_s_per_cell");
    w.dma_s_per_cell = r.number_or(v, path, "dma_s_per_cell", 0.0, 0.0, false, "seconds per cell and angle");
    w.control_s_per_cell = r.number_or(v, path, "control_s_per_cell", 0.0, 0.0, false, "seconds per cell and angle");
    return w;
}
}  // namespace

platform platform_from_json(const json& obj, const reader& r, const std::string& path, const std::string& base_dir) {
    r.object(obj, path);
    r.known_keys(obj, path, detail::schema::platform);
    platform pl;
    pl.name = r.string_or(obj, path, "name", "");
    pl.hpu_contexts = static_cast<int>(r.integer_at(obj, path, "hpu_contexts", 1, int_max));
    pl.apus = static_cast<int>(r.integer_at(obj, path, "apus", 1, int_max));
    pl.nodes = static_cast<int>(r.integer_or(obj, path, "nodes", 1, 1, int_max));
    pl.max_processes_per_node = static_cast<int>(r.integer_or(obj, path, "max_processes_per_node", 0, 1, int_max));
    pl.cores = static_cast<int>(r.integer_or(obj, path, "cores", 0, 1, int_max));
    // Keys that describe time-shared cores only (refused without "cores").
    static constexpr std::pair<const char*, double platform::*> time_shared[] = {
        {"T_wake", &platform::T_wake},           {"T_wake_busy", &platform::T_wake_busy},
        {"spin_pause", &platform::spin_pause}, {"sched_slice", &platform::sched_slice}};
    for (const auto& [key, field] : time_shared) {
        if (!obj.contains(key)) continue;
        if (pl.cores == 0)
            r.fail(child(path, key), std::string(key) + " only with \"cores\" (time-shared cores)",
                   std::string(key) + " without cores");
        pl.*field = r.number_at(obj, path, key, 0.0, false, "seconds");
    }
    pl.O_offload = r.number_at(obj, path, "O_offload", 0.0, false, "seconds");
    pl.T_csw = r.number_at(obj, path, "T_csw", 0.0, false, "seconds");
    if (!obj.contains("alpha"))
        r.fail(child(path, "alpha"), "a number or {\"constant\"|\"table\"|\"linear\": ...}", "nothing (the key is missing)");
    pl.alpha = read_m_function(obj["alpha"], r, child(path, "alpha"), true);
    if (obj.contains("dma")) {
        pl.has_dma = true;
        pl.dma = read_link(obj["dma"], r, child(path, "dma"));
    }
    if (obj.contains("network")) read_network(obj["network"], r, child(path, "network"), pl, base_dir);
    if (obj.contains("hierarchy")) pl.hier = read_hierarchy(obj["hierarchy"], r, child(path, "hierarchy"), pl.apus);
    pl.provenance = read_provenance(obj);
    return pl;
}

application application_from_json(const json& obj, const reader& r, const std::string& path) {
    r.object(obj, path);
    r.known_keys(obj, path, detail::schema::application);
    application a;
    a.name = r.string_or(obj, path, "name", "");
    a.decomp = static_cast<decomposition>(r.choice(obj, path, "decomposition", {"data", "task"}, 0, false));
    a.scale = static_cast<scaling>(r.choice(obj, path, "scaling", {"strong", "weak"}, 0, false));
    // With a wavefront description the off-load profile is optional: the wavefront alone describes the work.
    a.has_wavefront = obj.contains("wavefront");
    if (a.has_wavefront) a.wave = read_wavefront(obj["wavefront"], r, child(path, "wavefront"));
    auto profile_number = [&](std::string_view key, const char* what) {
        return a.has_wavefront ? r.number_or(obj, path, key, 0.0, 0.0, false, what) : r.number_at(obj, path, key, 0.0, false, what);
    };
    a.N = profile_number("N", "off-loading phases");
    a.T_hpu = profile_number("T_hpu", "seconds");
    a.T_apu = profile_number("T_apu", "seconds");
    a.C_apu = profile_number("C_apu", "seconds");
    if (!a.has_wavefront && !(a.T_hpu + a.T_apu + a.C_apu > 0))  // no work: every mapping takes 0 s and none is best
        r.fail(child(path, "T_apu"), "a program with work: T_hpu + T_apu + C_apu > 0",
               "0 for T_hpu, T_apu and C_apu");
    if (!std::isfinite(a.T_hpu + a.T_apu + a.C_apu))
        r.fail(child(path, "T_apu"), "T_hpu + T_apu + C_apu finite (seconds)", "a sum that overflows");
    a.g = profile_number("g", "seconds per phase per APU");
    a.g_charge = static_cast<gap_charge>(r.choice(obj, path, "g_charge", {"per_apu", "per_extra_apu"}, 0, false));
    if (obj.contains("spin_limit")) {
        const json& v = obj["spin_limit"];
        if (v.is_string() && v.get<std::string>() == "unbounded")
            a.spin_limit = application::spin_unbounded;
        else if (v.is_number_integer())
            a.spin_limit = r.integer_at(obj, path, "spin_limit", 0, 1000000000000LL);
        else
            r.fail(child(path, "spin_limit"), "an integer >= 0 (spin iterations before blocking) or \"unbounded\"",
                   detail::describe(v));
    }
    a.T_start = r.number_or(obj, path, "T_start", 0.0, 0.0, false, "seconds per process");
    a.N_start = r.number_or(obj, path, "N_start", 0.0, 0.0, false, "off-loads of the start-up, per process");
    if (obj.contains("T_offload_idle"))
        a.T_offload_idle = r.number_at(obj, path, "T_offload_idle", 0.0, false, "seconds per off-load");
    if (obj.contains("O_col")) a.O_col = read_m_function(obj["O_col"], r, child(path, "O_col"), false);
    if (a.decomp == decomposition::task)
        a.units = r.integer_at(obj, path, "units", 1, 1000000000000LL);
    else
        a.units = r.integer_or(obj, path, "units", 1, 1, 1000000000000LL);
    a.dma_bytes = r.number_or(obj, path, "dma_bytes", 0.0, 0.0, false, "bytes per off-load");
    if (obj.contains("communication")) {
        std::string cp = child(path, "communication");
        const json& cs = obj["communication"];
        if (!cs.is_array()) r.fail(cp, "an array of {\"primitive\", \"bytes\", \"count\"}", cs);
        for (std::size_t i = 0; i < cs.size(); ++i) {
            std::string ip = child(cp, i);
            r.object(cs[i], ip);
            r.known_keys(cs[i], ip, {"primitive", "bytes", "count"});
            comm_pattern p;
            p.prim = read_primitive(cs[i], r, ip);
            p.bytes = r.number_at(cs[i], ip, "bytes", 0.0, false, "bytes per operation");
            p.count = r.number_or(cs[i], ip, "count", 1.0, 0.0, false, "operations per phase");
            a.comm.push_back(p);
        }
    }
    a.spreads = read_spreads(obj);
    return a;
}

scenario scenario_from_json(const json& doc, const std::string& file, const std::string& base_dir,
                            const section_patches& patches) {
    reader r{file};
    r.object(doc, "");
    r.known_keys(doc, "", detail::schema::scenario);
    if (doc.contains("schema")) {
        const json& sc = doc["schema"];
        if (!sc.is_string() || sc.get<std::string>() != "mmgp/1") r.fail("/schema", "\"mmgp/1\"", sc);
    }
    scenario s;
    s.file = file;
    s.name = r.string_or(doc, "", "name", "");

    auto patched = [](json obj, const std::vector<const json*>& ps) {
        for (const json* p : ps) obj.merge_patch(*p);
        return obj;
    };
    auto section = [&](const char* key, const char* kind, const std::vector<const json*>& ps, auto&& parse) {
        std::string path = std::string("/") + key;
        if (!doc.contains(key)) r.fail(path, std::string("an object or the name of a bundled ") + kind + " profile",
                                       "nothing (the key is missing)");
        const json& v = doc[key];
        if (v.is_string()) {
            located_json lj = load_ref(v.get<std::string>(), kind, base_dir, file, path);
            reader rr{ps.empty() ? lj.file : file + " (patched " + lj.file + ")"};
            return parse(patched(std::move(lj.doc), ps), rr, std::string(""), lj.base_dir);
        }
        if (!v.is_object()) r.fail(path, std::string("an object or the name of a bundled ") + kind + " profile", v);
        if (!ps.empty()) return parse(patched(v, ps), reader{file + " (patched)"}, path, base_dir);
        return parse(v, r, path, base_dir);
    };
    s.plat = section("platform", "platforms", patches.platform,
                     [](const json& o, const reader& rr, const std::string& p, const std::string& dir) {
                         return platform_from_json(o, rr, p, dir);
                     });
    s.app = section("application", "apps", patches.application,
                    [](const json& o, const reader& rr, const std::string& p, const std::string&) {
                        return application_from_json(o, rr, p);
                    });
    json search = doc.contains("search") ? doc["search"] : json();
    if (!patches.search.empty()) {
        if (search.is_null()) search = json::object();
        if (search.is_object()) search = patched(std::move(search), patches.search);
    }
    s.space = read_search(search, r, "/search", s.plat);
    check_coverage(s);
    return s;
}

section_patches edits_patches(const scenario_edits& edits, std::vector<json>& owned) {
    owned.clear();
    owned.reserve(3);
    section_patches out;
    auto add = [&](const std::string& text, std::vector<const json*>& to) {
        if (text.empty()) return;
        owned.push_back(parse_json(text, "--set"));
        if (!owned.back().is_object()) throw input_error("--set", "", "an object of edits", describe(owned.back()));
        to.push_back(&owned.back());
    };
    add(edits.platform, out.platform);
    add(edits.application, out.application);
    add(edits.search, out.search);
    return out;
}

}  // namespace detail

namespace {

// Where each model_subject lives in a scenario file.
std::string model_location(model_subject subject, std::size_t index) {
    switch (subject) {
        case model_subject::nodes_range: return "/search/nodes";
        case model_subject::transfer_cost: return "/platform/dma";
        case model_subject::search_size: return "/search";
        case model_subject::communication:
            return detail::child(detail::child("/application/communication", index), "primitive");
    }
    return "";
}

}  // namespace

model_error::model_error(std::string file, model_subject subject, std::size_t index, std::string expected, std::string found)
    : input_error(std::move(file), model_location(subject, index), std::move(expected), std::move(found)),
      subject_(subject),
      index_(index) {}

space_bounds bounds(const scenario& s) noexcept {
    const auto& pl = s.plat;
    const auto& sp = s.space;
    // m and p can never exceed A (m*p <= A), nodes never exceed the platform's.
    space_bounds b{sp.m.lo, std::min<std::int64_t>(sp.m.hi, pl.apus), sp.p.lo, std::min<std::int64_t>(sp.p.hi, pl.apus),
                   sp.nodes.lo, std::min<std::int64_t>(sp.nodes.hi, pl.nodes), pl.apus};
    if (pl.max_processes_per_node > 0) b.m_hi = std::min<std::int64_t>(b.m_hi, pl.max_processes_per_node);
    return b;
}

void narrow(scenario& s, const configuration& c) noexcept {
    s.space.m = {c.m, c.m};
    s.space.p = {c.p, c.p};
    s.space.nodes = {c.nodes, c.nodes};
    s.space.pol = c.pol;
}

void check_coverage(const scenario& s) {
    detail::reader r{s.file};
    const auto& pl = s.plat;
    const auto& sp = s.space;
    const space_bounds b = bounds(s);
    const std::int64_t n_hi = b.n_hi;
    // Feasible configurations exist iff the smallest m and p fit: m_lo * p_lo <= apus (no overflow).
    const std::int64_t m_top = b.m_top();
    if (sp.m.lo > m_top || sp.nodes.lo > n_hi) {
        std::string why = "m " + std::to_string(sp.m.lo) + ".." + std::to_string(sp.m.hi) + ", p " +
                          std::to_string(sp.p.lo) + ".." + std::to_string(sp.p.hi) + ", nodes " +
                          std::to_string(sp.nodes.lo) + ".." + std::to_string(sp.nodes.hi) + " with apus " +
                          std::to_string(pl.apus) + " and nodes " + std::to_string(pl.nodes);
        r.fail("/search", "a search space with at least one configuration with m*p <= apus and nodes <= platform nodes",
               "an empty space (" + why + ")");
    }
    // Every α(k) and O_col(k) the model can ask for: k in [m_lo, m_top], and for the os policy the
    // round sizes H and m - (rounds-1)*H (which take every value in 1..H once m > H). Tables are
    // finite, so the walk stops at the first k a table lacks.
    const int H = pl.hpu_contexts;
    auto first_missing = [&](const m_function& f) -> std::int64_t {
        if (f.kind != m_function::form::table) return 0;
        auto covered = [&](std::int64_t k) { return k == 1 || (k < static_cast<std::int64_t>(f.table.size()) && f.covers(static_cast<int>(k))); };
        for (std::int64_t k = sp.m.lo; k <= m_top; ++k)
            if (!covered(k)) return k;
        if (m_top > H)
            for (std::int64_t k = 1; k <= H; ++k)
                if (!covered(k)) return k;
        return 0;
    };
    auto check = [&](const m_function& f, const std::string& path) {
        std::int64_t k = first_missing(f);
        if (k == 0) return;
        std::string have;
        for (std::size_t i = 1; i < f.table.size(); ++i)
            if (!std::isnan(f.table[i])) have += (have.empty() ? "" : ", ") + std::to_string(i);
        r.fail(path, "an entry for m = " + std::to_string(k) + " (the search covers m = " + std::to_string(sp.m.lo) +
                         ".." + std::to_string(m_top) + ")",
               "entries for m = " + have);
    };
    check(pl.alpha, "/platform/alpha/table");
    check(s.app.O_col, "/application/O_col/table");
    if (pl.alpha.kind == m_function::form::linear && m_top >= 2) {
        // slope >= 0, so the smallest α(k) over k >= 2 is α(2).
        double a = pl.alpha.intercept + pl.alpha.slope * 2 / pl.hpu_contexts;
        if (!(a > 0)) r.fail("/platform/alpha/linear", "a linear form positive for every searched m",
                             "alpha(2) = " + detail::format_double(a));
    }
}

scenario parse_scenario(std::string_view json_text, const std::string& file, const std::string& base_dir) {
    return detail::scenario_from_json(detail::parse_json(json_text, file), file, base_dir);
}

scenario load_scenario(const std::string& path_or_name) { return load_scenario(path_or_name, scenario_edits{}); }

scenario load_scenario(const std::string& path_or_name, const scenario_edits& edits) {
    std::vector<detail::json> owned;
    const detail::section_patches patches = detail::edits_patches(edits, owned);
    detail::located_json lj = detail::load_ref(path_or_name, "scenarios", ".", path_or_name, "");
    return detail::scenario_from_json(lj.doc, lj.file, lj.base_dir, patches);
}

platform load_platform(const std::string& path_or_name, const std::string& edit) {
    detail::located_json lj = detail::load_ref(path_or_name, "platforms", ".", path_or_name, "");
    if (edit.empty()) return detail::platform_from_json(lj.doc, detail::reader{lj.file}, "", lj.base_dir);
    std::vector<detail::json> owned;
    const detail::section_patches patches = detail::edits_patches(scenario_edits{edit, "", ""}, owned);
    lj.doc.merge_patch(*patches.platform.front());
    return detail::platform_from_json(lj.doc, detail::reader{lj.file + " (patched)"}, "", lj.base_dir);
}

platform parse_platform(std::string_view json_text, const std::string& file) {
    return detail::platform_from_json(detail::parse_json(json_text, file), detail::reader{file}, "", detail::dir_of(file));
}

application parse_application(std::string_view json_text, const std::string& file) {
    return detail::application_from_json(detail::parse_json(json_text, file), detail::reader{file}, "");
}

platform load_platform(const std::string& path_or_name) {
    detail::located_json lj = detail::load_ref(path_or_name, "platforms", ".", path_or_name, "");
    return detail::platform_from_json(lj.doc, detail::reader{lj.file}, "", lj.base_dir);
}

application load_application(const std::string& path_or_name) {
    detail::located_json lj = detail::load_ref(path_or_name, "apps", ".", path_or_name, "");
    return detail::application_from_json(lj.doc, detail::reader{lj.file}, "");
}

}  // namespace mmgp
