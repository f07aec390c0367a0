// mmgp tune PROFILE [--app APP] --launcher KIND -- COMMAND: run the program where the model and the runs so far
// say it is worth it, until the choice is sure (docs/TUNE.md). The statistics live in libmmgp (mmgp/tune.hpp);
// this file takes the options (or a journal's, on --resume), builds the scenario and the space of configurations,
// chooses where the runs go (run/tune_backend.hpp), and hands over to the journal (run/tune_journal.cpp), the
// loop (run/tune_loop.cpp) and the report (tune_report.cpp); the journal's header is tune_header.cpp's.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <optional>
// libstdc++ 12's <regex> trips -Wmaybe-uninitialized inside its own automaton when built at -O1 with the
// sanitizers (CI's -Werror build): a false positive in the library, silenced for that header alone.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <regex>
#pragma GCC diagnostic pop
#include <stdexcept>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd_tune.hpp"
#include "mmgp/search.hpp"
#include "options.hpp"
#include "process.hpp"
#include "tune_backend.hpp"
#include "tune_header.hpp"
#include "tune_journal.hpp"
#include "tune_loop.hpp"
#include "tune_report.hpp"

namespace fs = std::filesystem;

namespace mmgp::cli {

// The tune machinery this command drives (run/).
using run::add_recorded_runs;
using run::journal;
using run::journal_history;
using run::launch_setup;
using run::loop_result;
using run::read_recorded_runs;
using run::recorded_runs;
using run::tune_backend;

// The names of the tuner's constants, ", "-separated in the option table's order (its rows for "tune --constant"):
// what --constant's help lists and its refusal expects.
namespace {
std::string constant_names() {
    std::string names;
    for (const value_rule& r : value_rules())
        if (r.command == "tune --constant") names += (names.empty() ? "" : ", ") + std::string(r.option);
    return names;
}
}  // namespace

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
    add_launcher_options(sub, o.launch, launcher_choice::local_by_default);
    add_checked(sub, "--replay", o.replay,
                "Draw each run's time from the recorded repetitions of RUNS.csv (columns m, p, time_s; optional "
                "nodes, policy, units, censored, bound_s, sharing) instead of running anything");
    add_checked(sub, "--seed", o.seed, "Replay: the seed of the draws (default 1)");
    add_checked(sub, "--replay-first", o.replay_first,
                "Replay: each configuration's first run drawn at random (random, the default) or its slowest "
                "recorded run (slowest: an unlucky first impression of every configuration)");
    add_checked(sub, "--parallel", o.parallel,
                "Runs in flight at once (default 1): with --launcher srun, Slurm job steps inside the allocation mmgp "
                "runs in (srun --exclusive), or each run its own sbatch job outside one; with --replay, the recorded "
                "times laid out K at a time");
    add_checked(sub, "--journal", o.journal,
                "JSON Lines journal of every run, fsynced after each (default mmgp-tune.jsonl when running a program)");
    add_checked(sub, "--resume", o.resume, "Continue the tune recorded in this journal, with its options");
    sub->add_flag("--retry-failed", o.retry_failed,
                  "With --resume: the journal's failed runs are kept in it but not counted, so that their "
                  "configurations are run again (after fixing what made them fail)");
    add_checked(sub, "--tolerance", o.tolerance,
                "A configuration within this fraction of the best (in the objective) is as good (default 0.03)");
    add_objective_options(sub, o.goal, budget_option::not_offered);
    add_checked(sub, "--confidence", o.confidence, "Stop when the choice is this sure (default 0.95)");
    add_checked(sub, "--max-runs", o.max_runs, "Budget: runs (default 50; 0: no limit)");
    add_checked(sub, "--max-seconds", o.max_seconds, "Budget: machine seconds, wall time x nodes (default: no limit)");
    add_checked(sub, "--max-cost", o.max_cost,
                "No run starts that is expected to take the machine time spent above this: exhaustive (the default: "
                "the estimated cost of running every configuration once), none, or machine seconds");
    add_checked(sub, "--uses", o.uses,
                "Production runs the choice will serve: also stop when one more run is expected to save less over "
                "them than it costs (objective time)");
    add_checked(sub, "--work", o.work,
                "SHORT:FULL: the program's amount of work in a short and a full run, put in the command's {work} "
                "(e.g. -nsteps {work} with --work 2000:20000); configurations are screened by short runs and only "
                "those still in question run in full (docs/TUNE.md, \"Short runs\"); with --replay, the values of "
                "RUNS.csv's work column");
    add_checked(sub, "--progress-regex", o.progress_regex,
                "A pattern whose first group captures a number from the program's own output lines (a step, an "
                "iteration): a full run whose time, projected from its rate after a warm-up, is clearly past its "
                "bound is stopped then (docs/TUNE.md, \"Progress lines\"); with --progress-total");
    add_checked(sub, "--progress-total", o.progress_total,
                "The count --progress-regex reaches at the end of a full run; with --replay alone, the recorded "
                "timelines of RUNS.csv's progress column are replayed");
    add_checked(sub, "--timeout", o.timeout, "The longest one run may take, seconds (default: no limit but the bound)");
    add_checked(sub, "--bound-factor", o.bound_factor,
                "A run is stopped (censored) after this many times the chosen configuration's time (default 3)");
    add_assignments(sub, "--constant", o.constants,
                    "One of the tuner's constants, repeatable (" + constant_names() +
                        "; docs/TUNE.md \"The tuner's constants\")");
    sub->add_flag("--no-prior", o.no_prior,
                  "Do not use the application profile's times as a prior (its structure still shapes the model)");
    sub->add_flag("--no-model", o.no_model, "Learn from the runs alone (no model; for comparison)");
    add_checked(sub, "--plot", o.plot, "Write measured vs predicted per configuration as an SVG file");
    sub->add_flag("--json", o.json, "Print the result as one JSON document");
    sub->add_flag("--quiet", o.quiet, "No progress lines on stderr");
    sub->add_flag("--verbose", o.verbose,
                  "The model's terms in the result too: the model's time beside each configuration's measured and "
                  "expected ones, and the program's fitted parameters (T_hpu, T_apu, C_apu, g)");
}

