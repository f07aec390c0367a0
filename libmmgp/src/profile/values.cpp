// The value shapes both profile types use: the names of their choices, a function of m (α, O_col), a link cost, a
// communication primitive, the spreads written beside values. Called by the platform and application readers;
// calls the JSON reader only.
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "model/comm.hpp"
#include "profile/profile_json.hpp"

namespace mmgp {

std::string_view to_string(decomposition d) noexcept { return d == decomposition::data ? "data" : "task"; }
std::string_view to_string(scaling s) noexcept { return s == scaling::strong ? "strong" : "weak"; }
std::string_view to_string(policy p) noexcept { return p == policy::edtlp ? "edtlp" : "os"; }
std::string_view to_string(primitive p) noexcept { return detail::primitive_names[static_cast<int>(p)]; }

bool parse_policy(std::string_view text, policy& out) noexcept {
    static constexpr std::pair<std::string_view, policy> names[] = {{"edtlp", policy::edtlp}, {"os", policy::os}};
    return detail::parse_named(text, names, out);
}

namespace {
constexpr std::pair<std::string_view, accelerator_sharing> sharing_names[] = {
    {"dedicated", accelerator_sharing::dedicated}, {"mps", accelerator_sharing::mps}, {"time_sliced", accelerator_sharing::time_sliced}};
}

std::string_view to_string(accelerator_sharing a) noexcept { return detail::name_of(a, sharing_names, "dedicated"); }

bool parse_sharing(std::string_view text, accelerator_sharing& out) noexcept { return detail::parse_named(text, sharing_names, out); }

bool m_function::covers(int m) const noexcept {
    if (kind != form::table) return m >= 1;
    return m >= 1 && static_cast<std::size_t>(m) < table.size() && !std::isnan(table[static_cast<std::size_t>(m)]);
}

double slot_curve::at(double blocks_per_apu) const noexcept {
    if (!(blocks_per_apu > 1) || k.empty()) return std::max(1.0, blocks_per_apu);
    const double c = std::ceil(blocks_per_apu - 1e-9);  // the most loaded accelerator sets the grid's time
    if (c >= k.back()) return factor.back() * c / k.back();  // beyond the last point: waves at its throughput
    std::size_t i = 1;
    while (k[i] < c) ++i;
    const double w = (c - k[i - 1]) / (k[i] - k[i - 1]);
    return factor[i - 1] + w * (factor[i] - factor[i - 1]);
}

namespace detail {

slot_curve read_slot_curve(const json& v, const reader& r, const std::string& path) {
    static const char* expected = "an array of [blocks per accelerator, time factor] pairs from [1, 1], blocks increasing";
    if (!v.is_array() || v.empty() || v.size() > slot_curve::max_points) r.fail(path, expected, v);
    slot_curve c;
    for (std::size_t i = 0; i < v.size(); ++i) {
        const std::string ip = child(path, i);
        if (!v[i].is_array() || v[i].size() != 2) r.fail(ip, "a [blocks per accelerator, time factor] pair", v[i]);
        const double k = r.number(v[i][0], child(ip, 0), at_least(1.0, "blocks per accelerator"));
        const double f = r.number(v[i][1], child(ip, 1), above(0.0, "time factor"));
        if (i == 0 && (k != 1 || f != 1)) r.fail(ip, "[1, 1] first (one block per accelerator is the unit)", v[i]);
        if (i > 0 && !(k > c.k.back())) r.fail(child(ip, 0), "blocks above " + format_double(c.k.back()), v[i][0]);
        if (k > slot_curve::max_blocks)
            r.fail(child(ip, 0), "at most " + format_double(slot_curve::max_blocks) + " blocks per accelerator", v[i][0]);
        if (f > slot_curve::max_factor_per_block * k)
            r.fail(child(ip, 1), "a time factor of at most 10 x the blocks (" +
                                     format_double(slot_curve::max_factor_per_block * k) + ")", v[i][1]);
        c.k.push_back(k);
        c.factor.push_back(f);
    }
    return c;
}

namespace {

// The units errors name, and whether 0 is refused (a contention factor is > 0, a time >= 0).
struct m_units {
    const char* what;
    bool strict;
    const char* intercept;
    const char* slope;
    double most;          // the largest value a machine can have (a value above it overflows what is made of it)
    const char* meaning;  // what that bound is
};

m_units units_of(m_quantity q) {
    if (q == m_quantity::contention)
        return {"contention factor", true, "factor", "factor per thread per context", 1e6,
                "a contention factor: one thread slowed a million times"};
    return {"seconds", false, "seconds", "seconds", max_operation_s, "seconds: the cost of one operation on a machine"};
}

// A value of an m-function read below u.most, else refused where it stands.
double at_most(const reader& r, double v, const json& raw, const std::string& path, const m_units& u) {
    if (v > u.most) r.fail(path, "at most " + format_double(u.most) + " (" + u.meaning + ")", raw);
    return v;
}

m_function read_linear(const json& v, const reader& r, const std::string& path, const m_units& u) {
    const std::string lp = child(path, "linear");
    const json& l = r.object(v["linear"], lp);
    r.known_keys(l, lp, {"intercept", "slope"});
    m_function f;
    f.kind = m_function::form::linear;
    f.intercept = at_most(r, r.number_at(l, lp, "intercept", at_least(-1e300, u.intercept)), l["intercept"],
                          child(lp, "intercept"), u);
    if (f.intercept < -u.most)
        r.fail(child(lp, "intercept"), "at least " + format_double(-u.most) + " (" + u.meaning + ")", l["intercept"]);
    f.slope = at_most(r, r.number_at(l, lp, "slope", at_least(0.0, u.slope)), l["slope"], child(lp, "slope"), u);
    return f;
}

// {"m": value, ...}: keys are process counts, the table holds NaN where it has no entry.
m_function read_table(const json& v, const reader& r, const std::string& path, const m_units& u) {
    const std::string tp = child(path, "table");
    const json& t = r.object(v["table"], tp);
    if (t.empty()) r.fail(tp, "a table with at least one entry {\"m\": value}", "an empty object");
    std::vector<std::pair<int, double>> entries;
    for (auto it = t.begin(); it != t.end(); ++it) {
        const std::string& k = it.key();
        std::int64_t m = 0;
        // Written as a count is written ("2", never "02"): two spellings of one m would leave one value unread.
        bool ok = !k.empty() && k.size() <= 9 && k[0] != '0' &&
                  std::all_of(k.begin(), k.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (ok) m = std::stoll(k);
        if (!ok || m < 1 || m > 100000000)
            r.fail(child(tp, k), "a key that is a process count m between 1 and 100000000, written without leading zeros",
                   "the key " + json(k).dump());
        entries.emplace_back(static_cast<int>(m), at_most(r, r.number(it.value(), child(tp, k), number_range{0.0, u.strict, u.what}),
                                                          it.value(), child(tp, k), u));
    }
    int maxm = 0;
    for (const auto& e : entries) maxm = std::max(maxm, e.first);
    m_function f;
    f.kind = m_function::form::table;
    f.table.assign(static_cast<std::size_t>(maxm) + 1, std::numeric_limits<double>::quiet_NaN());
    for (const auto& e : entries) f.table[static_cast<std::size_t>(e.first)] = e.second;
    return f;
}

}  // namespace

m_function read_m_function(const json& v, const reader& r, const std::string& path, m_quantity q) {
    const m_units u = units_of(q);
    m_function f;
    if (v.is_number()) {
        f.value = at_most(r, r.number(v, path, number_range{0.0, u.strict, u.what}), v, path, u);
        return f;
    }
    if (!v.is_object()) r.fail(path, std::string("a number or an object with \"constant\", \"table\" or \"linear\""), v);
    r.known_keys(v, path, {"constant", "table", "linear", "value"});
    int forms = static_cast<int>(v.contains("constant")) + static_cast<int>(v.contains("table")) +
                static_cast<int>(v.contains("linear")) + static_cast<int>(v.contains("value"));
    if (forms != 1) r.fail(path, "exactly one of \"constant\", \"table\", \"linear\"", std::to_string(forms) + " of them");
    if (v.contains("value") || v.contains("constant")) {
        const char* key = v.contains("value") ? "value" : "constant";
        f.value = at_most(r, r.number(v[key], child(path, key), number_range{0.0, u.strict, u.what}), v[key],
                          child(path, key), u);
        return f;
    }
    if (v.contains("linear")) return read_linear(v, r, path, u);
    return read_table(v, r, path, u);
}

link_cost read_link(const json& v, const reader& r, const std::string& path) {
    r.object(v, path);
    r.known_keys(v, path, {"latency_s", "bandwidth_Bps", "s_per_byte"});
    link_cost c;
    c.latency_s = r.number_at(v, path, "latency_s", at_least(0.0, "seconds"));
    if (c.latency_s > max_operation_s)
        r.fail(child(path, "latency_s"), "at most " + format_double(max_operation_s) + " seconds (one transfer's latency)",
               v["latency_s"]);
    bool bw = v.contains("bandwidth_Bps"), spb = v.contains("s_per_byte");
    if (bw == spb) r.fail(path, "exactly one of \"bandwidth_Bps\" and \"s_per_byte\"", bw ? "both" : "neither");
    if (bw)
        c.s_per_byte = 1.0 / r.number_at(v, path, "bandwidth_Bps", above(0.0, "bytes per second"));
    else
        c.s_per_byte = r.number_at(v, path, "s_per_byte", at_least(0.0, "seconds per byte"));
    if (c.s_per_byte > max_operation_s)
        r.fail(child(path, bw ? "bandwidth_Bps" : "s_per_byte"),
               bw ? std::string("at least one byte an hour (1/3600 bytes per second)")
                  : "at most " + format_double(max_operation_s) + " seconds per byte (a byte an hour)",
               v[bw ? "bandwidth_Bps" : "s_per_byte"]);
    return c;
}

primitive read_primitive(const json& obj, const reader& r, const std::string& path) {
    return static_cast<primitive>(r.choice(obj, path, "primitive", primitive_names, 0, true));
}

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

}  // namespace detail

}  // namespace mmgp
