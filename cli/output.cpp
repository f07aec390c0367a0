#include <filesystem>
#include <charconv>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <iostream>
#include <string_view>
#include <set>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <tuple>
#include <utility>

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

model_kind model_of(const space_options_cli& o, const scenario& s) {
    model_kind k = parse_model_option(o.model);
    if (!o.model_named && !s.model.empty() && !parse_model(s.model, k))
        throw std::logic_error("a scenario's model was read unchecked: " + s.model);
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
                "oversubscription, cluster term). Default: the scenario's \"model\", else mmgp (mmgp models)")
        ->each([&o](const std::string&) { o.model_named = true; });
    add_checked(sub, "--policy", o.policy, "Host scheduling policy: edtlp (switch on every off-load) or os; overrides search.policy");
    add_checked(sub, "--m", o.m, "Processes per node: N fixes it, LO:HI restricts the search (overrides search.m)");
    add_checked(sub, "--p", o.p, "Accelerators (threads) per process: N or LO:HI (overrides search.p)");
    add_checked(sub, "--nodes", o.nodes, "Nodes: N or LO:HI (overrides search.nodes)");
    add_set_option(sub, o.sets, "platform.KEY, application.KEY or search.KEY");
    add_checked(sub, "--max-age", o.max_age_days,
                "Days after which a calibrated platform is called old (default 90; docs/PROFILES.md \"Freshness\")");
}

namespace {
std::vector<std::string>& pending_warnings() {
    static std::vector<std::string> w;
    return w;
}
}  // namespace

void warn_about_platform(const platform& pl, double max_age_days) {
    freshness_policy policy;
    policy.max_age_days = max_age_days;
    const auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch());
    for (const auto& w : platform_warnings(pl, this_machine(), now.count(), policy))
        pending_warnings().push_back("mmgp: warning: " + w);
}

void warn_about_columns(const std::string& file, const std::vector<std::string>& ignored) {
    if (ignored.empty()) return;
    std::string names;
    for (const auto& c : ignored) names += (names.empty() ? "" : ", ") + utf8_prefix(c, 40);
    pending_warnings().push_back("mmgp: warning: " + file + ": column" + (ignored.size() == 1 ? " " : "s ") + names +
                                 " not read (m, p, nodes, units, time_s, policy, censored and bound_s are)");
}

void hold_note(const std::string& text) { pending_warnings().push_back("mmgp: note: " + text); }

void hold_warning(const std::string& text) { pending_warnings().push_back("mmgp: warning: " + text); }

std::string one_line(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto b = static_cast<unsigned char>(text[i]);
        const bool c1 = b == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
                        static_cast<unsigned char>(text[i + 1]) <= 0x9F;
        if (b == '\n') out += "\\n";
        else if (b == '\t') out += "\\t";
        else if (b < 0x20 || b == 0x7F) out += fmt::format("\\x{:02x}", b);
        else if (c1) out += fmt::format("\\u{:04x}", static_cast<unsigned char>(text[++i]));
        else out += text[i];
    }
    return out;
}

void flush_warnings() {
    for (const auto& w : pending_warnings()) std::cerr << one_line(w) << '\n';
    pending_warnings().clear();
}

void drop_warnings() { pending_warnings().clear(); }