namespace {

using nlohmann::json;

// PROFILE names a platform profile (a file of kind platform, or a bundled platform), not a whole scenario.
bool is_platform_profile(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) {
        const std::string text = read_text_file(path);
        check_unique_keys(text, path, "");  // a document nested too deep is refused before it is parsed
        json doc = json::parse(text, nullptr, false);
        return doc.is_object() && doc.value("kind", std::string()) == "platform";
    }
    return !bundled_text("platforms/" + path).empty();
}

// True when `path` is a scenario file or a bundled scenario with an application of its own.
bool names_its_application(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) {
        const json doc = json::parse(read_text_file(path), nullptr, false);
        return doc.is_object() && doc.contains("application");
    }
    return !bundled_text("scenarios/" + path).empty();
}

// The options the tune runs with: the command line's or, with --resume, its journal's (opened and locked in `jr`,
// its lines in `journal_lines`).
tune_options_cli resolved_options(const tune_options_cli& given, journal& jr, std::vector<json>& journal_lines) {
    if (given.resume.empty()) {
        if (given.retry_failed)
            throw usage_error("--retry-failed: expected with --resume JOURNAL (it retries a journal's failed runs), "
                              "found it without");
        if (given.profile.empty())
            throw usage_error("profile: expected a scenario or platform profile (or --resume JOURNAL), found nothing");
        return given;
    }
    // The tune goes on with its journal's options: one given beside --resume would be ignored, so it is refused.
    for (const std::string& opt : given.given)
        if (opt != "--resume" && opt != "--json" && opt != "--quiet" && opt != "--verbose" && opt != "--plot" &&
            opt != "--retry-failed")
            throw usage_error("--resume: expected no option but --json, --quiet, --verbose, --plot and --retry-failed beside it "
                              "(the tune goes on with its journal's options), found " + opt);
    if (!given.profile.empty() || !given.journal.empty() || !given.launch.command.empty() || !given.replay.empty())
        throw usage_error("--resume: expected the journal alone (the tune's options are in its header), found "
                          "other options or a profile beside it");
    journal_lines = jr.open(given.resume);
    if (!jr.torn_warning().empty()) hold_warning(jr.torn_warning());
    if (journal_lines.empty() || !journal_lines[0].contains("mmgp_tune"))
        throw input_error(given.resume, "line 1", "the header of an mmgp tune journal", "no header");
    return options_from_header(journal_lines[0], given, given.resume);
}

// The journal a tune without --journal writes.
constexpr const char* default_journal = "mmgp-tune.jsonl";

// An executable regular file.
bool executable_file(const std::string& path) {
    std::error_code ec;
    return std::filesystem::is_regular_file(path, ec) && access(path.c_str(), X_OK) == 0;
}

