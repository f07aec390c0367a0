// mmgp tune's options in its journal's header: written from tune_options_cli and read back on --resume through
// one table of {key, option member}, each value checked by its option's rule (options.hpp). Called by
// cmd_tune.cpp; the header's schema (its keys, how each is kept, what older journals read as) and the journal
// file are run/'s (tune_journal.hpp).
#include "tune_header.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <unistd.h>

#include "options.hpp"
#include "tune_journal.hpp"

namespace mmgp::cli {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

template <class T> struct is_optional : std::false_type {};
template <class T> struct is_optional<std::optional<T>> : std::true_type {};

/// One key of the header (run::header_keys(): the journal's schema) bound to its option: the command-line option
/// whose rule checks it (none: not checked) and how it is written from and read into tune_options_cli.
struct header_field {
    const char* key;
    const char* option;
    bool objective_option;  // checked after the tune's own options: a header with several bad values names those first
    std::function<json(const tune_options_cli&)> write;
    std::function<void(const json& options, tune_options_cli&)> read;
};

// A field for the option member `member(o)` returns.
template <class Member>
header_field field(const char* key, const char* option, Member member, bool objective_option = false) {
    using T = std::remove_cvref_t<decltype(member(std::declval<tune_options_cli&>()))>;
    auto write = [=](const tune_options_cli& o) -> json {
        const T& v = member(o);
        if constexpr (is_optional<T>::value) return v ? json(*v) : json(nullptr);
        else return v;
    };
    auto read = [=](const json& j, tune_options_cli& o) {
        const json& v = j.at(key);
        if constexpr (is_optional<T>::value) {
            if (v.is_null()) member(o).reset();
            else member(o) = v.get<typename T::value_type>();
        } else {
            member(o) = v.get<T>();
        }
    };
    return {key, option, objective_option, write, read};
}

// The options of the tune, bound to the header's keys in their order.
const std::vector<header_field>& header_fields() {
    static const std::vector<header_field> fields = [] {
        std::vector<header_field> f = {
            field("profile", nullptr, [](auto& o) -> auto& { return o.profile; }),
            field("app", nullptr, [](auto& o) -> auto& { return o.app; }),
            field("replay", nullptr, [](auto& o) -> auto& { return o.replay; }),
            field("seed", "--seed", [](auto& o) -> auto& { return o.seed; }),
            field("replay_first", "--replay-first", [](auto& o) -> auto& { return o.replay_first; }),
            field("model", "--model", [](auto& o) -> auto& { return o.space.model; }),
            field("policy", "--policy", [](auto& o) -> auto& { return o.space.policy; }),
            field("m", "--m", [](auto& o) -> auto& { return o.space.m; }),
            field("p", "--p", [](auto& o) -> auto& { return o.space.p; }),
            field("nodes", "--nodes", [](auto& o) -> auto& { return o.space.nodes; }),
            field("set", nullptr, [](auto& o) -> auto& { return o.space.sets; }),
            field("launcher", "--launcher", [](auto& o) -> auto& { return o.launch.launcher; }),
            field("parallel", "--parallel", [](auto& o) -> auto& { return o.parallel; }),
            field("units", "--units", [](auto& o) -> auto& { return o.launch.units; }),
            field("cores_per_node", "--cores-per-node", [](auto& o) -> auto& { return o.launch.cores_per_node; }),
            field("launcher_program", nullptr, [](auto& o) -> auto& { return o.launch.program; }),
            field("oversubscribe", nullptr, [](auto& o) -> auto& { return o.launch.oversubscribe; }),
            field("no_bind", nullptr, [](auto& o) -> auto& { return o.launch.no_bind; }),
            field("tolerance", "--tolerance", [](auto& o) -> auto& { return o.tolerance; }),
            field("objective", "--objective", [](auto& o) -> auto& { return o.goal.objective; }, true),
            field("within", "--within", [](auto& o) -> auto& { return o.goal.within; }, true),
            field("max_nodes", "--max-nodes", [](auto& o) -> auto& { return o.goal.max_nodes; }, true),
            field("confidence", "--confidence", [](auto& o) -> auto& { return o.confidence; }),
            field("bound_factor", "--bound-factor", [](auto& o) -> auto& { return o.bound_factor; }),
            field("max_runs", "--max-runs", [](auto& o) -> auto& { return o.max_runs; }),
            field("max_seconds", "--max-seconds", [](auto& o) -> auto& { return o.max_seconds; }),
            field("max_cost", "--max-cost", [](auto& o) -> auto& { return o.max_cost; }),
            field("uses", "--uses", [](auto& o) -> auto& { return o.uses; }),
            field("timeout", "--timeout", [](auto& o) -> auto& { return o.timeout; }),
            field("work", "--work", [](auto& o) -> auto& { return o.work; }),
            field("progress_regex", "--progress-regex", [](auto& o) -> auto& { return o.progress_regex; }),
            field("progress_total", "--progress-total", [](auto& o) -> auto& { return o.progress_total; }),
            field("constants", nullptr, [](auto& o) -> auto& { return o.constants; }),
            field("explore_platform_on_gpu", nullptr, [](auto& o) -> auto& { return o.explore_platform_on_gpu; }),
            field("no_prior", nullptr, [](auto& o) -> auto& { return o.no_prior; }),
            field("no_model", nullptr, [](auto& o) -> auto& { return o.no_model; }),
            field("command", nullptr, [](auto& o) -> auto& { return o.launch.command; }),
        };
        // Bound one to one, in the schema's order: a key the journal knows and no option fills is a bug.
        const auto& keys = run::header_keys();
        bool same = f.size() == keys.size();
        for (std::size_t i = 0; same && i < f.size(); ++i) same = std::string_view(f[i].key) == keys[i].key;
        if (!same) throw std::logic_error("mmgp tune: the options bound to the journal's header are not its keys");
        return f;
    }();
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

// An absolute path as named from the current directory: relative when it lies below it (a journal's run logs
// keep the base they were written with), else absolute.
std::string from_here(const fs::path& absolute_path) {
    std::error_code ec;
    const fs::path here = fs::current_path(ec);
    if (ec) return absolute_path.string();
    const fs::path rel = absolute_path.lexically_normal().lexically_relative(here);
    if (rel.empty() || *rel.begin() == "..") return absolute_path.lexically_normal().string();
    return rel.string();
}

}  // namespace

std::string header_key_named_by(std::string_view message) {
    for (const header_field& f : header_fields()) {
        if (!f.option) continue;
        const std::string_view opt = f.option;
        if (message.substr(0, opt.size()) == opt && message.size() > opt.size() &&
            (message[opt.size()] == ':' || message[opt.size()] == ' '))
            return f.key;
    }
    if (message.rfind("--constant", 0) == 0) return "constants";
    if (message.rfind("--set", 0) == 0 || message.rfind("search.", 0) == 0) return "set";
    if (message.rfind("command:", 0) == 0 || message.rfind("COMMAND:", 0) == 0) return "command";
    return "";
}

json journal_header(const tune_options_cli& o) {
    json options;
    for (const header_field& f : header_fields()) options[f.key] = f.write(o);
    return run::make_header(std::move(options));
}

tune_options_cli options_from_header(const json& header, const tune_options_cli& caller, const std::string& path) {
    tune_options_cli o = caller;
    const json j = run::header_options(header, path);
    try {
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
        // The tune goes on in the directory it ran in, where the header's relative words (the command's) hold;
        // the paths typed beside --resume (the journal, --plot) are the caller's directory's, so they are made
        // absolute first: --plot stays so, the journal is named from the tune's directory (its run logs keep
        // the base they were written with).
        std::error_code ec;
        const fs::path journal_at = fs::absolute(path, ec);
        const fs::path plot_at = caller.plot.empty() ? fs::path() : fs::absolute(caller.plot, ec);
        const std::string cwd = j.at("cwd").get<std::string>();
        if (!cwd.empty() && chdir(cwd.c_str()) != 0)
            throw input_error(path, "line 1, /options/cwd", "the directory the tune ran in",
                              "\"" + cwd + "\": " + std::strerror(errno));
        o.journal = journal_at.empty() ? path : from_here(journal_at);
        if (!caller.plot.empty()) o.plot = plot_at.empty() ? caller.plot : plot_at.lexically_normal().string();
    } catch (const json::exception& e) {
        throw input_error(path, "line 1 (header)", "the header of an mmgp tune journal (its options)", json_error_text(e));
    }
    return o;
}

}  // namespace mmgp::cli
