// The table of option values (cli/options.hpp). One row per option: what it takes and its range.
#include "options.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <iterator>
#include <stdexcept>

#include "common.hpp"
#include "process.hpp"  // run/: find_program()

namespace mmgp::cli {

namespace {
using K = value_kind;
constexpr double big = 1e12;  // counts of units, nodes, processes: the engine's own bound

// The rows, in the order they are searched: a command's own rule before a "*" one.
constexpr value_rule rule_table[] = {
    // shared by every subcommand that has the option
    {"*", "--model", K::word, 0, 0, false, false, "eq11|mmgp"},
    {"*", "--policy", K::word, 0, 0, false, false, "edtlp|os"},
    {"*", "--m", K::range},
    {"*", "--p", K::range},
    {"*", "--nodes", K::range},
    {"*", "--output", K::text},
    {"*", "--name", K::text},
    {"*", "profile", K::text},
    {"*", "--max-age", K::real, 0, 36500},
    {"*", "--set", K::assignment, 0, 0, false, false, "platform|application|search"},
    {"fit", "--set", K::assignment, 0, 0, false, false, "platform"},
    {"*", "--objective", K::word, 0, 0, false, false, "time|node-hours|core-hours"},
    {"*", "--within", K::real, 0, 1, true},
    {"*", "--max-nodes", K::count, 1, big},
    {"*", "--budget", K::real, 0, 1e15, true},
    // predict
    {"predict", "--tolerance", K::real, 0, 1},  // a fraction, as tune's and --within: "5" would be 500 %
    {"predict", "--top", K::count, 1, 1e6},
    {"predict", "--plot", K::text},
    // validate: the CI gates (a negative or NaN bound would make the gate pass silently)
    {"validate", "file", K::text},
    {"validate", "--max-mean-err", K::real, 0, 1e9},
    {"validate", "--max-err", K::real, 0, 1e9},
    // fit
    {"fit", "measurements", K::text},
    {"fit", "--platform", K::text},
    {"fit", "--decomposition", K::word, 0, 0, false, false, "task|data"},
    {"fit", "--scaling", K::word, 0, 0, false, false, "strong|weak"},
    {"fit", "--N", K::real, 0, big},
    {"fit", "--N-start", K::real, 0, big},
    {"fit", "--waits-per-offload", K::real, 0, big},
    {"fit", "--spin-limit", K::text},
    {"fit", "--fix", K::text},
    {"fit", "--noise", K::real, 0, 100, true},
    // calibrate
    {"calibrate", "--hpu-cpus", K::text},
    {"calibrate", "--apu-cpus", K::text},
    {"calibrate", "--cv-threshold", K::real, 0, 10, true, true},
    {"calibrate", "--max-threads", K::count, 1, 1e6},
    {"calibrate", "--from", K::text},
    {"calibrate", "--simulate", K::text},
    {"calibrate", "--node", K::text},
    {"calibrate", "--ppn", K::count, 1, 1024},
    {"calibrate", "--accelerator", K::text},
    // profile
    {"profile", "--alignment", K::text},
    {"profile", "--accelerator", K::word, 0, 0, false, false, "cpu|cuda"},
    {"profile", "--simulate", K::text},
    {"profile", "--platform", K::text},
    {"profile", "--policy", K::word, 0, 0, false, false, "edtlp|os"},
    {"profile", "--taxa", K::count, 3, 1e7},
    {"profile", "--sites", K::count, 2, 1e9},
    {"profile", "--units", K::count, 1, 1e6},
    {"profile", "--repetitions", K::count, 1, 1000},
    {"profile", "--rounds", K::count, 1, 100},
    {"profile", "--newton", K::count, 1, 100},
    {"profile", "--seed", K::count, 0, 4294967295.0},
    // launch
    {"launch", "--launcher", K::word, 0, 0, false, false, "openmpi|mpich|srun|local"},
    {"launch", "--units", K::count, 1, big},
    {"launch", "--cores-per-node", K::count, 1, 1e6},
    {"launch", "--launcher-program", K::text},
    {"launch", "--cuda-devices", K::text},
    // tune
    {"tune", "--policy", K::word, 0, 0, false, false, "edtlp|os|both"},
    {"tune", "--app", K::text},
    {"tune", "--launcher", K::word, 0, 0, false, false, "openmpi|mpich|srun|local"},
    {"tune", "--units", K::count, 1, big},
    {"tune", "--cores-per-node", K::count, 1, 1e6},
    {"tune", "--launcher-program", K::text},
    {"tune", "--replay", K::text},
    {"tune", "--seed", K::count, 0, 1.8e19},
    {"tune", "--replay-first", K::word, 0, 0, false, false, "random|slowest"},
    {"tune", "--parallel", K::count, 1, 1024},
    {"tune", "--journal", K::text},
    {"tune", "--resume", K::text},
    {"tune", "--tolerance", K::real, 0, 1, true},
    {"tune", "--confidence", K::real, 0, 1, true, true},
    {"tune", "--max-runs", K::count, 0, 1e6},
    {"tune", "--max-seconds", K::real, 0, 1e9, true},
    {"tune", "--max-cost", K::text},
    {"tune", "--work", K::text},
    {"tune", "--progress-regex", K::text},
    {"tune", "--progress-total", K::real, 0, 1e15, true},
    {"tune", "--uses", K::count, 1, 1e12},
    {"tune", "--timeout", K::real, 0, 1e9, true},
    {"tune", "--bound-factor", K::real, 1, 1e6, true},
    {"tune", "--constant", K::assignment, 0, 0, false, false, "noise|model|discrepancy|fit|policy|bound|progress|short|fallback"},
    // the values of `mmgp tune --constant NAME=VALUE`, one row per constant (cli/cmd_tune.cpp set_constant)
    {"tune --constant", "noise.sd", K::real, 1e-4, 2},
    {"tune --constant", "noise.dof", K::real, 0.1, 1e3},
    {"tune --constant", "noise.few_runs_noisiest", K::word, 0, 0, false, false, "0|1"},
    {"tune --constant", "model.error", K::real, 1e-3, 5},
    {"tune --constant", "discrepancy.length_scale", K::real, 0.05, 100},
    {"tune --constant", "fit.prior_weight", K::real, 1e-3, 100},
    {"tune --constant", "fit.min_configurations", K::count, 1, 1000},
    {"tune --constant", "policy.knowledge_gradient", K::word, 0, 0, false, false, "0|1"},
    {"tune --constant", "policy.explore_platform", K::word, 0, 0, false, false, "0|1"},
    {"tune --constant", "policy.first_platform", K::word, 0, 0, false, false, "0|1"},
    {"tune --constant", "bound.noise_z", K::real, 0, 10},
    {"tune --constant", "progress.chosen_z", K::real, 0, 10},
    {"tune --constant", "short.explore_pairs", K::count, 0, 1000},
    {"tune --constant", "fallback.trust", K::word, 0, 0, false, false, "noise|calibrated|never|always"},
    {"tune", "--plot", K::text},
};
}  // namespace

const std::vector<value_rule>& value_rules() {
    static const std::vector<value_rule> rules(std::begin(rule_table), std::end(rule_table));
    return rules;
}

const value_rule& rule_for(std::string_view command, std::string_view option) {
    for (const auto& r : value_rules())
        if (r.command == command && r.option == option) return r;
    for (const auto& r : value_rules())
        if (r.command == "*" && r.option == option) return r;
    throw std::logic_error(fmt::format("no value rule for {} {}", command, option));
}

namespace {

std::string shown(double v) {  // whole numbers in full (1000000000, not 1e+09)
    return v == std::floor(v) && std::fabs(v) < 1e15 ? fmt::format("{:.0f}", v) : fmt::format("{:g}", v);
}

std::string expected(const value_rule& r) {
    switch (r.kind) {
        case K::count: return fmt::format("an integer in [{}, {}]", shown(r.lo), shown(r.hi));
        case K::real:
            return fmt::format("a number in {}{}, {}{}", r.lo_open ? "(" : "[", shown(r.lo), shown(r.hi), r.hi_open ? ")" : "]");
        case K::text: return "a non-empty value";
        case K::range: return "N or LO:HI with 1 <= LO <= HI <= 1000000000000";
        case K::assignment: {
            std::string w(r.words);  // "a|b" -> "a.KEY=VALUE or b.KEY=VALUE"
            std::string out;
            for (std::size_t a = 0; a <= w.size();) {
                std::size_t b = w.find('|', a);
                if (b == std::string::npos) b = w.size();
                out += (out.empty() ? "" : b == w.size() ? " or " : ", ") + w.substr(a, b - a) + ".KEY=VALUE";
                a = b + 1;
            }
            return out;
        }
        case K::word: {
            std::string w(r.words);  // "a|b|c" -> "a, b or c"
            const std::size_t last = w.rfind('|');
            if (last != std::string::npos) w.replace(last, 1, " or ");
            for (std::size_t i; (i = w.find('|')) != std::string::npos;) w.replace(i, 1, ", ");
            return w;
        }
    }
    return "";
}

}  // namespace

namespace {
// True when `w` is one of the |-separated `words`.
bool one_of(std::string_view words, std::string_view w) {
    for (std::size_t a = 0; a <= words.size();) {
        std::size_t b = words.find('|', a);
        if (b == std::string_view::npos) b = words.size();
        if (words.substr(a, b - a) == w) return true;
        a = b + 1;
    }
    return false;
}
}  // namespace

bool decimal_text(const std::string& text) {
    return !text.empty() && text.find_first_not_of("0123456789+-.eE") == std::string::npos;
}

std::string check_value(const value_rule& r, const std::string& text) {
    const std::string bad = fmt::format("expected {}, found \"{}\"", expected(r), text);
    if (text.empty()) return fmt::format("expected {}, found an empty value", expected(r));
    switch (r.kind) {
        case K::text: return "";
        case K::word: return one_of(r.words, text) ? "" : bad;
        case K::assignment: {
            const std::size_t eq = text.find('='), dot = text.find('.');
            if (eq == std::string::npos || dot == std::string::npos || dot > eq || dot + 1 == eq) return bad;
            return one_of(r.words, std::string_view(text).substr(0, dot)) ? "" : bad;
        }
        case K::range:
            try {
                (void)parse_range(std::string(r.option), text);
                return "";
            } catch (const usage_error&) {
                return bad;
            }
        case K::count: {
            long long v = 0;
            auto res = std::from_chars(text.data(), text.data() + text.size(), v);
            if (res.ec != std::errc() || res.ptr != text.data() + text.size()) return bad;
            return static_cast<double>(v) < r.lo || static_cast<double>(v) > r.hi ? bad : "";
        }
        case K::real: {
            if (!decimal_text(text)) return bad;  // strtod alone also takes " 5", 0x10 and 0x1p-3
            char* end = nullptr;
            const double v = std::strtod(text.c_str(), &end);
            if (end != text.c_str() + text.size() || !std::isfinite(v)) return bad;
            if ((r.lo_open ? !(v > r.lo) : !(v >= r.lo)) || (r.hi_open ? !(v < r.hi) : !(v <= r.hi))) return bad;
            return "";
        }
    }
    return bad;
}

CLI::Validator checked(std::string_view command, std::string_view option) {
    const value_rule& r = rule_for(command, option);
    return CLI::Validator(
        [&r](std::string& text) {
            std::string why = check_value(r, text);
            if (why.empty() && r.kind == value_kind::real && std::strtod(text.c_str(), nullptr) == 0) text = "0";  // -0: 0
            return why;
        },
        expected(r));
}

std::string helper_program(const char* env, const char* name, const char* what) {
    if (const char* e = std::getenv(env); e && !*e)
        throw usage_error(fmt::format("{}: expected the path of {} (or unset), found an empty value", env, what));
    return run::find_program("", env, name);
}

}  // namespace mmgp::cli