// --plot never over what the tune reads, runs or writes: its profiles, replay and journal (a resumed tune would
// then refuse its journal), the program and every file its command names, nor inside the journal's run logs.
void check_plot(const tune_options_cli& o) {
    std::vector<std::string> inputs;
    // Resumed, o.journal is the journal named from the tune's directory (given.resume, from the caller's).
    std::error_code ec;
    const std::string journal_named = o.resume.empty() ? o.journal : fs::absolute(o.journal, ec).string();
    for (const std::string& in : {o.profile, o.app, o.replay, journal_named})
        if (!in.empty()) inputs.push_back(in);
    const std::string journal = !o.journal.empty() ? o.journal : default_journal;
    if (o.journal.empty() && o.replay.empty()) inputs.push_back(journal);
    if (!o.launch.command.empty() && !o.launch.command.front().empty())
        if (const std::string program = run::path_lookup(o.launch.command.front()); !program.empty()) inputs.push_back(program);
    for (std::size_t i = 1; i < o.launch.command.size(); ++i) {
        struct stat st {};
        if (::stat(o.launch.command[i].c_str(), &st) == 0 && S_ISREG(st.st_mode)) inputs.push_back(o.launch.command[i]);
    }
    check_output("--plot", o.plot, inputs);
    if (o.replay.empty()) {  // the runs' logs: JOURNAL.logs/run-N.log
        std::error_code e1, e2;
        const fs::path logs = fs::weakly_canonical(journal + ".logs", e1);
        const fs::path dir = fs::weakly_canonical(fs::absolute(o.plot, e2).parent_path(), e2);
        if (!e1 && !e2 && logs == dir)
            throw usage_error("--plot " + o.plot + ": expected a file outside the runs' logs " + journal +
                              ".logs/, found a file inside it (a run's log would overwrite it, or it a log)");
    }
}

// --progress-regex and --progress-total: both for a live tune (one run at a time), the total alone with --replay;
// the pattern a regular expression with a group to capture the count.
void check_progress(const tune_options_cli& o) {
    if (!o.replay.empty()) {
        if (!o.progress_regex.empty())
            throw usage_error("--progress-regex: expected no pattern with --replay (nothing runs; --progress-total alone "
                              "replays the recorded timelines), found \"" + o.progress_regex + "\"");
        return;
    }
    if (o.progress_regex.empty() != !o.progress_total)
        throw usage_error(o.progress_regex.empty()
                              ? "--progress-total: expected with --progress-regex (the pattern of the count it totals), found it alone"
                              : "--progress-regex: expected with --progress-total N (the count a full run reaches), found it alone");
    if (o.progress_regex.empty()) return;
    std::regex rx;
    try {
        rx.assign(o.progress_regex);
    } catch (const std::regex_error& e) {
        throw usage_error("--progress-regex: expected a regular expression (ECMAScript), found \"" + o.progress_regex +
                          "\": " + e.what());
    }
    if (rx.mark_count() < 1)
        throw usage_error("--progress-regex: expected a group ( ... ) that captures the count, e.g. \"step (\\d+)\", "
                          "found \"" + o.progress_regex + "\" without one");
    if (o.parallel > 1)
        throw usage_error("--progress-regex: expected one run at a time (the local backend reads each run's log), found "
                          "--parallel " + std::to_string(o.parallel));
}

void check_work_placeholder(const tune_options_cli& o) {
    if (!o.replay.empty()) return;
    const bool has = std::any_of(o.launch.command.begin(), o.launch.command.end(),
                                 [](const std::string& w) { return w.find("{work}") != std::string::npos; });
    if (has && o.work.empty())
        throw usage_error("COMMAND: expected {work} with --work SHORT:FULL (its values in a short and a full run), "
                          "found {work} without --work");
    if (!has && !o.work.empty())
        throw usage_error("--work " + o.work + ": expected the command to hold {work} where its amount of work goes "
                          "(e.g. -nsteps {work}), found no {work}");
}

