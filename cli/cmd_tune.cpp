// mmgp tune PROFILE [--app APP] --launcher KIND -- COMMAND: run the program where the model and the runs so far
// say it is worth it, until the choice is sure (docs/TUNE.md). The statistics live in libmmgp (mmgp/tune.hpp);
// this file runs the program (or replays recorded runs), keeps the journal and prints.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <nlohmann/json.hpp>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.hpp"
#include "options.hpp"
#include "svg.hpp"
#include "tune_runs.hpp"
#include "mmgp/fit.hpp"
#include "mmgp/tune.hpp"

namespace mmgp::cli {

void setup_tune(CLI::App& app, tune_options_cli& o) {
    auto* sub = app.add_subcommand(
        "tune",
        "Find the best mapping of a program by running it: the model is the prior, each run the evidence; stops "
        "when another configuration beating the chosen by more than --tolerance is less likely than 1 - --confidence");
    add_checked(sub, "profile", o.profile,
                "Scenario (platform + application prior + search space) or platform profile, file or bundled name");
    sub->add_option("command", o.launch.command,
                    "After --: the program and its arguments, with mmgp launch's placeholders {m} {p} {nodes} {np} {U} "
                    "{rank} {units}");
    add_checked(sub, "--app", o.app, "Application profile: the prior of the program's parameters (PROFILE is then a platform)");
    add_space_options(sub, o.space);
    add_checked(sub, "--launcher", o.launch.launcher, "openmpi, mpich, srun or local (default local)");
    add_checked(sub, "--units", o.launch.units, "Task units of each run ({U}); default: the application's units");
    add_checked(sub, "--cores-per-node", o.launch.cores_per_node, "Cores per node for the binding fallback");
    add_checked(sub, "--launcher-program", o.launch.program, "Launcher executable (default mpirun, mpiexec or srun)");
    sub->add_flag("--oversubscribe", o.launch.oversubscribe, "Allow more processes than cores");
    sub->add_flag("--no-bind", o.launch.no_bind, "Do not bind processes to CPUs (as for mmgp launch)");
    add_checked(sub, "--replay", o.replay,
                "Draw each run's time from the recorded repetitions of RUNS.csv (columns m, p, time_s; optional "
                "nodes, policy, units, censored, bound_s) instead of running anything");
    add_checked(sub, "--seed", o.seed, "Replay: the seed of the draws (default 1)");
    add_checked(sub, "--parallel", o.parallel,
                "Runs in flight at once (default 1): with --launcher srun, Slurm job steps inside the allocation mmgp "
                "runs in (srun --exclusive), or each run its own sbatch job outside one; with --replay, the recorded "
                "times laid out K at a time");
    add_checked(sub, "--journal", o.journal,
                "JSON Lines journal of every run, fsynced after each (default mmgp-tune.jsonl when running a program)");
    add_checked(sub, "--resume", o.resume, "Continue the tune recorded in this journal, with its options");
    add_checked(sub, "--tolerance", o.tolerance,
                "A configuration within this fraction of the best (in the objective) is as good (default 0.03)");
    add_objective_options(sub, o.goal, false);
    add_checked(sub, "--confidence", o.confidence, "Stop when the choice is this sure (default 0.95)");
    add_checked(sub, "--max-runs", o.max_runs, "Budget: runs (default 50; 0: no limit)");
    add_checked(sub, "--max-seconds", o.max_seconds, "Budget: machine seconds, wall time x nodes (default: no limit)");
    add_checked(sub, "--timeout", o.timeout, "The longest one run may take, seconds (default: no limit but the bound)");
    add_checked(sub, "--bound-factor", o.bound_factor,
                "A run is stopped (censored) after this many times the chosen configuration's time (default 3)");
    sub->add_flag("--no-prior", o.no_prior,
                  "Do not use the application profile's times as a prior (its structure still shapes the model)");
    sub->add_flag("--no-model", o.no_model, "Learn from the runs alone (no model; for comparison)");
    add_checked(sub, "--plot", o.plot, "Write measured vs predicted per configuration as an SVG file");
    sub->add_flag("--json", o.json, "Print the result as one JSON document");
    sub->add_flag("--quiet", o.quiet, "No progress lines on stderr");
}

namespace {

using nlohmann::json;

std::string key_of(const configuration& c) { return fmt::format("{}/{}/{}/{}", c.m, c.p, c.nodes, to_string(c.pol)); }

std::string config_text(const configuration& c) { return label(c) + " " + std::string(to_string(c.pol)); }

std::string utc_now() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

double load1() {
    std::ifstream in("/proc/loadavg");
    double v = -1;
    in >> v;
    return in ? v : -1;
}

// The files of a run's batch job (its script, id, output, start stamp and result).
void remove_job_files(const std::string& base) {
    if (base.empty()) return;
    std::error_code ec;
    for (const char* ext : {".sh", ".id", ".out", ".started", ".result", ".result.tmp"})
        std::filesystem::remove(base + ext, ec);
}

std::string read_text_file_or_empty(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool is_platform_profile(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) {
        json doc = json::parse(read_text_file(path), nullptr, false);
        return doc.is_object() && doc.value("kind", std::string()) == "platform";
    }
    return !bundled_text("platforms/" + path).empty();
}

// --- The recorded repetitions of --replay -------------------------------------------------------------------

struct recorded {
    double time_s = 0;
    bool censored = false;
};

struct replay_data {
    std::string file;
    std::vector<configuration> space;                   // in the file's order of first appearance
    std::map<std::string, std::vector<recorded>> reps;  // by key_of
    std::int64_t units = 0;                             // the file's units (0: no column)
};

replay_data read_replay(const std::string& path, std::optional<std::int64_t> units_wanted) {
    replay_data d;
    d.file = path;
    std::vector<measured_run> rows = read_runs(path);
    std::set<std::int64_t> units;
    for (const auto& r : rows) units.insert(r.units);
    if (units_wanted) {
        std::erase_if(rows, [&](const measured_run& r) { return r.units != *units_wanted; });
        if (rows.empty())
            throw input_error(path, "column units", "rows with units = " + std::to_string(*units_wanted) + " (--units)",
                              "none");
        d.units = *units_wanted;
    } else if (units.size() > 1) {
        throw input_error(path, "column units", "one units value (rows of one program input; --units picks one)",
                          std::to_string(units.size()) + " different values");
    } else {
        d.units = *units.begin();
    }
    for (const auto& r : rows) {
        const std::string k = key_of(r.c);
        auto& v = d.reps[k];
        if (v.empty()) d.space.push_back(r.c);
        // A censored row's time is the bound it was stopped at (bound_s when given).
        v.push_back({r.censored && r.bound_s > 0 ? r.bound_s : r.time_s, r.censored});
    }
    return d;
}

std::uint64_t splitmix(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

// --- The journal ---------------------------------------------------------------------------------------------

// One JSON Lines file: a header with the tune's options, then one line per run, each written whole and fsynced
// before the next run starts. Held under an exclusive lock while a tune uses it.
class journal {
public:
    journal() = default;
    journal(const journal&) = delete;
    journal& operator=(const journal&) = delete;
    ~journal() {
        if (fd_ >= 0) close(fd_);
    }
    // Opens (creating when `create`), locks, and returns the lines that read as JSON; a torn last line (an
    // interrupted write) is reported and cut off; a bad line before it is bad input.
    std::vector<json> open(const std::string& path, bool create) {
        path_ = path;
        fd_ = ::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC | (create ? O_CREAT | O_EXCL : 0), 0644);
        if (fd_ < 0) {
            if (errno == EEXIST)
                throw input_error(path, "(file)", "a new journal (--resume " + path + " continues that tune)",
                                  "an existing file");
            throw input_error(path, "(file)", "a journal that can be opened for appending", std::strerror(errno));
        }
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
                std::cerr << "mmgp: warning: " << path << ": line " << line_no
                          << " is torn (an interrupted write): skipped, the " << lines.size() << " lines before it kept\n";
                if (ftruncate(fd_, static_cast<off_t>(good_end)) != 0)
                    throw input_error(path, "(file)", "a journal that can be truncated", std::strerror(errno));
                break;
            }
            lines.push_back(std::move(j));
            pos = nl + 1;
            good_end = pos;
        }
        return lines;
    }
    void append(const json& j) {
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
    bool is_open() const { return fd_ >= 0; }
    const std::string& path() const { return path_; }

private:
    int fd_ = -1;
    std::string path_;
};

json options_json(const tune_options_cli& o) {
    auto abs = [](const std::string& p) {
        std::error_code ec;
        return !p.empty() && std::filesystem::exists(p, ec) ? std::filesystem::absolute(p).string() : p;
    };
    json j;
    j["profile"] = abs(o.profile);
    j["app"] = abs(o.app);
    j["replay"] = abs(o.replay);
    j["seed"] = o.seed;
    j["model"] = o.space.model;
    j["policy"] = o.space.policy;
    j["m"] = o.space.m;
    j["p"] = o.space.p;
    j["nodes"] = o.space.nodes;
    j["set"] = o.space.sets;
    j["launcher"] = o.launch.launcher;
    j["parallel"] = o.parallel;
    j["units"] = o.launch.units ? json(*o.launch.units) : json(nullptr);
    j["cores_per_node"] = o.launch.cores_per_node ? json(*o.launch.cores_per_node) : json(nullptr);
    j["launcher_program"] = o.launch.program;
    j["oversubscribe"] = o.launch.oversubscribe;
    j["no_bind"] = o.launch.no_bind;
    j["tolerance"] = o.tolerance;
    j["objective"] = o.goal.objective.empty() ? std::string("time") : o.goal.objective;
    j["within"] = o.goal.within ? json(*o.goal.within) : json(nullptr);
    j["max_nodes"] = o.goal.max_nodes ? json(*o.goal.max_nodes) : json(nullptr);
    j["confidence"] = o.confidence;
    j["bound_factor"] = o.bound_factor;
    j["max_runs"] = o.max_runs;
    j["max_seconds"] = o.max_seconds ? json(*o.max_seconds) : json(nullptr);
    j["timeout"] = o.timeout ? json(*o.timeout) : json(nullptr);
    j["no_prior"] = o.no_prior;
    j["no_model"] = o.no_model;
    j["command"] = o.launch.command;
    std::error_code ec;
    j["cwd"] = std::filesystem::current_path(ec).string();
    return j;
}

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
    const long long run_no = j.contains("run") && j.at("run").is_number_integer() ? j.at("run").get<long long>() : 0;
    return {run_no, tune_run{it->second, j.at("wall_s").get<double>(), known->second}};
}

