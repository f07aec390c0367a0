// The journal of mmgp tune: the file (locked, appended line by line, fsynced, a torn last line cut off), its
// header's options written and read back through one table of {key, option member}, and the recorded runs
// checked and given to the tuner on --resume. Called by cmd_tune.cpp and the loop; calls the file system and
// the option rules (options.hpp).
#include "tune_journal.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sys/file.h>
#include <sys/stat.h>
#include <type_traits>
#include <unistd.h>

#include <fmt/format.h>

#include "options.hpp"
#include "tune_common.hpp"

namespace mmgp::cli {

using nlohmann::json;

// --- The file ----------------------------------------------------------------------------------------------------

journal::~journal() {
    if (fd_ >= 0) close(fd_);
}

std::vector<json> journal::open(const std::string& path) {
    path_ = path;
    // A journal is a regular file: a FIFO would wait for a writer for ever, a device never holds one.
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
        throw input_error(path, "(file)", "a regular file (an mmgp tune journal)",
                          S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO" : "a special file");
    fd_ = ::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC | O_NONBLOCK);
    if (fd_ < 0) throw input_error(path, "(file)", "a journal that can be opened for appending", std::strerror(errno));
    if (flock(fd_, LOCK_EX | LOCK_NB) != 0)
        throw input_error(path, "(lock)", "a journal no other mmgp tune is using", "locked by another process");
    std::string text = read_text_file(path);
    std::vector<json> lines;
    std::size_t pos = 0, good_end = 0;
    int line_no = 0;
    while (pos < text.size()) {
        std::size_t nl = text.find('\n', pos);
        const bool last = nl == std::string::npos || nl + 1 >= text.size();
        std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
        ++line_no;
        check_unique_keys(line, path, "line " + std::to_string(line_no) + ", ");
        json j = json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.is_object() || nl == std::string::npos) {
            // Torn: the last line cut by a crash (every line is written whole with its newline, then fsynced).
            // A complete line that is not a run is bad input wherever it stands.
            if (!last || nl != std::string::npos)
                throw input_error(path, "line " + std::to_string(line_no), "one JSON object per line",
                                  "\"" + utf8_prefix(line, 40) + "\"");
            if (lines.empty())
                throw input_error(path, "line 1", "the header of an mmgp tune journal",
                                  "a torn line (an interrupted write) and no complete line");
            hold_warning(path + ": line " + std::to_string(line_no) + " is torn (an interrupted write): skipped, the " +
                         std::to_string(lines.size()) + " lines before it kept");
            torn_at_ = static_cast<long long>(good_end);
            break;
        }
        lines.push_back(std::move(j));
        pos = nl + 1;
        good_end = pos;
    }
    return lines;
}

void journal::create(const std::string& path, const json& header) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw input_error(path, "(file)", "a new journal file (--journal names the file, not its folder)", "a directory");
    if (!create_file_exclusively(path, header.dump() + "\n"))
        throw input_error(path, "(file)", "a new journal (--resume " + path + " continues that tune)", "an existing file");
    open(path);
}

void journal::append(const json& j) {
    if (torn_at_ >= 0) {  // the torn line goes only when the journal goes on
        if (ftruncate(fd_, static_cast<off_t>(torn_at_)) != 0)
            throw input_error(path_, "(file)", "a journal that can be truncated", std::strerror(errno));
        torn_at_ = -1;
    }
    std::string line = j.dump() + "\n";
    const char* p = line.data();
    std::size_t left = line.size();
    while (left > 0) {
        ssize_t w = ::write(fd_, p, left);
        if (w < 0) {
            if (errno == EINTR) continue;
            throw input_error(path_, "(file)", "a journal that can be written", std::strerror(errno));
        }
        p += w;
        left -= static_cast<std::size_t>(w);
    }
    if (fsync(fd_) != 0) throw input_error(path_, "(file)", "a journal that can be synced", std::strerror(errno));
}

// --- The header's options ----------------------------------------------------------------------------------------

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

// --- The recorded runs -------------------------------------------------------------------------------------------