// The options that must agree before anything is loaded; returns the launcher.
launcher_kind checked_launcher(const tune_options_cli& o) {
    if (o.space.model != "mmgp") throw usage_error("--model: expected mmgp (tune fits the engine's model), found \"" + o.space.model + "\"");
    launcher_kind kind = launcher_kind::local;
    if (!o.launch.launcher.empty() && !parse_launcher(o.launch.launcher, kind))
        throw usage_error("--launcher: expected openmpi, mpich, srun or local, found \"" + o.launch.launcher + "\"");
    check_launcher_options(kind, o.launch);
    if (o.replay.empty() && o.launch.command.empty())
        throw usage_error("command: expected the program to tune after -- (or --replay RUNS.csv), found nothing");
    std::size_t command_bytes = 0;
    for (const std::string& w : o.launch.command) command_bytes += w.size() + 1;
    if (command_bytes > (std::size_t{1} << 20))
        throw usage_error(fmt::format("command: expected at most 1 MiB of words (the journal's header keeps it whole and "
                                      "--resume reads at most 16 MiB), found {} bytes", command_bytes));
    if (!o.replay.empty() && !o.launch.command.empty())
        throw usage_error("command: expected nothing after -- with --replay (nothing runs), found \"" +
                          o.launch.command[0] + "\"");
    if (!o.replay.empty() && !o.launch.launcher.empty())
        throw usage_error("--launcher: expected no launcher with --replay (nothing is launched), found " +
                          o.launch.launcher);
    if (o.replay.empty() && o.replay_first != "random")
        throw usage_error("--replay-first: expected with --replay (it orders the replayed draws), found it without");
    if (!o.plot.empty()) check_plot(o);
    parse_work(o.work);
    check_work_placeholder(o);
    check_progress(o);
    return kind;
}

// The scenario: a platform (+ --app) or a whole scenario. Without an application profile there is no prior.
// --set search.sharing beside a platform (no scenario): the sharing mode the runs use; the box itself is --m, --p
// and --nodes there, so any other search key is refused rather than ignored.
std::vector<accelerator_sharing> platform_search_sharing(const std::string& search, const platform& pl) {
    const nlohmann::json edit = nlohmann::json::parse(search);
    std::vector<accelerator_sharing> modes;
    for (auto it = edit.begin(); it != edit.end(); ++it) {
        if (it.key() != "sharing")
            throw usage_error("--set search." + it.key() + ": expected only search.sharing beside a platform (the box is "
                              "--m, --p and --nodes), found search." + it.key());
        const std::vector<accelerator_sharing> allowed = pl.sharing_modes();
        if (!it.value().is_array() || it.value().empty())
            throw usage_error("--set search.sharing: expected a non-empty array of the platform's sharing modes, found " +
                              utf8_prefix(it.value().dump(), 40));
        for (const auto& v : it.value()) {
            accelerator_sharing a{};
            if (!v.is_string() || !parse_sharing(v.get<std::string>(), a) ||
                std::find(allowed.begin(), allowed.end(), a) == allowed.end() ||
                std::find(modes.begin(), modes.end(), a) != modes.end())
                throw usage_error("--set search.sharing: expected distinct sharing modes of the platform, found " +
                                  utf8_prefix(v.dump(), 40));
            modes.push_back(a);
        }
    }
    return modes;
}

scenario tune_scenario(tune_options_cli& o) {
    const scenario_edits edits = edits_of(o.space.sets);
    scenario s;
    const bool platform_only = !o.app.empty() || is_platform_profile(o.profile);
    if (!o.app.empty() && !is_platform_profile(o.profile) && names_its_application(o.profile))
        throw usage_error("--app: expected PROFILE to be a platform beside it (--app gives the application), found " +
                          o.profile + ", a scenario that names its own application");
    if (platform_only) {
        s.plat = load_platform(o.profile, edits.platform);
        s.file = o.profile;
        s.name = s.plat.name;
        if (!o.app.empty()) s.app = load_application(o.app);
        else {
            s.app.decomp = decomposition::data;  // no application profile: one run's time, off-loads unknown
            s.app.N = 1;
            o.no_prior = true;
            o.no_app = true;
        }
        s.space.m = {1, s.plat.capacity()};
        s.space.p = {1, s.plat.capacity()};
        s.space.nodes = {1, 1};
        if (!edits.search.empty()) s.space.sharing = platform_search_sharing(edits.search, s.plat);
    } else {
        s = load_scenario(o.profile, edits);
        if (!s.model.empty() && s.model != "mmgp")
            throw input_error(s.file, "/model", "mmgp or no model (tune fits the engine's model)", "\"" + s.model + "\"");
    }
    // A tune runs one sharing mode (its runs are launched one way); a list of several named would be cut to its
    // first in silence.
    if (s.space.sharing.size() > 1)
        throw usage_error(fmt::format("search.sharing: expected one sharing mode for a tune (it launches its runs one "
                                      "way; tune each mode in turn), found {} modes", s.space.sharing.size()));
    warn_about_platform(s.plat, o.space.max_age_days);
    if (o.launch.units) s.app.units = *o.launch.units;
    return s;
}