// The JSON library's message without its "[json.exception.type_error.302] " prefix.
std::string json_error_text(const json::exception& e) {
    std::string msg = e.what();
    const auto at = msg.find("] ");
    return at == std::string::npos ? msg : msg.substr(at + 2);
}

// A journal's option value, checked by the same rule as on the command line: its text as the option would be
// typed ("" for null, which stands for "not given").
void check_journal_option(const json& j, const char* key, const char* option, const std::string& path) {
    if (!j.contains(key) || j.at(key).is_null()) return;
    const json& v = j.at(key);
    const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
    if (v.is_string() && text.empty()) return;  // an option that was not given
    const std::string why = check_value(rule_for("tune", option), text);
    if (!why.empty()) throw mmgp::error(path + ": line 1, /options/" + key + ": " + why + " (" + option + ")");
}

// The options a journal's header recorded (the output options stay the caller's), each checked as on the
// command line.
tune_options_cli options_from(const json& h, const tune_options_cli& caller, const std::string& path) {
    tune_options_cli o = caller;
    try {
        const json& j = h.at("options");
        static constexpr std::pair<const char*, const char*> rules[] = {
            {"seed", "--seed"},           {"model", "--model"},       {"policy", "--policy"},
            {"m", "--m"},                 {"p", "--p"},               {"nodes", "--nodes"},
            {"launcher", "--launcher"},   {"parallel", "--parallel"}, {"units", "--units"},
            {"cores_per_node", "--cores-per-node"}, {"tolerance", "--tolerance"}, {"confidence", "--confidence"},
            {"bound_factor", "--bound-factor"}, {"max_runs", "--max-runs"}, {"max_seconds", "--max-seconds"},
            {"timeout", "--timeout"},     {"objective", "--objective"}, {"within", "--within"},
            {"max_nodes", "--max-nodes"}};
        for (const auto& [key, option] : rules) check_journal_option(j, key, option, path);
        o.profile = j.at("profile").get<std::string>();
        o.app = j.at("app").get<std::string>();
        o.replay = j.at("replay").get<std::string>();
        o.seed = j.at("seed").get<unsigned long long>();
        o.space.model = j.at("model").get<std::string>();
        o.space.policy = j.at("policy").get<std::string>();
        o.space.m = j.at("m").get<std::string>();
        o.space.p = j.at("p").get<std::string>();
        o.space.nodes = j.at("nodes").get<std::string>();
        o.space.sets = j.at("set").get<std::vector<std::string>>();
        o.launch.launcher = j.at("launcher").get<std::string>();
        o.parallel = j.value("parallel", 1LL);
        if (!j.at("units").is_null()) o.launch.units = j.at("units").get<std::int64_t>();
        if (!j.at("cores_per_node").is_null()) o.launch.cores_per_node = j.at("cores_per_node").get<int>();
        o.launch.program = j.at("launcher_program").get<std::string>();
        o.launch.oversubscribe = j.at("oversubscribe").get<bool>();
        o.launch.no_bind = j.at("no_bind").get<bool>();
        o.tolerance = j.at("tolerance").get<double>();
        // Checked by the rules above; --within without a cost objective as on the command line, below.
        o.goal.objective = j.value("objective", std::string("time"));  // journals written before objectives: time
        o.goal.within.reset();
        if (j.contains("within") && !j.at("within").is_null()) o.goal.within = j.at("within").get<double>();
        o.goal.max_nodes.reset();
        if (j.contains("max_nodes") && !j.at("max_nodes").is_null()) o.goal.max_nodes = j.at("max_nodes").get<long long>();
        o.confidence = j.at("confidence").get<double>();
        o.bound_factor = j.at("bound_factor").get<double>();
        o.max_runs = j.at("max_runs").get<long long>();
        if (!j.at("max_seconds").is_null()) o.max_seconds = j.at("max_seconds").get<double>();
        if (!j.at("timeout").is_null()) o.timeout = j.at("timeout").get<double>();
        o.no_prior = j.at("no_prior").get<bool>();
        o.no_model = j.at("no_model").get<bool>();
        o.launch.command = j.at("command").get<std::vector<std::string>>();
        const std::string cwd = j.at("cwd").get<std::string>();
        if (!cwd.empty() && chdir(cwd.c_str()) != 0)
            throw input_error(path, "line 1, /options/cwd", "the directory the tune ran in", "\"" + cwd + "\": " + std::strerror(errno));
    } catch (const json::exception& e) {
        throw input_error(path, "line 1 (header)", "the header of an mmgp tune journal (its options)", json_error_text(e));
    }
    o.journal = path;
    return o;
}