CLI::Option* add_assignments(CLI::App* sub, const std::string& name, std::vector<std::string>& target,
                             const std::string& help) {
    return add_checked(sub, name, target, help)
        ->type_name("SECTION.KEY=VALUE")
        ->allow_extra_args(false)  // one value each time: `--set K=V -- prog -c` leaves `--` to the command
        ->take_last()
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

void add_set_option(CLI::App* sub, std::vector<std::string>& sets, const std::string& help_sections) {
    add_assignments(sub, "--set", sets,
                    "What-if edit, repeatable: " + help_sections +
                        "=VALUE (docs/PROFILES.md names the keys; a dotted KEY edits a nested object, VALUE is JSON "
                        "or text, null removes the key), applied before the profile is checked");
}

// Refuses an assignment option (--set, --constant) that names one key twice: the last would win in silence.
void refuse_repeated_keys(const std::string& option, const std::vector<std::string>& assignments) {
    std::set<std::string> seen;
    for (const std::string& a : assignments) {
        const std::string key = a.substr(0, a.find('='));
        if (!seen.insert(key).second)
            throw usage_error(option + " " + key + ": expected one value per key, found it given twice (the last "
                              "would win in silence)");
    }
    // A key and one inside it (platform.alpha and platform.alpha.constant): one edit would replace the other.
    for (const std::string& outer : seen)
        for (const std::string& inner : seen)
            if (inner.size() > outer.size() && inner.compare(0, outer.size(), outer) == 0 && inner[outer.size()] == '.')
                throw usage_error(option + " " + outer + " and " + inner + ": expected one value per key, found a key "
                                  "and one inside it (the later edit would replace the other in silence)");
}

scenario_edits edits_of(const std::vector<std::string>& sets) {
    refuse_repeated_keys("--set", sets);
    nlohmann::json patch[3] = {nlohmann::json::object(), nlohmann::json::object(), nlohmann::json::object()};
    for (const std::string& set : sets) {  // the syntax was checked by the option's rule
        const std::size_t eq = set.find('='), dot = set.find('.');
        const std::string section = set.substr(0, dot), value_text = set.substr(eq + 1);
        nlohmann::json* at = &patch[section == "platform" ? 0 : section == "application" ? 1 : 2];
        std::string_view key = std::string_view(set).substr(dot + 1, eq - dot - 1);
        if (key.find("..") != std::string_view::npos || key.front() == '.' || key.back() == '.')
            throw usage_error("--set: expected SECTION.KEY=VALUE with no empty key, found \"" + set + "\"");
        for (std::size_t next; (next = key.find('.')) != std::string_view::npos; key.remove_prefix(next + 1)) {
            nlohmann::json& inner = (*at)[std::string(key.substr(0, next))];
            if (!inner.is_object()) inner = nlohmann::json::object();
            at = &inner;
        }
        check_unique_keys(value_text, "--set " + set.substr(0, eq), "");  // {"a": 1, "a": 2} would keep 2 silently
        nlohmann::json value = nlohmann::json::parse(value_text, nullptr, false);
        (*at)[std::string(key)] = value.is_discarded() ? nlohmann::json(value_text) : value;
    }
    auto text = [](const nlohmann::json& j) { return j.empty() ? std::string() : j.dump(); };
    return scenario_edits{text(patch[0]), text(patch[1]), text(patch[2])};
}

scenario load_with_options(const std::string& profile, const space_options_cli& o) {
    // --m, --p and --nodes narrow the search as the file is read, after its --set edits: the reader's checks (the
    // tables cover the space, the space is not empty) see the narrowed space (once the file's own space was
    // checked first, and --m could not narrow a table's search past where the table ends).
    scenario_edits edits = edits_of(o.sets);
    nlohmann::json search = edits.search.empty() ? nlohmann::json::object() : nlohmann::json::parse(edits.search);
    for (const auto& [option, key, text] : {std::tuple{"--m", "m", &o.m}, {"--p", "p", &o.p}, {"--nodes", "nodes", &o.nodes}})
        if (!text->empty()) {
            const int_range r = parse_range(option, *text);
            search[key] = {r.lo, r.hi};
        }
    if (!search.empty()) edits.search = search.dump();
    scenario s = load_scenario(profile, edits);
    if (!o.policy.empty()) s.space.pol = parse_policy_option(o.policy);  // coverage does not depend on it
    warn_about_platform(s.plat, o.max_age_days);
    return s;
}

namespace {

// The part of a profile the engine reads: its `statistics` (provenance the readers ignore; a fit's holds one
// residual per run, 10^6 of them as JSON objects over half a gigabyte) left out of the read-back check.
std::string read_part(const std::string& text) {
    const auto keep = [](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        return !(depth == 1 && event == nlohmann::json::parse_event_t::key && parsed == "statistics");
    };
    return nlohmann::json::parse(text, keep).dump();
}

}  // namespace

void check_profile(const std::string& text, profile_kind kind, std::string_view command, const described_from* from,
                   const std::string& path) {
    // Read as if in the folder it is written to: the files it names by a relative path (OSU tables) are found
    // there, as a later read of the file finds them.
    const std::string label = "<" + std::string(command) + " output>";
    const std::string name = path.empty() ? label : (std::filesystem::path(path).parent_path() / label).string();
    try {
        const std::string read = read_part(text);
        if (kind == profile_kind::platform)
            (void)parse_platform(read, name);
        else
            (void)parse_application(read, name);
    } catch (const mmgp::error& e) {
        if (from) {  // the input's records gave it
            std::string what = e.what();
            if (what.rfind(name + ": ", 0) == 0) what = what.substr(name.size() + 2);
            throw input_error(from->file, from->records, from->expected, from->found + " " + what);
        }
        throw std::logic_error(std::string(command) + ": the profile written does not read back: " + e.what() +
                               " (nothing written)");
    }
}

void write_profile(const std::string& path, const std::string& text, profile_kind kind, std::string_view command,
                   const described_from* from) {
    check_profile(text, kind, command, from, path);
    if (path.empty())
        std::cout << text << std::flush;
    else
        write_file_atomically(path, text);
}

nlohmann::ordered_json json_number(double v) {
    return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

std::string num(double v) {
    if (!std::isfinite(v)) return "null";
    return fmt::format("{}", v);
}

namespace {

// json_num(v), appended: the characters nlohmann::json's dump writes for a finite double (its to_chars), else null.
void append_json_number(fmt::memory_buffer& out, double v) {
    if (!std::isfinite(v)) return out.append(std::string_view("null"));
    char text[64];
    const char* end = nlohmann::detail::to_chars(text, text + sizeof text, v);
    out.append(text, end);
}

}  // namespace

std::string json_num(double v) {
    fmt::memory_buffer out;
    append_json_number(out, v);
    return fmt::to_string(out);
}

namespace {
bool g_report_incomplete = false;
}  // namespace

void mark_report_incomplete() noexcept { g_report_incomplete = true; }
bool report_incomplete() noexcept { return g_report_incomplete; }

namespace {

// The breakdown's keys, in the order both writers write them (the extrapolated flag last).
constexpr std::pair<const char*, double breakdown::*> breakdown_fields[] = {
    {"host", &breakdown::host},       {"accelerator", &breakdown::accelerator},
    {"offload", &breakdown::offload}, {"context_switch", &breakdown::context_switch},
    {"communication", &breakdown::communication}, {"spin", &breakdown::spin},
    {"startup", &breakdown::startup}};

}  // namespace

nlohmann::ordered_json breakdown_object(const breakdown& b) {
    nlohmann::ordered_json o = nlohmann::ordered_json::object();
    for (const auto& [key, field] : breakdown_fields) o[key] = json_number(b.*field);
    o["extrapolated"] = b.extrapolated;
    return o;
}

std::string breakdown_json(const breakdown& b) {
    fmt::memory_buffer out;  // on the stack: one allocation per row, for the string returned
    out.push_back('{');
    for (const auto& [key, field] : breakdown_fields) {
        out.push_back('"');
        out.append(std::string_view(key));
        out.append(std::string_view("\": "));
        append_json_number(out, b.*field);
        out.append(std::string_view(", "));
    }
    out.append(std::string_view(b.extrapolated ? "\"extrapolated\": true}" : "\"extrapolated\": false}"));
    return fmt::to_string(out);
}

std::string quote(const std::string& s) {
    // nlohmann::json's own string writer; bytes that are not UTF-8 (a file name) become U+FFFD instead of throwing.
    return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace mmgp::cli