// The box --m, --p, --nodes and the objective options narrow the scenario's space to, and the policies.
struct narrowed_box {
    int_range m, p, nodes;
    std::vector<policy> policies;
};

narrowed_box narrowed(const tune_options_cli& o, const scenario& s) {
    narrowed_box box;
    box.m = o.space.m.empty() ? s.space.m : parse_range("--m", o.space.m);
    box.p = o.space.p.empty() ? s.space.p : parse_range("--p", o.space.p);
    box.nodes = o.space.nodes.empty() ? s.space.nodes : parse_range("--nodes", o.space.nodes);
    {  // --objective, --within, --max-nodes: checked as for predict, the nodes narrowed
        scenario t = s;
        t.space.nodes = box.nodes;
        search_options goal_opt(false);
        apply_objective_options(o.goal, t, goal_opt);
        if (o.goal.max_nodes) box.nodes = t.space.nodes;
    }
    if (o.space.policy == "both") box.policies = {policy::edtlp, policy::os};
    else if (!o.space.policy.empty()) box.policies = {parse_policy_option(o.space.policy)};
    else box.policies = {s.space.pol};
    return box;
}

// The recorded configurations inside the box (a range or policy not given does not narrow).
std::vector<configuration> replay_space(const tune_options_cli& o, const recorded_runs& replay, const narrowed_box& box) {
    std::vector<configuration> space;
    for (const auto& c : replay.space) {
        const bool pol_ok = o.space.policy.empty() ||
                            std::find(box.policies.begin(), box.policies.end(), c.pol) != box.policies.end();
        const bool in = (o.space.m.empty() || (c.m >= box.m.lo && c.m <= box.m.hi)) &&
                        (o.space.p.empty() || (c.p >= box.p.lo && c.p <= box.p.hi)) &&
                        ((o.space.nodes.empty() && !o.goal.max_nodes) || (c.nodes >= box.nodes.lo && c.nodes <= box.nodes.hi));
        if (pol_ok && in) space.push_back(c);
    }
    if (space.empty())
        throw usage_error("--m/--p/--nodes/--policy: expected a space holding configurations of " + o.replay + ", found none");
    return space;
}

// The sharing mode of a tune's runs on a GPU platform (one with `sharing` modes): the first searched mode, which
// --set 'search.sharing=["time_sliced"]' chooses; dedicated elsewhere. One mode per tune: its runs are launched
// as mmgp launch launches that mode (docs/GPU.md).
accelerator_sharing tune_sharing(const scenario& s) { return searched_modes(s).front(); }

// The feasible configurations of the box under the tune's sharing mode; those of the box the platform cannot hold
// (m*p, or p time-sliced, above its apus x slots) are named in a note, not dropped in silence.
std::vector<configuration> box_space(const scenario& s, const narrowed_box& box, bool quiet) {
    scenario t = s;
    t.space.m = box.m;
    t.space.p = box.p;
    t.space.nodes = box.nodes;
    const accelerator_sharing share = tune_sharing(s);
    if (!s.plat.sharing.empty()) t.space.sharing = {share};
    const space_bounds b = bounds(t, share);
    const std::int64_t n = count_feasible(t);
    const auto policies = static_cast<std::int64_t>(box.policies.size());
    if (n * policies > 2000000)
        throw usage_error(fmt::format("--m/--p/--nodes: expected a space of at most 2000000 configurations to tune "
                                      "over, found {}", n * policies));
    std::vector<configuration> space;
    for (policy pol : box.policies)
        for (std::int64_t nd = b.n_lo; nd <= b.n_hi; ++nd)
            for (std::int64_t m = b.m_lo; m <= b.m_hi; ++m)
                for (std::int64_t p = b.p_lo; p <= b.p_top(m); ++p)
                    space.push_back({static_cast<int>(m), static_cast<int>(p), static_cast<int>(nd), pol, share});
    if (space.empty()) throw usage_error("--m/--p/--nodes: expected a space with a feasible configuration, found none");
    const double whole = static_cast<double>(b.m_hi - b.m_lo + 1) * static_cast<double>(b.p_hi - b.p_lo + 1) *
                         static_cast<double>(b.n_hi - b.n_lo + 1) * static_cast<double>(policies);
    if (!quiet && whole > static_cast<double>(space.size()))
        hold_note(fmt::format("{:.0f} of the {:.0f} configurations of m {}..{} x p {}..{} left out: {} "
                              "above the platform's {} = {} (the most processes x threads it describes per node)",
                              whole - static_cast<double>(space.size()), whole, b.m_lo, b.m_hi, b.p_lo, b.p_hi,
                              b.sliced ? "p" : "m*p", s.plat.apu_slots > 1 ? "apus x apu_slots" : "apus", b.apus));
    if (!quiet && s.plat.sharing_modes().size() > 1)
        hold_note(fmt::format("the runs share the accelerators by {} (the platform's first mode; --set "
                              "'search.sharing=[\"...\"]' tunes another)", to_string(share)));
    return space;
}