// --- Output ------------------------------------------------------------------------------------------------------

std::string pct(double v) { return fmt::format("{:.1f} %", 100 * v); }

std::string plot_svg(const std::vector<configuration>& space, const tune_assessment& a, const std::string& title) {
    // Log-log: expected (x, with its 90 % interval) against measured (y), one point per measured configuration.
    double lo = 1e300, hi = 0;
    for (std::size_t i = 0; i < space.size(); ++i) {
        const auto& b = a.configs[i];
        if (b.measured_s <= 0) continue;
        lo = std::min({lo, b.measured_s, b.lo_s});
        hi = std::max({hi, b.measured_s, b.hi_s});
    }
    if (hi <= 0) lo = 1e-3, hi = 1;
    lo /= 1.2, hi *= 1.2;
    const svg_plot plot({lo, hi, true, "expected time (s, log scale), 90 % interval"},
                        {lo, hi, true, "measured median (s, log scale)"}, title, 560, 560);
    std::string s = plot.begin();
    s += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#999\" stroke-dasharray=\"4\"/>\n",
                     plot.px(lo), plot.py(lo), plot.px(hi), plot.py(hi));
    for (std::size_t i = 0; i < space.size(); ++i) {
        const auto& b = a.configs[i];
        if (b.measured_s <= 0) continue;
        const bool chosen = a.has_chosen && i == a.chosen;
        s += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#4a7\"/>\n"
                         "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\"><title>{} ({} runs)</title></circle>\n",
                         plot.px(b.lo_s), plot.py(b.measured_s), plot.px(b.hi_s), plot.py(b.measured_s), plot.px(b.time_s),
                         plot.py(b.measured_s), chosen ? 5 : 3, chosen ? "#d22" : "#246", xml_text(config_text(space[i])), b.runs);
    }
    return s + svg_plot::finish();
}

// The command's program (local launcher) or the launcher program, resolved as execvp would: a word with a '/'
// names a file, another is looked up in PATH. Empty when it is an executable file; else what was found.
std::string not_executable(const std::string& word) {
    auto usable = [](const std::string& path) {
        std::error_code ec;
        return std::filesystem::is_regular_file(path, ec) && access(path.c_str(), X_OK) == 0;
    };
    if (word.find('/') != std::string::npos) {
        std::error_code ec;
        if (!std::filesystem::exists(word, ec)) return "no such file";
        if (std::filesystem::is_directory(word, ec)) return "a directory";
        return usable(word) ? std::string() : std::string("a file without the permission to execute it");
    }
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/bin:/bin";
    for (std::size_t a = 0; a <= dirs.size();) {
        std::size_t b = dirs.find(':', a);
        if (b == std::string::npos) b = dirs.size();
        const std::string dir = b > a ? dirs.substr(a, b - a) : ".";
        if (usable(dir + "/" + word)) return "";
        a = b + 1;
    }
    return "not found in PATH";
}

// Before any run and before the journal: the launch of one configuration per node count renders (placeholders,
// nodes the launcher can start, an empty program), and the program to start is an executable.
void check_runnable(launcher_kind kind, const std::vector<configuration>& space, std::int64_t units,
                    const launch_options& lo) {
    std::vector<int> node_counts;
    for (const auto& c : space)
        if (std::find(node_counts.begin(), node_counts.end(), c.nodes) == node_counts.end()) node_counts.push_back(c.nodes);
    launch_plan plan;
    for (int n : node_counts) {
        const auto c = std::find_if(space.begin(), space.end(), [&](const configuration& x) { return x.nodes == n; });
        plan = plan_launch(kind, *c, units, lo, lo.command);
    }
    std::string program = plan.argv.empty() ? std::string() : plan.argv.front();
    if (kind == launcher_kind::local) {  // the program itself, after a binding `taskset -c CPUS`
        const auto& argv = plan.processes.at(0).argv;
        program = argv.at(argv.front() == "taskset" && argv.size() > 3 ? 3 : 0);
    }
    if (const std::string why = not_executable(program); !why.empty())
        throw usage_error(fmt::format("{}: expected {} that can be executed, found \"{}\": {}",
                                      kind == launcher_kind::local ? std::string("COMMAND")
                                      : lo.program.empty()         ? "--launcher " + std::string(to_string(kind))
                                                                   : std::string("--launcher-program"),
                                      kind == launcher_kind::local ? "a program" : "a launcher", program, why));
}

}  // namespace