namespace {

// One run line of a journal, checked as a run the tune recorded itself would be: integer m, p, nodes >= 1 of the
// tune's space, a known policy and outcome, a finite wall time in [0, 1e9] s. Returns its run number and the run.
std::pair<long long, tune_run> journal_run(const json& j, const std::string& path, const std::string& where,
                                           const std::map<std::string, std::size_t>& index) {
    auto fail = [&](const std::string& key, const std::string& expected) {
        throw input_error(path, where + ", /" + key, expected,
                          j.contains(key) ? "the value " + utf8_prefix(j.at(key).dump(), 40) : std::string("nothing"));
    };
    auto count = [&](const char* key) {
        if (!j.contains(key) || !j.at(key).is_number_integer() || j.at(key).get<long long>() < 1 ||
            j.at(key).get<long long>() > 1000000000)
            fail(key, "an integer >= 1");
        return j.at(key).get<long long>();
    };
    configuration c{static_cast<int>(count("m")), static_cast<int>(count("p")), static_cast<int>(count("nodes")),
                    policy::edtlp};
    if (!j.contains("policy") || !j.at("policy").is_string() || !parse_policy(j.at("policy").get<std::string>(), c.pol))
        fail("policy", "edtlp or os");
    const auto it = index.find(key_of(c));
    if (it == index.end()) throw input_error(path, where, "a configuration of the tune's space", config_text(c));
    static constexpr std::pair<const char*, run_outcome> outcomes[] = {
        {"ok", run_outcome::ok}, {"censored", run_outcome::censored}, {"failed", run_outcome::failed},
        {"cancelled", run_outcome::cancelled}};
    const json* oc = j.contains("outcome") && j.at("outcome").is_string() ? &j.at("outcome") : nullptr;
    const auto known = oc ? std::find_if(std::begin(outcomes), std::end(outcomes),
                                         [&](const auto& x) { return oc->get<std::string>() == x.first; })
                          : std::end(outcomes);
    if (known == std::end(outcomes)) fail("outcome", "ok, censored, failed or cancelled");
    if (!j.contains("wall_s") || !j.at("wall_s").is_number() || !(j.at("wall_s").get<double>() >= 0) ||
        !(j.at("wall_s").get<double>() <= 1e9))
        fail("wall_s", "a wall time in [0, 1000000000] seconds");
    if (!j.contains("run") || !j.at("run").is_number_integer() || j.at("run").get<long long>() < 1)
        fail("run", "a run number, an integer >= 1");
    if (j.contains("censored") && !j.at("censored").is_boolean()) fail("censored", "true or false");
    if (j.contains("censored") && j.at("censored").get<bool>() != (known->second == run_outcome::censored))
        fail("censored", std::string("the outcome's word (") + (known->second == run_outcome::censored ? "true" : "false") + ")");
    if (j.contains("bound_s") && !j.at("bound_s").is_null() &&
        !(j.at("bound_s").is_number() && j.at("bound_s").get<double>() >= 0 && j.at("bound_s").get<double>() <= 1e9))
        fail("bound_s", "null or a bound in [0, 1000000000] seconds");
    const long long run_no = j.at("run").get<long long>();
    return {run_no, tune_run{it->second, j.at("wall_s").get<double>(), known->second}};
}

}  // namespace

journal_history add_recorded_runs(const std::vector<json>& lines, const std::string& path, tuner& t,
                                  bool skip_failed) {
    std::map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < t.space().size(); ++i) index[key_of(t.space()[i])] = i;
    std::set<long long> run_numbers;
    for (std::size_t ln = 1; ln < lines.size(); ++ln) {
        const auto [run_no, r] = journal_run(lines[ln], path, "line " + std::to_string(ln + 1), index);
        if (!run_numbers.insert(run_no).second)
            throw input_error(path, "line " + std::to_string(ln + 1) + ", /run",
                              "each run recorded once (a run counted twice would weigh twice)",
                              fmt::format("run {} again", run_no));
        if (!(skip_failed && r.outcome == run_outcome::failed)) t.add(r);
    }
    journal_history h;
    for (std::size_t ln = 1; ln < lines.size(); ++ln) {
        h.next_run_number = std::max(h.next_run_number, lines[ln].value("run", 0) + 1);
        const std::string oc = lines[ln].value("outcome", std::string());
        h.any_ran = h.any_ran || oc == "ok" || oc == "censored";
    }
    return h;
}

}  // namespace mmgp::cli