// No rank without a unit of work, as for mmgp launch: mappings with more ranks than units are left out.
void drop_ranks_without_work(std::vector<configuration>& space, std::int64_t units, bool quiet) {
    const auto ranks = [](const configuration& c) { return static_cast<std::int64_t>(c.m) * c.nodes; };
    const auto fewest = *std::min_element(space.begin(), space.end(),
                                          [&](const auto& x, const auto& y) { return ranks(x) < ranks(y); });
    const std::size_t before = space.size();
    std::erase_if(space, [&](const configuration& c) { return ranks(c) > units; });
    if (space.empty())
        throw usage_error(fmt::format("--units: expected at least {} units, one for each rank of {}, found {}",
                                      ranks(fewest), label(fewest), units));
    if (space.size() < before && !quiet)
        std::cerr << fmt::format("mmgp: note: {} configurations with more ranks than the {} units left out\n",
                                 before - space.size(), units);
}

// The space to tune over: the recorded configurations (replay) or the scenario's box; --m, --p, --nodes,
// --policy narrow it. A replay's units become the application's.
std::vector<configuration> tune_space(const tune_options_cli& o, scenario& s, const std::optional<recorded_runs>& replay) {
    if (replay && replay->units > 0 && s.app.decomp == decomposition::task) s.app.units = replay->units;
    const narrowed_box box = narrowed(o, s);
    if (replay) return replay_space(o, *replay, box);  // read under the tune's sharing mode (read_recorded_runs)
    // A note of what m*p leaves out when the user drew the box (--m or --p), not for the platform's own.
    std::vector<configuration> space = box_space(s, box, o.quiet || (o.space.m.empty() && o.space.p.empty()));
    if (units_are_work(s, o.launch)) drop_ranks_without_work(space, s.app.units, o.quiet);
    return space;
}

// --max-cost SECONDS: a positive, finite number of machine seconds.
double parse_max_cost(const std::string& text) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (!decimal_text(text) || end != text.c_str() + text.size() || !std::isfinite(v) || v <= 0)
        throw usage_error("--max-cost: expected exhaustive, none or a positive number of machine seconds, found \"" +
                          text + "\"");
    return v;
}

// --constant SECTION.KEY=VALUE (its form checked by the option table): one of the tuner's constants, its value
// checked by the table's row for it (command "tune --constant").
void set_constant(tune_options& to, const std::string& text) {
    const std::size_t eq = text.find('=');
    const std::string name = text.substr(0, eq), value = text.substr(eq + 1);
    const value_rule* rule = nullptr;
    for (const value_rule& r : value_rules())
        if (r.command == "tune --constant" && r.option == name) rule = &r;
    if (!rule) throw usage_error("--constant: expected one of " + constant_names() + ", found \"" + name + "\"");
    const std::string why = check_value(*rule, value);
    if (!why.empty()) throw usage_error("--constant " + name + ": " + why);
    if (name == "fallback.trust") {
        using trust = tune_options::trust;
        to.fallback_trust = value == "calibrated" ? trust::calibrated : value == "never" ? trust::never
                            : value == "always" ? trust::always : trust::noise;
        return;
    }
    const double v = std::strtod(value.c_str(), nullptr);
    if (name == "noise.sd") to.noise = v;
    else if (name == "noise.dof") to.noise_dof = v;
    else if (name == "noise.few_runs_noisiest") to.few_runs_noisiest = v == 1;
    else if (name == "model.error") to.model_error = v;
    else if (name == "discrepancy.length_scale") to.length_scale = v;
    else if (name == "fit.prior_weight") to.prior_weight = v;
    else if (name == "fit.min_configurations") to.min_fit_configurations = static_cast<int>(v);
    else if (name == "policy.knowledge_gradient") to.next_by_gradient = v == 1;
    else if (name == "policy.explore_platform") to.explore_by_platform = to.explore_by_platform_on_gpu = v == 1;
    else if (name == "policy.first_platform") to.first_by_platform = v == 1;
    else if (name == "bound.noise_z") to.bound_noise_z = v;
    else if (name == "progress.chosen_z") to.progress_chosen_z = v;
    else if (name == "short.explore_pairs") to.short_explore_pairs = static_cast<int>(v);
    else throw std::logic_error("set_constant: no member for the table's constant " + name);
}