int run_tune(const tune_options_cli& given) {
    tune_options_cli o = given;
    journal jr;
    std::vector<json> journal_lines;
    if (!given.resume.empty()) {
        // The tune goes on with its journal's options: one given beside --resume would be ignored, so it is refused.
        for (const std::string& opt : given.given)
            if (opt != "--resume" && opt != "--json" && opt != "--quiet" && opt != "--plot")
                throw usage_error("--resume: expected no option but --json, --quiet and --plot beside it (the tune goes on "
                                  "with its journal's options), found " + opt);
        if (!given.profile.empty() || !given.journal.empty() || !given.launch.command.empty() || !given.replay.empty())
            throw usage_error("--resume: expected the journal alone (the tune's options are in its header), found "
                              "other options or a profile beside it");
        journal_lines = jr.open(given.resume, false);
        if (journal_lines.empty() || !journal_lines[0].contains("mmgp_tune"))
            throw input_error(given.resume, "line 1", "the header of an mmgp tune journal", "no header");
        o = options_from(journal_lines[0], given, given.resume);
    } else if (o.profile.empty()) {
        throw usage_error("profile: expected a scenario or platform profile (or --resume JOURNAL), found nothing");
    }
    if (o.space.model != "mmgp") throw usage_error("--model: expected mmgp (tune fits the engine's model), found \"" + o.space.model + "\"");
    launcher_kind kind = launcher_kind::local;
    if (!o.launch.launcher.empty() && !parse_launcher(o.launch.launcher, kind))
        throw usage_error("--launcher: expected openmpi, mpich, srun or local, found \"" + o.launch.launcher + "\"");
    check_launcher_options(kind, o.launch);
    if (o.replay.empty() && o.launch.command.empty())
        throw usage_error("command: expected the program to tune after -- (or --replay RUNS.csv), found nothing");
    if (!o.plot.empty()) {  // never over an input or the journal (a resumed tune would then refuse its journal)
        std::vector<std::string> inputs;
        for (const std::string& in : {o.profile, o.app, o.replay, o.journal, given.resume})
            if (!in.empty()) inputs.push_back(in);
        if (o.journal.empty() && o.replay.empty() && given.resume.empty()) inputs.push_back("mmgp-tune.jsonl");
        check_output("--plot", o.plot, inputs);
    }

    // The scenario: a platform (+ --app) or a whole scenario.
    const scenario_edits edits = edits_of(o.space.sets);
    scenario s;
    const bool platform_only = !o.app.empty() || is_platform_profile(o.profile);
    if (platform_only) {
        s.plat = load_platform(o.profile, edits.platform);
        s.file = o.profile;
        s.name = s.plat.name;
        if (!o.app.empty()) s.app = load_application(o.app);
        else {
            s.app.decomp = decomposition::data;  // no application profile: one run's time, off-loads unknown
            s.app.N = 1;
            o.no_prior = true;
        }
        s.space.m = {1, s.plat.apus};
        s.space.p = {1, s.plat.apus};
        s.space.nodes = {1, 1};
    } else {
        s = load_scenario(o.profile, edits);
    }
    warn_about_platform(s.plat, o.space.max_age_days);
    if (o.launch.units) s.app.units = *o.launch.units;

    // The space: the recorded configurations (replay) or the scenario's box; --m, --p, --nodes, --policy narrow it.
    std::optional<replay_data> replay;
    if (!o.replay.empty()) {
        replay = read_replay(o.replay, o.launch.units);
        if (replay->units > 0 && s.app.decomp == decomposition::task) s.app.units = replay->units;
    }
    const int_range rm = o.space.m.empty() ? s.space.m : parse_range("--m", o.space.m);
    const int_range rp = o.space.p.empty() ? s.space.p : parse_range("--p", o.space.p);
    int_range rn = o.space.nodes.empty() ? s.space.nodes : parse_range("--nodes", o.space.nodes);
    {  // --objective, --within, --max-nodes: checked as for predict, the nodes narrowed
        scenario t = s;
        t.space.nodes = rn;
        search_options goal_opt(false);
        apply_objective_options(o.goal, t, goal_opt);
        if (o.goal.max_nodes) rn = t.space.nodes;
    }
    std::vector<policy> pols;
    if (o.space.policy == "both") pols = {policy::edtlp, policy::os};
    else if (!o.space.policy.empty()) pols = {parse_policy_option(o.space.policy)};
    else pols = {s.space.pol};
    std::vector<configuration> space;
    if (replay) {
        for (const auto& c : replay->space) {
            const bool pol_ok = o.space.policy.empty() || std::find(pols.begin(), pols.end(), c.pol) != pols.end();
            const bool in = (o.space.m.empty() || (c.m >= rm.lo && c.m <= rm.hi)) &&
                            (o.space.p.empty() || (c.p >= rp.lo && c.p <= rp.hi)) &&
                            ((o.space.nodes.empty() && !o.goal.max_nodes) || (c.nodes >= rn.lo && c.nodes <= rn.hi));
            if (pol_ok && in) space.push_back(c);
        }
        if (space.empty())
            throw usage_error("--m/--p/--nodes/--policy: expected a space holding configurations of " + o.replay + ", found none");
    } else {
        const space_bounds b = bounds([&] { scenario t = s; t.space.m = rm; t.space.p = rp; t.space.nodes = rn; return t; }());
        const std::int64_t n = count_feasible([&] { scenario t = s; t.space.m = rm; t.space.p = rp; t.space.nodes = rn; return t; }());
        if (n * static_cast<std::int64_t>(pols.size()) > 2000000)
            throw usage_error(fmt::format("--m/--p/--nodes: expected a space of at most 2000000 configurations to tune "
                                          "over, found {}", n * static_cast<std::int64_t>(pols.size())));
        for (policy pol : pols)
            for (std::int64_t nd = b.n_lo; nd <= b.n_hi; ++nd)
                for (std::int64_t m = b.m_lo; m <= b.m_hi; ++m)
                    for (std::int64_t p = b.p_lo; p <= std::min(b.p_hi, b.apus / m); ++p)
                        space.push_back({static_cast<int>(m), static_cast<int>(p), static_cast<int>(nd), pol});
        if (space.empty()) throw usage_error("--m/--p/--nodes: expected a space with a feasible configuration, found none");
        // No rank without a unit of work, as for mmgp launch: mappings with more ranks than units are left out.
        if (units_are_work(s, o.launch)) {
            const std::int64_t units = s.app.units;
            const auto ranks = [](const configuration& c) { return static_cast<std::int64_t>(c.m) * c.nodes; };
            const auto fewest = *std::min_element(space.begin(), space.end(),
                                                  [&](const auto& x, const auto& y) { return ranks(x) < ranks(y); });
            const std::size_t before = space.size();
            std::erase_if(space, [&](const configuration& c) { return ranks(c) > units; });
            if (space.empty())
                throw usage_error(fmt::format("--units: expected at least {} units, one for each rank of {}, found {}",
                                              ranks(fewest), label(fewest), units));
            if (space.size() < before && !o.quiet)
                std::cerr << fmt::format("mmgp: note: {} configurations with more ranks than the {} units left out\n",
                                         before - space.size(), units);
        }
    }

    tune_options to;
    to.tolerance = o.tolerance;
    to.minimise = objective_of(o.goal);
    to.within = o.goal.within.value_or(0.05);
    to.confidence = o.confidence;
    to.bound_factor = o.bound_factor;
    to.max_runs = static_cast<int>(o.max_runs);
    to.max_seconds = o.max_seconds.value_or(0);
    to.max_run_s = o.timeout.value_or(0);
    to.prior = !o.no_prior;
    to.use_model = !o.no_model;
    tuner t(s, space, to);
    std::map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < space.size(); ++i) index[key_of(space[i])] = i;

    // Runs in flight (--parallel K > 1): Slurm job steps inside the allocation mmgp runs in, or each run its own
    // batch job (sbatch) outside one; the local and MPI launchers run one at a time.
    const int K = static_cast<int>(o.parallel);
    std::optional<slurm_allocation> alloc;
    std::string batch_dir;
    if (K > 1 && !replay) {
        if (kind != launcher_kind::srun)
            throw usage_error("--parallel: expected --launcher srun (runs in flight as Slurm job steps or jobs) or "
                              "--replay, found --launcher " + std::string(to_string(kind)));
        alloc = slurm_allocation::from_environment();
    }
    // Outside an allocation, what the partitions offer (sinfo: CPUs of the largest node, nodes in all): a run
    // no node could hold is recorded as failed without a job (Slurm would keep it pending for ever).
    long long part_cpus = 0, part_nodes = 0;
    if (K > 1 && !replay && !alloc) {
        std::string said;  // what sinfo said that is not a node line (its error)
        std::set<std::string> names;  // a node is listed once per partition it is in
        char name[256];
        for (const std::string& line : command_lines("sinfo -h -N -e -o '%N %c' 2>&1")) {
            long long c = 0;
            if (std::sscanf(line.c_str(), "%255s %lld", name, &c) == 2 && c > 0) {
                part_cpus = std::max(part_cpus, c);
                names.insert(name);
            } else if (said.empty()) {
                said = line;
            }
        }
        part_nodes = static_cast<long long>(names.size());
        while (!said.empty() && said.back() == ' ') said.pop_back();
        if (part_cpus == 0)
            throw usage_error("--parallel: expected a Slurm allocation (salloc/sbatch) or a Slurm cluster to submit batch "
                              "jobs to (sinfo), found neither" + (said.empty() ? std::string() : " (sinfo: " + said + ")"));
    }
    // CPUs of one node: a run that needs them all takes its node whole.
    const long long node_cpus = o.launch.cores_per_node ? *o.launch.cores_per_node : part_cpus > 0 ? part_cpus : s.plat.apus;

    // What can be checked before the first run is, before a journal exists: every node count's launch renders,
    // and the program (local launcher) or the launcher resolves to an executable.
    if (!replay) check_runnable(kind, space, s.app.units, o.launch);

    // The journal: created for a live tune (and for a replay that names one), continued on --resume.
    if (o.resume.empty() && (o.replay.empty() || !o.journal.empty())) {
        if (o.journal.empty()) o.journal = "mmgp-tune.jsonl";
        journal_lines = jr.open(o.journal, true);
        jr.append({{"mmgp_tune", 1}, {"created", utc_now()}, {"options", options_json(o)}});
    }
    if (K > 1 && !replay && !alloc) {
        batch_dir = jr.path() + ".jobs";
        std::error_code ec;
        std::filesystem::create_directories(batch_dir, ec);
        if (ec) throw input_error(batch_dir, "(directory)", "a directory for the runs' batch job scripts", ec.message());
        batch_dir = std::filesystem::absolute(batch_dir).string();
    }
    std::set<long long> run_numbers;
    for (std::size_t ln = 1; ln < journal_lines.size(); ++ln) {
        const auto [run_no, r] = journal_run(journal_lines[ln], jr.path(), "line " + std::to_string(ln + 1), index);
        if (!run_numbers.insert(run_no).second)
            throw input_error(jr.path(), "line " + std::to_string(ln + 1) + ", /run",
                              "each run recorded once (a run counted twice would weigh twice)",
                              fmt::format("run {} again", run_no));
        t.add(r);
    }

    // The loop: up to --parallel runs in flight, each journaled as it ends (in any order); the next run is chosen
    // knowing which are in flight (tuner::assess). Times to decision: from the tune's start (replay: the recorded
    // run times laid out --parallel at a time).
    struct flight {
        std::size_t cfg = 0;
        int k = 0;                 // run number, in the order started
        json rec;
        double start = 0;          // seconds since the tune began
        int id = 0;                // live: run_flights' id
        double end = 0, wall = 0;  // replay: known when it starts
        run_outcome ro = run_outcome::ok;
        std::vector<int> where;    // allocation nodes it holds
        long long cpus = 0;
        std::string job_base;      // sbatch: the files of its job (.sh, .id, .out, .result)
    };
    std::vector<flight> fl;
    std::optional<run_flights> runner;
    if (!replay) runner.emplace();
    const auto t0 = std::chrono::steady_clock::now();
    double sim = 0;
    auto now = [&] { return replay ? sim : std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    auto flying = [&] {
        std::vector<std::size_t> v;
        for (const auto& f : fl) v.push_back(f.cfg);
        return v;
    };
    tune_assessment a = t.assess();
    json trace = json::array();  // after each run: machine seconds spent, time since the start, the choice then
    auto note_step = [&] {
        trace.push_back({{"runs", a.runs}, {"machine_s", a.machine_s}, {"elapsed_s", now()}, {"p_beaten", a.p_beaten},
                         {"chosen", a.has_chosen ? json(key_of(space[a.chosen])) : json(nullptr)}});
    };
    int next_k = 1;  // after the largest run number recorded (runs in flight at an interrupt were not)
    for (std::size_t ln = 1; ln < journal_lines.size(); ++ln)
        next_k = std::max(next_k, journal_lines[ln].value("run", 0) + 1);
    auto start_run = [&](std::size_t cfg, double bound, const std::string& why, std::vector<int> where, bool refused) {
        const configuration c = space[cfg];
        flight f;
        f.cfg = cfg;
        f.k = next_k++;
        f.start = now();
        f.where = std::move(where);
        f.cpus = static_cast<long long>(c.m) * c.p;
        json& rec = f.rec;
        rec["run"] = f.k;
        rec["m"] = c.m;
        rec["p"] = c.p;
        rec["nodes"] = c.nodes;
        rec["policy"] = std::string(to_string(c.pol));
        rec["start"] = utc_now();
        rec["bound_s"] = bound;
        rec["why"] = why;
        if (K > 1) rec["in_flight"] = fl.size(), rec["start_s"] = f.start;
        if (refused) {
            rec["command"] = fmt::format("(none: no node of the partitions holds it, {} nodes of at most {} CPUs)",
                                         part_nodes, part_cpus);
        } else if (replay) {
            const auto& reps = replay->reps.at(key_of(c));
            const recorded& r = reps[splitmix(o.seed * 0x100000001B3ULL + static_cast<std::uint64_t>(f.k)) % reps.size()];
            rec["command"] = "replay " + o.replay;
            if (bound > 0 && r.time_s > bound) f.ro = run_outcome::censored, f.wall = bound;
            else if (r.censored) f.ro = run_outcome::censored, f.wall = r.time_s;
            else f.ro = run_outcome::ok, f.wall = r.time_s;
            f.end = f.start + f.wall;
        } else {
            launch_plan plan = plan_launch(kind, c, s.app.units, o.launch, o.launch.command);
            std::vector<run_process> procs;
            double local_bound = bound;
            if (alloc && !f.where.empty()) {
                // A job step on nodes of its own choosing, with CPUs no other step has (srun --exclusive).
                plan.argv.insert(plan.argv.begin() + 1, {"--exclusive", "-w", alloc->node_list(f.where)});
                alloc->hold(f.where, f.cpus, +1);
            }
            rec["command"] = shell_command(plan);
            if (!batch_dir.empty()) {
                // Its own batch job: the time is taken inside the job (queueing is not the program's), the bound
                // applied there by timeout(1).
                f.job_base = fmt::format("{}/run-{}.{}", batch_dir, f.k, getpid());
                remove_job_files(f.job_base);
                std::string sh = "#!/bin/sh\n# mmgp tune: run " + std::to_string(f.k) + "\ns=$(date +%s.%N)\necho $s > " +
                                 shell_quote(f.job_base + ".started") + "\n";
                if (bound > 0) sh += fmt::format("timeout -s TERM -k 2 {:.3f} ", bound);
                sh += shell_command(plan);
                sh += "rc=$?\ne=$(date +%s.%N)\necho \"$s $e $rc\" > " + shell_quote(f.job_base + ".result.tmp") +
                      " && mv " + shell_quote(f.job_base + ".result.tmp") + " " + shell_quote(f.job_base + ".result") +
                      "\nexit $rc\n";
                write_file_atomically(f.job_base + ".sh", sh);
                // stdbuf: sbatch prints the job id and then waits; unbuffered, the id reaches its file at once
                // (mmgp cancels the job by it).
                std::vector<std::string> argv = {"stdbuf", "-o0", "sbatch", "--wait", "--parsable", "-J", "mmgp-tune", "-N",
                                                 std::to_string(c.nodes), "--ntasks-per-node=" + std::to_string(c.m),
                                                 "--cpus-per-task=" + std::to_string(c.p), "-o", f.job_base + ".out"};
                if (f.cpus >= node_cpus) argv.push_back("--exclusive");  // the whole node: shared with no other run
                argv.push_back(f.job_base + ".sh");
                launch_plan job;
                job.kind = launcher_kind::srun;
                job.argv = argv;
                std::string line = shell_command(job);
                line.pop_back();  // its newline: the step's line follows as a comment
                rec["command"] = line + "  # " + rec["command"].get<std::string>();
                procs.push_back({argv, {}});
                local_bound = 0;
            } else if (plan.kind == launcher_kind::local) {
                for (const auto& lp : plan.processes) procs.push_back({lp.argv, lp.env});
            } else {
                procs.push_back({plan.argv, {}});
            }
            rec["load1"] = load1();
            f.id = runner->start(procs, local_bound, f.job_base.empty() ? std::string() : f.job_base + ".id",
                                 f.job_base.empty() ? std::string() : f.job_base + ".result");
        }
        fl.push_back(std::move(f));
    };
    // Ends run fl[i]: journaled, given to the tuner, its nodes freed.
    auto end_run = [&](std::size_t i, run_outcome ro, double wall, int exit_status) {
        flight f = std::move(fl[i]);
        fl.erase(fl.begin() + static_cast<std::ptrdiff_t>(i));
        if (alloc && !f.where.empty()) alloc->hold(f.where, f.cpus, -1);
        json& rec = f.rec;
        rec["exit"] = exit_status;
        rec["wall_s"] = wall;
        rec["outcome"] = std::string(to_string(ro));
        rec["censored"] = ro == run_outcome::censored;
        if (K > 1) rec["end_s"] = now();
        if (jr.is_open()) jr.append(rec);
        t.add({f.cfg, wall, ro});
        if (!f.job_base.empty())
            remove_job_files(f.job_base);
        return f;
    };
    auto batch_job_id = [](const flight& f) {
        std::string id = read_text_file_or_empty(f.job_base + ".id");
        id = id.substr(0, id.find_first_of(";\n"));
        return id.find_first_not_of("0123456789") == std::string::npos ? id : std::string();
    };
    auto scancel = [&](const flight& f) {
        if (f.job_base.empty()) return;
        if (std::string id = batch_job_id(f); !id.empty()) (void)std::system(("scancel " + id + " >/dev/null 2>&1").c_str());
    };
    // mmgp interrupted: every run has been stopped; batch jobs cancelled, their files removed; 128 + signal.
    auto interrupted = [&] {
        const int sig = runner->interrupted_by();
        for (const auto& f : fl) scancel(f);
        std::cerr << fmt::format("mmgp: interrupted ({}): the journal {} keeps the {} runs that ended; {} run(s) in "
                                 "flight were stopped; mmgp tune --resume {} continues\n",
                                 sigabbrev_np(sig) ? fmt::format("SIG{}", sigabbrev_np(sig)) : "signal", jr.path(),
                                 t.runs().size(), fl.size(), jr.path());
        runner.reset();
        for (const auto& f : fl) remove_job_files(f.job_base);
        std::error_code ec;
        if (!batch_dir.empty()) std::filesystem::remove(batch_dir, ec);  // left in place when not empty
        signal(sig, SIG_DFL);
        raise(sig);
        return 128 + sig;
    };
    // " in node-hours" after a tolerance under a cost objective; nothing by time.
    const std::string in_objective = to.minimise == objective::time ? "" : " in " + std::string(to_string(to.minimise));
    auto progress = [&](const flight& f, run_outcome ro, double wall) {
        if (o.quiet) return;
        std::string best = a.has_chosen ? fmt::format("chosen {} {}, P(beaten by > {:g} %{}) {:.2f}", config_text(space[a.chosen]),
                                                      human_time(a.configs[a.chosen].time_s), 100 * o.tolerance,
                                                      in_objective, a.p_beaten)
                                        : "nothing chosen yet";
        std::cerr << fmt::format("[run {}] {}: {} {}{}{} · {}\n", f.k, config_text(space[f.cfg]), human_time(wall), to_string(ro),
                                 ro == run_outcome::failed ? fmt::format(" (exit status {})", f.rec["exit"].get<int>()) : "",
                                 fl.empty() ? "" : fmt::format(" ({} in flight)", fl.size()), best)
                  << std::flush;
    };
    std::vector<int> failures;  // exit statuses of the failed runs, while none has run
    bool any_ran = false, cannot_run = false;
    for (std::size_t ln = 1; ln < journal_lines.size(); ++ln) {
        const std::string oc = journal_lines[ln].value("outcome", std::string());
        any_ran = any_ran || oc == "ok" || oc == "censored";
    }
    for (;;) {
        while (static_cast<int>(fl.size()) < K) {
            a = t.assess(flying());
            if (a.stop != tune_stop::none || !a.has_next) break;
            std::vector<int> where;
            if (alloc) {
                const configuration& c = space[a.next];
                where = alloc->place(c.nodes, static_cast<long long>(c.m) * c.p);
                if (where.empty() && !fl.empty()) break;  // no room now: wait for a run to end
            }
            const configuration& c = space[a.next];
            if (!batch_dir.empty() && part_cpus > 0 &&
                (c.nodes > part_nodes || (!o.launch.oversubscribe && static_cast<long long>(c.m) * c.p > part_cpus))) {
                start_run(a.next, a.next_bound_s, a.why_next, {}, true);
                const flight f = end_run(fl.size() - 1, run_outcome::failed, 0, 1);
                a = t.assess(flying());
                progress(f, run_outcome::failed, 0);
                continue;
            }
            start_run(a.next, a.next_bound_s, a.why_next, where, false);
        }
        if (a.stop != tune_stop::none || fl.empty()) break;
        std::size_t i = 0;
        run_outcome ro = run_outcome::ok;
        double wall = 0;
        int exit_status = 0;
        if (replay) {
            for (std::size_t j = 1; j < fl.size(); ++j)
                if (fl[j].end < fl[i].end) i = j;
            sim = fl[i].end;
            ro = fl[i].ro;
            wall = fl[i].wall;
        } else {
            auto done = runner->wait_any();
            if (!done) return interrupted();
            while (fl[i].id != done->first) ++i;
            const run_result& rr = done->second;
            wall = rr.wall_s;
            exit_status = rr.exit_status;
            ro = rr.censored ? run_outcome::censored : rr.exit_status != 0 ? run_outcome::failed : run_outcome::ok;
            if (!fl[i].job_base.empty()) {
                // The job's own account: start, end and the exit status of its srun.
                double js = 0, je = 0;
                int rc = -1;
                const std::string res = read_text_file_or_empty(fl[i].job_base + ".result");
                if (std::sscanf(res.c_str(), "%lf %lf %d", &js, &je, &rc) == 3 && je >= js) {
                    const double b = fl[i].rec["bound_s"].get<double>();
                    exit_status = rc;
                    // timeout(1): 124 when the step ended on SIGTERM, 137 when it needed the SIGKILL; a program
                    // that exits 124 by itself before the bound is a failure.
                    const bool at_bound = b > 0 && (rc == 124 || rc == 137) && je - js >= b - 0.05;
                    ro = at_bound ? run_outcome::censored : rc != 0 ? run_outcome::failed : run_outcome::ok;
                    wall = at_bound ? b : je - js;
                } else {
                    // The job never ran its step: cancelled (scancel, a limit) or failed (refused, node failure).
                    // Its state once Slurm has finished with it (COMPLETING first, for a few seconds at most).
                    const std::string id = batch_job_id(fl[i]);
                    std::string state;
                    for (int tries = 0; !id.empty() && tries < 100; ++tries) {
                        state.clear();
                        for (const std::string& line : command_lines("scontrol show job -o " + id + " 2>/dev/null"))
                            state += line + " ";
                        const std::size_t at = state.find("JobState=");
                        state = at == std::string::npos ? std::string() : state.substr(at + 9, state.find(' ', at) - at - 9);
                        if (state != "COMPLETING") break;
                        usleep(100000);
                    }
                    fl[i].rec["job_state"] = state;
                    ro = state == "CANCELLED" ? run_outcome::cancelled : run_outcome::failed;
                    if (exit_status == 0) exit_status = 1;
                }
            }
        }
        const flight f = end_run(i, ro, wall, exit_status);
        a = t.assess(flying());
        note_step();
        progress(f, ro, wall);
        // A program that cannot run: the first three runs failed alike and none succeeded.
        if (ro == run_outcome::failed) failures.push_back(exit_status);
        else if (ro == run_outcome::ok || ro == run_outcome::censored) any_ran = true;
        if (!any_ran && failures.size() >= 3 && std::all_of(failures.begin(), failures.end(), [&](int e) { return e == failures[0]; })) {
            cannot_run = true;
            break;
        }
        if (a.stop != tune_stop::none) break;
        // Runs started before a result set their scale get the bound the results set now (never a looser one).
        if (a.next_bound_s > 0)
            for (auto& g : fl) {
                const double b = g.rec["bound_s"].get<double>();
                if (b > 0 && b <= a.next_bound_s) continue;
                if (!g.job_base.empty()) continue;  // a batch job's bound is in its script
                g.rec["bound_s"] = a.next_bound_s;
                if (replay) {
                    if (g.end > g.start + a.next_bound_s) {
                        g.end = std::max(sim, g.start + a.next_bound_s);
                        g.ro = run_outcome::censored;
                        g.wall = g.end - g.start;
                    }
                } else if (g.job_base.empty()) {
                    runner->set_bound(g.id, a.next_bound_s);
                }
            }
    }
    // The decision is made: runs still in flight are cancelled (their machine time spent, nothing learnt from them).
    const double decided_s = now();
    if (!fl.empty()) {
        if (replay) {
            while (!fl.empty()) end_run(0, run_outcome::cancelled, sim - fl[0].start, 0);
        } else {
            // Machine time spent: since the start (a batch job: since its script started, 0 while it queued).
            std::map<int, double> spent;
            for (const auto& f : fl) {
                spent[f.id] = runner->elapsed(f.id);
                if (!f.job_base.empty()) {
                    double started = 0;
                    const std::string st = read_text_file_or_empty(f.job_base + ".started");
                    spent[f.id] = std::sscanf(st.c_str(), "%lf", &started) == 1
                                      ? std::max(0.0, std::chrono::duration<double>(
                                                          std::chrono::system_clock::now().time_since_epoch()).count() - started)
                                      : 0.0;
                }
                scancel(f);
                runner->stop(f.id);
            }
            while (!fl.empty()) {
                auto done = runner->wait_any();
                if (!done) return interrupted();
                std::size_t i = 0;
                while (i < fl.size() && fl[i].id != done->first) ++i;
                if (i < fl.size()) end_run(i, run_outcome::cancelled, spent[done->first], done->second.exit_status);
            }
        }
    }
    runner.reset();
    if (!batch_dir.empty()) {
        std::error_code ec;
        std::filesystem::remove(batch_dir, ec);  // empty by now (left in place when not)
    }
    a = t.assess();
    if (cannot_run)
        throw usage_error(fmt::format("COMMAND: expected a program that runs, found its first {} runs failed with exit "
                                      "status {} and none succeeded ({} keeps them; its runs' commands say how it was "
                                      "started)",
                                      failures.size(), failures[0], jr.is_open() ? jr.path() : std::string("the replay")));

    // The result.
    const std::string stop_text =
        a.stop == tune_stop::confident
            ? fmt::format("confident: P(another configuration beats the chosen by more than {:g} %{}) = {:.3f} < {:.3f}",
                          100 * o.tolerance, in_objective, a.p_beaten, 1 - o.confidence)
            : std::string(to_string(a.stop)) + fmt::format(" (P(beaten by more than {:g} %) = {:.3f})", 100 * o.tolerance, a.p_beaten);
    std::string launch_line;
    if (a.has_chosen && !o.launch.command.empty())
        launch_line = shell_command(plan_launch(kind, space[a.chosen], s.app.units, o.launch, o.launch.command));
    std::vector<std::size_t> order(space.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
        const auto &bx = a.configs[x], &by = a.configs[y];
        if (bx.excluded != by.excluded) return !bx.excluded;
        return bx.time_s < by.time_s;
    });
    if (!o.plot.empty())
        write_file_atomically(o.plot, plot_svg(space, a, "mmgp tune: " + (s.name.empty() ? s.file : s.name)));

    if (o.json) {
        json j;
        j["schema"] = "mmgp/1";
        j["kind"] = "tune";
        j["objective"] = std::string(to_string(to.minimise));
        j["within"] = to.minimise == objective::time ? json(nullptr) : json(to.within);
        j["profile"] = s.file;
        j["replay"] = o.replay.empty() ? json(nullptr) : json(o.replay);
        j["journal"] = jr.is_open() ? json(jr.path()) : json(nullptr);
        j["stop"] = std::string(to_string(a.stop));
        j["p_beaten"] = a.p_beaten;
        j["runs"] = a.runs;
        j["parallel"] = K;
        j["machine_s"] = a.machine_s;
        j["elapsed_s"] = decided_s;
        j["exhaustive_s_estimate"] = a.exhaustive_s;
        j["noise"] = a.noise;
        j["model_error"] = a.model_error;
        j["model_used"] = a.model_used;
        if (a.has_chosen) {
            const auto& c = space[a.chosen];
            j["chosen"] = {{"m", c.m}, {"p", c.p}, {"nodes", c.nodes}, {"policy", std::string(to_string(c.pol))},
                           {"time_s", a.configs[a.chosen].time_s}, {"measured_s", a.configs[a.chosen].measured_s},
                           {"node_hours", node_hours(c, a.configs[a.chosen].time_s)},
                           {"core_hours", core_hours(c, a.configs[a.chosen].time_s)}};
            if (!launch_line.empty()) j["command"] = launch_line;
        } else {
            j["chosen"] = nullptr;
        }
        j["trace"] = trace;
        j["params"] = json::array();
        for (const auto& p : a.params) j["params"].push_back({{"name", p.name}, {"prior", p.prior}, {"value", p.value}});
        j["configurations"] = json::array();
        for (std::size_t i : order) {
            const auto& b = a.configs[i];
            const auto& c = space[i];
            j["configurations"].push_back({{"m", c.m}, {"p", c.p}, {"nodes", c.nodes}, {"policy", std::string(to_string(c.pol))},
                                           {"runs", b.runs}, {"censored", b.censored}, {"failed", b.failed},
                                           {"measured_s", b.measured_s > 0 ? json(b.measured_s) : json(nullptr)},
                                           {"model_s", b.model_s > 0 ? json(b.model_s) : json(nullptr)},
                                           {"time_s", b.time_s}, {"lo_s", b.lo_s}, {"hi_s", b.hi_s}, {"p_beats", b.p_beats}});
        }
        std::cout << j.dump() << '\n' << std::flush;
        return 0;
    }
    std::string out = fmt::format("# mmgp tune: {}, {} configurations{}\n", s.name.empty() ? s.file : s.name, space.size(),
                                  replay ? fmt::format(", replay of {} (seed {})", o.replay, o.seed) : "");
    out += fmt::format("stopped: {}\n", stop_text);
    out += fmt::format("spent: {} runs, {} of machine time; running every configuration once: about {} ({:.0f} %)\n", a.runs,
                       human_time(a.machine_s), human_time(a.exhaustive_s), a.exhaustive_s > 0 ? 100 * a.machine_s / a.exhaustive_s : 0.0);
    if (K > 1)
        out += fmt::format("in flight: up to {} runs at once; decided after {}{}\n", K, human_time(decided_s),
                           replay ? " (the recorded times laid out that way)" : "");
    if (a.has_chosen) {
        const auto& b = a.configs[a.chosen];
        out += fmt::format("chosen: {}: measured {} (median of {} runs), expected {} [{}, {}]{}\n", config_text(space[a.chosen]),
                           human_time(b.measured_s), b.runs, human_time(b.time_s), human_time(b.lo_s), human_time(b.hi_s),
                           to.minimise == objective::time
                               ? std::string()
                               : fmt::format(", {:.4g} {} expected (objective {}, within {:g} % of the fastest expected time)",
                                             objective_value(to.minimise, space[a.chosen], b.time_s), to_string(to.minimise),
                                             to_string(to.minimise), 100 * to.within));
    } else {
        out += "chosen: none (no configuration finished a run)\n";
    }
    if (!launch_line.empty()) out += "launch: " + launch_line + "\n";
    out += fmt::format("\n{:<30} {:>4} {:>11} {:>11} {:>11} {:>25} {:>9}\n", "configuration", "runs", "measured", "model",
                       "expected", "90 % interval", "P(beats)");
    std::size_t shown = 0;
    for (std::size_t i : order) {
        const auto& b = a.configs[i];
        if (shown >= 15 && b.runs == 0) continue;
        ++shown;
        std::string runs = std::to_string(b.runs);
        if (b.censored) runs += fmt::format(" ({} stopped)", b.censored);
        if (b.failed) runs += fmt::format(" ({} failed)", b.failed);
        out += fmt::format("{:<30} {:>4} {:>11} {:>11} {:>11} {:>25} {:>9}{}\n", config_text(space[i]), runs,
                           b.measured_s > 0 ? human_time(b.measured_s) : "-", b.model_s > 0 ? human_time(b.model_s) : "-",
                           human_time(b.time_s), "[" + human_time(b.lo_s) + ", " + human_time(b.hi_s) + "]",
                           b.excluded ? "-" : fmt::format("{:.3f}", b.p_beats), a.has_chosen && i == a.chosen ? "  <- chosen" : "");
    }
    if (shown < space.size()) out += fmt::format("({} configurations not run and not among the 15 fastest expected: not shown)\n", space.size() - shown);
    out += fmt::format("\nrun-to-run noise {}, model error {}{}\n", pct(a.noise), pct(a.model_error),
                       a.model_used ? "" : " (the model is not used: runs alone)");
    for (const auto& p : a.params)
        out += fmt::format("fitted {}: {:.4g} s{}\n", p.name, p.value, to.prior ? fmt::format(" (prior {:.4g} s)", p.prior) : "");
    std::cout << out << std::flush;
    return 0;
}

}  // namespace mmgp::cli
