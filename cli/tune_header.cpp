// mmgp tune's options in its journal's header: written from tune_options_cli and read back on --resume through
// one table of {key, option member}, each value checked by its option's rule (options.hpp). Called by
// cmd_tune.cpp; the journal file itself is run/tune_journal.cpp's.
#include "tune_header.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <type_traits>
#include <unistd.h>

#include "options.hpp"

namespace mmgp::cli {

using nlohmann::json;

namespace {

template <class T> struct is_optional : std::false_type {};
template <class T> struct is_optional<std::optional<T>> : std::true_type {};

/// How an option's value is kept in the header.
enum class kept_as {
    value,        ///< as it is; a header without it is not a tune's
    path,         ///< a file, written absolute when it exists (a resumed tune may run from elsewhere)
    added_later,  ///< journals written before the option existed lack it: they read as `when_missing`, which is
                  ///< also what is written when the option was not given
};

/// One option of the header: its key, the command-line option whose rule checks it (none: not checked), and how
/// it is written from and read into tune_options_cli.
struct header_field {
    const char* key;
    const char* option;
    bool objective_option;  // checked after the tune's own options: a header with several bad values names those first
    std::function<json(const tune_options_cli&)> write;
    std::function<void(const json& options, tune_options_cli&)> read;
};

std::string absolute_if_exists(const std::string& p) {
    std::error_code ec;
    return !p.empty() && std::filesystem::exists(p, ec) ? std::filesystem::absolute(p).string() : p;
}

// A field for the option member `member(o)` returns.
template <class Member>
header_field field(const char* key, const char* option, Member member, kept_as how = kept_as::value,
                   json when_missing = nullptr, bool objective_option = false) {
    using T = std::remove_cvref_t<decltype(member(std::declval<tune_options_cli&>()))>;
    auto write = [=](const tune_options_cli& o) -> json {
        const T& v = member(o);
        if constexpr (is_optional<T>::value) {
            return v ? json(*v) : json(nullptr);
        } else if constexpr (std::is_same_v<T, std::string>) {
            if (how == kept_as::path) return absolute_if_exists(v);
            if (how == kept_as::added_later && v.empty()) return when_missing;
            return v;
        } else {
            return v;
        }
    };
    auto read = [=](const json& j, tune_options_cli& o) {
        const json& v = how == kept_as::added_later && !j.contains(key) ? when_missing : j.at(key);
        if constexpr (is_optional<T>::value) {
            if (v.is_null()) member(o).reset();
            else member(o) = v.get<typename T::value_type>();
        } else {
            member(o) = v.get<T>();
        }
    };
    return {key, option, objective_option, write, read};
}

// The options of the tune, in the order a header is read.
const std::vector<header_field>& header_fields() {
    static const std::vector<header_field> fields = {
        field("profile", nullptr, [](auto& o) -> auto& { return o.profile; }, kept_as::path),
        field("app", nullptr, [](auto& o) -> auto& { return o.app; }, kept_as::path),
        field("replay", nullptr, [](auto& o) -> auto& { return o.replay; }, kept_as::path),
        field("seed", "--seed", [](auto& o) -> auto& { return o.seed; }),
        field("replay_first", "--replay-first", [](auto& o) -> auto& { return o.replay_first; }, kept_as::added_later,
              "random"),
        field("model", "--model", [](auto& o) -> auto& { return o.space.model; }),
        field("policy", "--policy", [](auto& o) -> auto& { return o.space.policy; }),
        field("m", "--m", [](auto& o) -> auto& { return o.space.m; }),
        field("p", "--p", [](auto& o) -> auto& { return o.space.p; }),
        field("nodes", "--nodes", [](auto& o) -> auto& { return o.space.nodes; }),
        field("set", nullptr, [](auto& o) -> auto& { return o.space.sets; }),
        field("launcher", "--launcher", [](auto& o) -> auto& { return o.launch.launcher; }),
        field("parallel", "--parallel", [](auto& o) -> auto& { return o.parallel; }, kept_as::added_later, 1LL),
        field("units", "--units", [](auto& o) -> auto& { return o.launch.units; }),
        field("cores_per_node", "--cores-per-node", [](auto& o) -> auto& { return o.launch.cores_per_node; }),
        field("launcher_program", nullptr, [](auto& o) -> auto& { return o.launch.program; }),
        field("oversubscribe", nullptr, [](auto& o) -> auto& { return o.launch.oversubscribe; }),
        field("no_bind", nullptr, [](auto& o) -> auto& { return o.launch.no_bind; }),
        field("tolerance", "--tolerance", [](auto& o) -> auto& { return o.tolerance; }),
        field("objective", "--objective", [](auto& o) -> auto& { return o.goal.objective; }, kept_as::added_later,
              "time", true),
        field("within", "--within", [](auto& o) -> auto& { return o.goal.within; }, kept_as::added_later, nullptr,
              true),
        field("max_nodes", "--max-nodes", [](auto& o) -> auto& { return o.goal.max_nodes; }, kept_as::added_later,
              nullptr, true),
        field("confidence", "--confidence", [](auto& o) -> auto& { return o.confidence; }),
        field("bound_factor", "--bound-factor", [](auto& o) -> auto& { return o.bound_factor; }),
        field("max_runs", "--max-runs", [](auto& o) -> auto& { return o.max_runs; }),
        field("max_seconds", "--max-seconds", [](auto& o) -> auto& { return o.max_seconds; }),
        // A journal from before the cost cap: the tune it records had none.
        field("max_cost", "--max-cost", [](auto& o) -> auto& { return o.max_cost; }, kept_as::added_later, "none"),
        field("uses", "--uses", [](auto& o) -> auto& { return o.uses; }, kept_as::added_later, nullptr),
        field("timeout", "--timeout", [](auto& o) -> auto& { return o.timeout; }),
        field("work", "--work", [](auto& o) -> auto& { return o.work; }, kept_as::added_later, ""),
        field("progress_regex", "--progress-regex", [](auto& o) -> auto& { return o.progress_regex; }, kept_as::added_later,
              ""),
        field("progress_total", "--progress-total", [](auto& o) -> auto& { return o.progress_total; },
              kept_as::added_later, nullptr),
        field("constants", nullptr, [](auto& o) -> auto& { return o.constants; }, kept_as::added_later,
              json::array()),
        field("no_prior", nullptr, [](auto& o) -> auto& { return o.no_prior; }),
        field("no_model", nullptr, [](auto& o) -> auto& { return o.no_model; }),
        field("command", nullptr, [](auto& o) -> auto& { return o.launch.command; }),
    };
    return fields;
}

// The JSON library's message without its "[json.exception.type_error.302] " prefix.
std::string json_error_text(const json::exception& e) {
    std::string msg = e.what();
    const auto at = msg.find("] ");
    return at == std::string::npos ? msg : msg.substr(at + 2);
}

// A header's option value, checked by the same rule as on the command line: its text as the option would be
// typed ("" for null, which stands for "not given").
void check_header_option(const json& j, const header_field& f, const std::string& path) {
    if (!f.option || !j.contains(f.key) || j.at(f.key).is_null()) return;
    const json& v = j.at(f.key);
    const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
    if (v.is_string() && text.empty()) return;  // an option that was not given
    const std::string why = check_value(rule_for("tune", f.option), text);
    if (!why.empty()) throw mmgp::error(path + ": line 1, /options/" + f.key + ": " + why + " (" + f.option + ")");
}

}  // namespace

json journal_header(const tune_options_cli& o) {
    json options;
    for (const header_field& f : header_fields()) options[f.key] = f.write(o);
    std::error_code ec;
    options["cwd"] = std::filesystem::current_path(ec).string();
    return {{"mmgp_tune", 1}, {"created", utc_now()}, {"options", options}};
}

tune_options_cli options_from_header(const json& header, const tune_options_cli& caller, const std::string& path) {
    tune_options_cli o = caller;
    const json& version = header.at("mmgp_tune");
    if (!version.is_number_integer() || version.get<long long>() != 1)
        throw input_error(path, "line 1, /mmgp_tune", "1 (the journal format this mmgp reads and writes)",
                          utf8_prefix(version.dump(), 40));
    if (!header.contains("options") || !header.at("options").is_object())
        throw input_error(path, "line 1, /options", "an object of the tune's options",
                          header.contains("options") ? utf8_prefix(header.at("options").dump(), 40) : "nothing");
    try {
        const json& j = header.at("options");
        // An unknown key is an error, as in a profile: a journal edited by hand or written by another program.
        for (auto it = j.begin(); it != j.end(); ++it) {
            const auto& fields = header_fields();
            if (it.key() != "cwd" && std::none_of(fields.begin(), fields.end(), [&](const header_field& f) {
                    return it.key() == f.key;
                })) {
                std::string known = "cwd";
                for (const header_field& f : fields) known += std::string(", ") + f.key;
                throw input_error(path, "line 1, /options/" + it.key(), "one of the keys " + known,
                                  "the unknown key \"" + utf8_prefix(it.key(), 40) + "\"");
            }
        }
        for (bool objective_options : {false, true})
            for (const header_field& f : header_fields())
                if (f.objective_option == objective_options) check_header_option(j, f, path);
        for (const header_field& f : header_fields()) {
            try {
                f.read(j, o);
            } catch (const json::exception&) {
                throw input_error(path, std::string("line 1, /options/") + f.key,
                                  "a value of the type the tune writes there (as its option takes)",
                                  j.contains(f.key) ? utf8_prefix(j.at(f.key).dump(), 40) : "nothing");
            }
        }
        const std::string cwd = j.at("cwd").get<std::string>();
        if (!cwd.empty() && chdir(cwd.c_str()) != 0)
            throw input_error(path, "line 1, /options/cwd", "the directory the tune ran in",
                              "\"" + cwd + "\": " + std::strerror(errno));
    } catch (const json::exception& e) {
        throw input_error(path, "line 1 (header)", "the header of an mmgp tune journal (its options)", json_error_text(e));
    }
    o.journal = path;
    return o;
}

}  // namespace mmgp::cli