tune_options tuner_options(const tune_options_cli& o) {
    tune_options to;
    to.tolerance = o.tolerance;
    to.minimise = objective_of(o.goal);
    to.within = o.goal.within.value_or(0.05);
    to.confidence = o.confidence;
    to.bound_factor = o.bound_factor;
    to.max_runs = static_cast<int>(o.max_runs);
    to.max_seconds = o.max_seconds.value_or(0);
    to.cap_at_exhaustive = o.max_cost == "exhaustive";
    if (o.max_cost != "exhaustive" && o.max_cost != "none") to.max_cost_s = parse_max_cost(o.max_cost);
    if (o.uses) {
        if (to.minimise != objective::time)
            throw usage_error("--uses: expected with --objective time (the saving is in run time), found --objective " +
                              std::string(to_string(to.minimise)));
        to.uses = static_cast<double>(*o.uses);
    }
    to.max_run_s = o.timeout.value_or(0);
    if (const auto work = parse_work(o.work)) to.short_work = static_cast<double>(work->first) / static_cast<double>(work->second);
    to.prior = !o.no_prior;
    to.use_model = !o.no_model;
    to.choose_structure = o.no_app;
    to.explore_by_platform_on_gpu = o.explore_platform_on_gpu;
    refuse_repeated_keys("--constant", o.constants);
    for (const std::string& c : o.constants) set_constant(to, c);
    return to;
}

// Where the runs go: the replay; one at a time, processes of this machine or the launcher's; with --parallel K,
// Slurm job steps inside the allocation mmgp runs in, or each run its own batch job outside one.
std::unique_ptr<tune_backend> chosen_backend(const tune_options_cli& o, launcher_kind kind, std::int64_t units,
                                             std::optional<recorded_runs>& replay) {
    if (replay)
        return run::replay_backend(std::move(*replay), o.seed, o.replay_first == "slowest",
                                   {"", o.progress_total.value_or(0)});
    const auto work = parse_work(o.work);
    const std::string short_value = work ? std::to_string(work->first) : "", full_value = work ? std::to_string(work->second) : "";
    launch_setup setup{kind, [kind, units, lo = o.launch, short_value, full_value](const configuration& c, bool short_run,
                                                                                    std::optional<int> node_cpus) {
                           launch_options l = lo;
                           if (!l.cores_per_node) l.cores_per_node = node_cpus;
                           return plan_launch(kind, c, units, l, with_work(lo.command, short_run ? short_value : full_value));
                       },
                       o.launch.cores_per_node, o.launch.oversubscribe, {o.progress_regex, o.progress_total.value_or(0)}};
    if (static_cast<int>(o.parallel) <= 1) return run::local_backend(std::move(setup));
    if (kind != launcher_kind::srun)
        throw usage_error("--parallel: expected --launcher srun (runs in flight as Slurm job steps or jobs) or "
                          "--replay, found --launcher " + std::string(to_string(kind)));
    if (auto steps = run::slurm_steps_backend(setup)) return steps;
    return run::slurm_batch_backend(std::move(setup));
}

// The command's program (local launcher) or the launcher program, resolved as execvp would: a word with a '/'
// names a file, another is looked up in PATH. Empty when it is an executable file; else what was found.
std::string not_executable(const std::string& word) {
    if (word.find('/') != std::string::npos) {
        std::error_code ec;
        if (!std::filesystem::exists(word, ec)) return "no such file";
        if (std::filesystem::is_directory(word, ec)) return "a directory";
        return executable_file(word) ? std::string() : std::string("a file without the permission to execute it");
    }
    return run::path_lookup(word).empty() ? "not found in PATH" : "";
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
        plan = plan_launch(kind, *c, units, lo, with_work(lo.command, "1"));
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

// Resumed, a bad option is the journal header's, not the command line's: named at its key.
template <class F>
auto as_header_option(const std::string& resumed, F&& f) {
    try {
        return f();
    } catch (const usage_error& e) {
        if (resumed.empty() || std::string_view(e.what()).rfind("--plot", 0) == 0) throw;  // --plot: the caller's
        const std::string key = header_key_named_by(e.what());
        throw mmgp::error(resumed + ": line 1, /options" + (key.empty() ? "" : "/" + key) + ": " + e.what());
    }
}

// The tuner's options (resumed: a bad one named as the header's).
tune_options resumed_tuner_options(const tune_options_cli& o, const std::string& resumed) {
    return as_header_option(resumed, [&] { return tuner_options(o); });
}

}  // namespace

