// mmgp tune's options as the command line gives them: read by cmd_tune.cpp, written into the journal's header and
// checked on --resume (tune_header.cpp), echoed by the report (tune_report.cpp).
#pragma once

#include "common.hpp"
#include "cmd_launch.hpp"
#include "cost.hpp"

namespace mmgp::cli {

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
    std::string progress_regex;           ///< --progress-regex: a number captured from the program's output lines
    std::optional<double> progress_total; ///< --progress-total: the count a full run reaches
    std::string work;  ///< --work SHORT:FULL: the values of {work} in a short and a full run (empty: full runs only)
    std::string max_cost = "exhaustive";  ///< --max-cost: exhaustive, none or machine seconds
    std::optional<long long> uses;        ///< --uses: production runs the choice will serve
    std::vector<std::string> constants;   ///< --constant SECTION.KEY=VALUE: the tuner's constants (docs/TUNE.md)
    /// A new user's first runs by the platform on a GPU node, the default since it was chosen
    /// (tune_options::explore_by_platform_on_gpu); kept in the journal, whose tunes from before it read false.
    bool explore_platform_on_gpu = true;
    unsigned long long seed = 1;
    std::string replay_first = "random";  ///< --replay-first: random or slowest (each configuration's first draw)
    bool no_prior = false, no_model = false, json = false, quiet = false;
    bool verbose = false;  ///< --verbose: the model's terms in the text result (its column, the fitted parameters)
    bool retry_failed = false;  ///< --retry-failed (with --resume): the journal's failed runs not given to the tuner
    bool no_app = false;  ///< a platform without an application profile (set by the scenario): structure from the runs
    std::vector<std::string> given;  ///< the options given on the command line (their longest names), set by main
};
/// --work SHORT:FULL: the two values, 1 <= SHORT < FULL (nothing when not given); throws usage_error otherwise.
std::optional<std::pair<std::int64_t, std::int64_t>> parse_work(const std::string& text);
/// The command with {work} given its value (mmgp tune --work SHORT:FULL: a short or a full run's).
std::vector<std::string> with_work(const std::vector<std::string>& command, const std::string& value);

}  // namespace mmgp::cli
