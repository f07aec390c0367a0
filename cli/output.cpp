#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <iostream>
#include <stdexcept>

#include "common.hpp"
#include "options.hpp"

namespace mmgp::cli {

int_range parse_range(const std::string& option, const std::string& text) {
    auto bad = [&]() -> usage_error {
        return usage_error(option + ": expected N or LO:HI with 1 <= LO <= HI <= 1000000000000, found \"" + text + "\"");
    };
    auto parse_int = [&](std::string_view s) {
        long long v = 0;
        auto r = std::from_chars(s.data(), s.data() + s.size(), v);
        if (r.ec != std::errc() || r.ptr != s.data() + s.size() || v < 1 || v > 1000000000000LL) throw bad();
        return static_cast<std::int64_t>(v);
    };
    auto colon = text.find(':');
    if (colon == std::string::npos) {
        auto v = parse_int(text);
        return {v, v};
    }
    int_range r{parse_int(std::string_view(text).substr(0, colon)), parse_int(std::string_view(text).substr(colon + 1))};
    if (r.lo > r.hi) throw bad();
    return r;
}

model_kind parse_model_option(const std::string& text) {
    model_kind k;
    if (!parse_model(text, k)) throw usage_error("--model: expected eq11 or mmgp, found \"" + text + "\"");
    return k;
}

policy parse_policy_option(const std::string& text) {
    policy p;
    if (!parse_policy(text, p)) throw usage_error("--policy: expected edtlp or os, found \"" + text + "\"");
    return p;
}

void add_space_options(CLI::App* sub, space_options_cli& o) {
    add_checked(sub, "--model", o.model,
                "eq11: [H] Eq. 11 verbatim (one node); mmgp: the engine's model (task decomposition, host "
                "oversubscription, cluster term). Default mmgp");
    add_checked(sub, "--policy", o.policy, "Host scheduling policy: edtlp (switch on every off-load) or os; overrides search.policy");
    add_checked(sub, "--m", o.m, "Processes per node: N fixes it, LO:HI restricts the search (overrides search.m)");
    add_checked(sub, "--p", o.p, "Accelerators (threads) per process: N or LO:HI (overrides search.p)");
    add_checked(sub, "--nodes", o.nodes, "Nodes: N or LO:HI (overrides search.nodes)");
}

void apply_space_options(const space_options_cli& o, scenario& s) {
    if (!o.policy.empty()) s.space.pol = parse_policy_option(o.policy);
    if (!o.m.empty()) s.space.m = parse_range("--m", o.m);
    if (!o.p.empty()) s.space.p = parse_range("--p", o.p);
    if (!o.nodes.empty()) s.space.nodes = parse_range("--nodes", o.nodes);
    if (o.narrowed() || !o.policy.empty()) check_coverage(s);
}

void write_profile(const std::string& path, const std::string& text, profile_kind kind, std::string_view command) {
    const std::string name = "<" + std::string(command) + " output>";
    try {
        if (kind == profile_kind::platform)
            (void)parse_platform(text, name);
        else
            (void)parse_application(text, name);
    } catch (const mmgp::error& e) {
        throw std::logic_error(std::string(command) + ": the profile written does not read back: " + e.what() +
                               " (nothing written)");
    }
    if (path.empty())
        std::cout << text << std::flush;
    else
        write_file_atomically(path, text);
}

std::string num(double v) {
    if (!std::isfinite(v)) return "null";
    return fmt::format("{}", v);
}

std::string human_time(double s) {
    double a = std::fabs(s);
    if (a >= 1.0 || a == 0.0) return fmt::format("{:.2f} s", s);
    if (a >= 1e-3) return fmt::format("{:.3g} ms", s * 1e3);
    if (a >= 1e-6) return fmt::format("{:.3g} us", s * 1e6);
    return fmt::format("{:.3g} ns", s * 1e9);
}

std::string label(const configuration& c) { return fmt::format("m={} p={} nodes={}", c.m, c.p, c.nodes); }

std::string breakdown_json(const breakdown& b) {
    return fmt::format(
        "{{\"host\": {}, \"accelerator\": {}, \"offload\": {}, \"context_switch\": {}, \"communication\": {}, "
        "\"spin\": {}, \"startup\": {}, \"extrapolated\": {}}}",
        num(b.host), num(b.accelerator), num(b.offload), num(b.context_switch), num(b.communication), num(b.spin),
        num(b.startup), b.extrapolated ? "true" : "false");
}

std::string quote(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            case '\r': out += "\\r"; break;
            default:
                if (c < 0x20)
                    out += fmt::format("\\u{:04x}", c);
                else
                    out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

}  // namespace mmgp::cli
