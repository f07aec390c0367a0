// The mmgp command: shared pieces of the subcommands. No model logic lives here.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mmgp/error.hpp"
#include "mmgp/io.hpp"
#include "mmgp/launch.hpp"
#include "mmgp/model.hpp"
#include "mmgp/search.hpp"
#include "mmgp/validate.hpp"
#include "cost.hpp"

namespace mmgp::cli {

/// A bad command line: printed as "mmgp: OPTION: expected ..., found ..." with exit status 2.
struct usage_error : mmgp::error {
    using mmgp::error::error;
};

/// Refuses (usage_error) an assignment option (--set, --constant) whose KEY appears twice in `assignments`.
void refuse_repeated_keys(const std::string& option, const std::vector<std::string>& assignments);

/// Parses "N" or "LO:HI" (1 <= LO <= HI) for a range option; throws usage_error naming the option.
int_range parse_range(const std::string& option, const std::string& text);
/// Parses a --model value.
model_kind parse_model_option(const std::string& text);
/// Parses a --policy value.
policy parse_policy_option(const std::string& text);

/// Shortest round-trip text of a double (JSON and CSV output).
std::string num(double v);
/// A time for people: "27.83 s", "412 ms", "3.1 us".
std::string human_time(double s);
/// A configuration for people: "m=4 p=4 nodes=1".
std::string label(const configuration& c);
/// The breakdown as a JSON object (seconds).
std::string breakdown_json(const breakdown& b);
/// JSON string literal.
std::string quote(const std::string& s);

/// The model and search-space options shared by predict and launch: --model, --policy, --m, --p, --nodes.
struct space_options_cli {
    std::string model = "mmgp", policy, m, p, nodes;
    std::vector<std::string> sets;  ///< --set SECTION.KEY=VALUE
    double max_age_days = 90;       ///< --max-age: a calibrated platform older than this is warned about
    /// True when --m, --p or --nodes was given (the space was narrowed by hand).
    bool narrowed() const { return !m.empty() || !p.empty() || !nodes.empty(); }
};
void add_space_options(CLI::App* sub, space_options_cli& o);
/// Applies --policy, --m, --p, --nodes to s.space and checks the scenario still covers it.
void apply_space_options(const space_options_cli& o, scenario& s);
/// The scenario `profile` with the --set edits of `o`, then apply_space_options(); warns (stderr) about a
/// calibrated platform from another machine, old, measured too few times or flagged noisy.
scenario load_with_options(const std::string& profile, const space_options_cli& o);
/// One "mmgp: warning: ..." line for each of platform_warnings(pl, this machine, now), held until
/// flush_warnings(): printed on stderr when the command has checked its input and begins its work or output
/// (main flushes them after a subcommand returns), dropped when the input is refused (one line for bad input).
void warn_about_platform(const platform& pl, double max_age_days);
/// One held warning line naming the columns of a runs file that are not read (none: nothing).
void warn_about_columns(const std::string& file, const std::vector<std::string>& ignored);
/// One held line (a note: "mmgp: note: ..."), printed and dropped with the warnings.
void hold_note(const std::string& text);
/// One held warning ("mmgp: warning: ..."), printed and dropped with the others.
void hold_warning(const std::string& text);
/// Prints the held warnings on stderr.
void flush_warnings();
/// Forgets the held warnings (the command was refused).
void drop_warnings();

/// --set SECTION.KEY=VALUE, repeatable: what-if edits of the profile (SECTION platform, application or search;
/// only platform for fit). Added by add_space_options() for predict and launch.
/// A repeatable SECTION.KEY=VALUE option checked by the option table's row for `name`: one value each time.
CLI::Option* add_assignments(CLI::App* sub, const std::string& name, std::vector<std::string>& target,
                             const std::string& help);
void add_set_option(CLI::App* sub, std::vector<std::string>& sets, const std::string& help_sections);
/// The edits of --set options, as JSON merge patches per section: VALUE is JSON when it parses (32, 2e-6,
/// true, null to remove a key, [1,8], {...}, "text"), else a string; a dotted KEY edits a nested object
/// (platform.network.models.allreduce.inter.latency_s=1e-6). A later --set of the same key wins.
scenario_edits edits_of(const std::vector<std::string>& sets);

/// What a profile writer emits.
enum class profile_kind { platform, application };
/// The one output path of the profile writers (calibrate, profile, fit): the document must read back as a
/// profile of its kind (the schema's key tables and the reader's rules); then it replaces `path`
/// atomically, or goes to standard output when `path` is empty. A document the reader refuses is the
/// writer's fault: std::logic_error (exit status 1, "internal error"), nothing written.
void write_profile(const std::string& path, const std::string& text, profile_kind kind, std::string_view command);

struct predict_options {
    std::string profile, plot;
    space_options_cli space;
    objective_options_cli goal;  ///< --objective, --within, --max-nodes, --budget
    std::optional<double> tolerance;  ///< --tolerance (not given: the scenario's)
    bool json = false, csv = false, uncertainty = false;
    int top = 15;
};
void setup_predict(CLI::App& app, predict_options& o);
int run_predict(const predict_options& o);

struct fit_options_cli {
    std::string file, platform, output, decomposition, scaling = "strong", policy, name = "fitted";  ///< empty: chosen
    std::optional<double> N;  ///< --N (not given: 1, or fitted with --fit-N)
    double N_start = 0.0;
    bool fit_N = false, fit_T_start = false, json = false;
    std::string spin_limit;  ///< --spin-limit (empty: not given)
    std::vector<std::string> fix;
    std::vector<std::string> sets;  ///< --set platform.KEY=VALUE
    double max_age_days = 90;       ///< --max-age
    double noise_pct = 20.0;        ///< --noise: the run-to-run noise the structure selection assumes
};
void setup_fit(CLI::App& app, fit_options_cli& o);
int run_fit(const fit_options_cli& o);

struct validate_options {
    std::string file;
    std::string model = "mmgp";
    bool json = false;
    std::optional<double> max_mean, max_max;  ///< --max-mean-err, --max-err
    std::vector<std::string> sets;            ///< --set
};
void setup_validate(CLI::App& app, validate_options& o);
int run_validate(const validate_options& o);

struct calibrate_options {
    bool quick = false, mpi = false, time_shared = false, dedicated = false, quiet = false;
    std::string output, hpu_cpus, apu_cpus, name;
    std::string from;  ///< --from: re-describe this calibrated profile instead of measuring
    double cv_threshold = 0.10;
    std::optional<long long> max_threads;  ///< --max-threads
    std::string simulate, node, sim_nodes;  ///< --simulate CLUSTER.xml --node NODE.json --nodes LO:HI
    std::optional<long long> ppn;           ///< --ppn: processes per node simulated, 1..N
    std::string accelerator;                ///< --accelerator cuda[:DEVICE]: a GPU node
};
void setup_calibrate(CLI::App& app, calibrate_options& o);
int run_calibrate(const calibrate_options& o);
int run_calibrate_simulate(const calibrate_options& o);  ///< --simulate (cmd_calibrate_simulate.cpp)
int run_calibrate_gpu(const calibrate_options& o);       ///< --accelerator cuda (cmd_calibrate_gpu.cpp)

/// mmgp profile (calibration/kernels, built when libpll-dev is installed).
struct profile_options {
    std::string alignment, simulate, output, name = "raxml-libpll";
    bool quiet = false;
    std::optional<int> taxa, sites;  ///< --taxa, --sites (not given: all)
    int units = 16, repetitions = 5, rounds = 1, newton = 4;
    unsigned long seed = 1;
};
void setup_profile(CLI::App& app, profile_options& o);
int run_profile(const profile_options& o);

struct launch_options {
    std::string profile, launcher, program;
    space_options_cli space;
    objective_options_cli goal;  ///< --objective, --within, --max-nodes, --budget
    std::optional<std::int64_t> units;  ///< --units (not given: the application's)
    std::optional<int> cores_per_node;
    bool oversubscribe = false, no_bind = false, exec = false, json = false;
    std::vector<std::string> command;
    std::string devices;   ///< --cuda-devices: CUDA_VISIBLE_DEVICES of a GPU mapping
    int accelerators = 0;  ///< not an option: the platform's apus (a GPU node's SMs), for MPS's percentage
};
/// A streamed report was cut short by an error: main's error line then says that standard output holds an
/// incomplete report (cmd_predict.cpp's out_stream marks it).
void mark_report_incomplete() noexcept;
bool report_incomplete() noexcept;

void setup_launch(CLI::App& app, launch_options& o);
int run_launch(const launch_options& o);
/// The launch of `command` with mapping c and `units` task units, as `o` asks (launcher program, binding to the
/// CPUs available here, --cores-per-node, --oversubscribe, --no-bind): what launch and tune run.
launch_plan plan_launch(launcher_kind kind, const configuration& c, std::int64_t units, const launch_options& o,
                        const std::vector<std::string>& command);
/// True when the task units are the program's work, so that no rank may go without one: task decomposition,
/// --units given, or a command that names {units} or {U}.
bool units_are_work(const scenario& s, const launch_options& o);
/// Refuses (usage_error) a launcher option that `kind` cannot honour: --launcher-program with the local launcher,
/// --oversubscribe with the local launcher or mpich.
void check_launcher_options(launcher_kind kind, const launch_options& o);

/// mmgp tune: the closed loop (cmd_tune.cpp, docs/TUNE.md).
struct tune_options_cli {
    std::string profile, app, replay, journal, resume, plot;
    space_options_cli space;
    objective_options_cli goal;  ///< --objective, --within, --max-nodes
    launch_options launch;  ///< --launcher, --units, --cores-per-node, --launcher-program, --oversubscribe, --no-bind
    double tolerance = 0.03, confidence = 0.95, bound_factor = 3.0;
    long long max_runs = 50;
    long long parallel = 1;  ///< --parallel: runs in flight at once
    std::optional<double> max_seconds, timeout;
    std::string max_cost = "exhaustive";  ///< --max-cost: exhaustive, none or machine seconds
    std::optional<long long> uses;        ///< --uses: production runs the choice will serve
    std::vector<std::string> constants;   ///< --constant SECTION.KEY=VALUE: the tuner's constants (docs/TUNE.md)
    unsigned long long seed = 1;
    std::string replay_first = "random";  ///< --replay-first: random or slowest (each configuration's first draw)
    bool no_prior = false, no_model = false, json = false, quiet = false;
    bool verbose = false;  ///< --verbose: the model's terms in the text result (its column, the fitted parameters)
    bool retry_failed = false;  ///< --retry-failed (with --resume): the journal's failed runs not given to the tuner
    bool no_app = false;  ///< a platform without an application profile (set by the scenario): structure from the runs
    std::vector<std::string> given;  ///< the options given on the command line (their longest names), set by main
};
void setup_tune(CLI::App& app, tune_options_cli& o);
int run_tune(const tune_options_cli& o);

}  // namespace mmgp::cli