std::optional<std::pair<std::int64_t, std::int64_t>> parse_work(const std::string& text) {
    if (text.empty()) return std::nullopt;
    const std::size_t colon = text.find(':');
    long long lo = 0, hi = 0;
    const auto whole = [](const std::string& s, long long& v) {
        char* end = nullptr;
        errno = 0;
        v = std::strtoll(s.c_str(), &end, 10);
        return !s.empty() && std::isdigit(static_cast<unsigned char>(s[0])) && end == s.c_str() + s.size() && errno == 0;
    };
    if (colon == std::string::npos || !whole(text.substr(0, colon), lo) || !whole(text.substr(colon + 1), hi) ||
        lo < 1 || hi <= lo)
        throw usage_error("--work: expected SHORT:FULL, two whole numbers with 1 <= SHORT < FULL (the values of "
                          "{work} in a short and a full run), found \"" + text + "\"");
    return std::pair<std::int64_t, std::int64_t>{lo, hi};
}

std::vector<std::string> with_work(const std::vector<std::string>& command, const std::string& value) {
    std::vector<std::string> out = command;
    for (std::string& w : out)
        for (std::size_t at = w.find("{work}"); at != std::string::npos; at = w.find("{work}", at + value.size()))
            w.replace(at, 6, value);
    return out;
}

int run_tune(const tune_options_cli& given) {
    journal jr;
    std::vector<json> journal_lines;
    tune_options_cli o = resolved_options(given, jr, journal_lines);
    const launcher_kind kind = as_header_option(given.resume, [&] { return checked_launcher(o); });
    scenario s = as_header_option(given.resume, [&] { return tune_scenario(o); });
    if (!o.plot.empty()) check_output("--plot", o.plot, s.sources);  // the files the scenario names, too
    o.launch.accelerators = s.plat.apus;  // a GPU mapping's MPS percentage, as mmgp launch renders it
    std::optional<recorded_runs> replay;
    if (!o.replay.empty()) {
        replay = read_recorded_runs(o.replay, {.units = o.launch.units,
                                               .work = parse_work(o.work),
                                               .with_progress = o.progress_total.has_value(),
                                               .sharing = tune_sharing(s),
                                               .platform_modes = s.plat.sharing_modes(),
                                               .platform_name = s.plat.name});
        warn_about_columns(o.replay, replay->ignored_columns);
    }
    const std::vector<configuration> space = as_header_option(given.resume, [&] { return tune_space(o, s, replay); });
    const tune_options to = resumed_tuner_options(o, given.resume);
    tuner t(s, space, to);

    // What can be checked before the first run is, before a journal exists: where the runs can go, every node
    // count's launch renders, and the program (local launcher) or the launcher resolves to an executable.
    const bool live = !replay;
    const std::unique_ptr<tune_backend> backend =
        as_header_option(given.resume, [&] { return chosen_backend(o, kind, s.app.units, replay); });
    if (live) check_runnable(kind, space, s.app.units, o.launch);

    // The journal: created for a live tune (and for a replay that names one), continued on --resume.
    if (o.resume.empty() && (o.replay.empty() || !o.journal.empty())) {
        if (o.journal.empty()) o.journal = default_journal;
        const json header = journal_header(o);
        jr.create(o.journal, header);
        journal_lines = {header};
    }
    backend->attach_journal(o.journal);  // as named from the tune's directory (jr.path(): as the caller typed it)
    const journal_history history = add_recorded_runs(journal_lines, jr.path(), t, given.retry_failed);
    // Marked before any run: a later --resume sets the failures aside too, even where this session starts none.
    if (history.failures_set_aside > 0 && jr.is_open()) jr.append(run::retry_mark_line(history.retry_failed_before));
    for (const auto& [config, short_run] : history.recorded) backend->recorded(space[config], short_run);

    const int parallel = static_cast<int>(o.parallel);
    flush_warnings();  // every check passed: the platform's warnings before the first run, not after the last
    backend->begin();
    const loop_result done = run::run_tune_loop(t, *backend, jr, history, {parallel, o.quiet, o.tolerance, to.minimise});
    if (done.interrupted_status) return *done.interrupted_status;
    const tune_assessment assessment = t.assess();
    return print_report({o, s, kind, space, to, assessment, jr.is_open() ? jr.path() : std::string(), parallel,
                         done.decided_s, done.trace});
}

}  // namespace mmgp::cli
