// What mmgp tune prints: a progress line on stderr after each run, and the result on stdout (text or one JSON
// document, and the --plot SVG). Called by the loop (tune_loop.cpp) and cmd_tune.cpp; pure text but for
// print_report(), which writes.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tune_options.hpp"
#include "mmgp/tune.hpp"

namespace mmgp::cli {

/// " in node-hours" after a tolerance under a cost objective; nothing by time.
std::string in_objective(objective minimise);

/// One run ended: "[run 7] m=4 p=2 nodes=1 edtlp: 3.1 s ok (1 in flight) · chosen ...", with its newline.
struct run_progress {
    int number = 0;
    const configuration& config;
    double wall_s = 0;
    run_outcome outcome = run_outcome::ok;
    int exit_status = 0;
    std::size_t in_flight = 0;  ///< runs still in flight
};
/// Before the first run: what running every configuration once is expected to cost, and the cap.
std::string plan_line(const tune_assessment& a, std::size_t configurations);
std::string progress_line(const run_progress& run, const tune_assessment& a, const std::vector<configuration>& space,
                          double tolerance, objective minimise);

/// Everything the result shows.
struct tune_summary {
    const tune_options_cli& o;
    const scenario& s;
    launcher_kind kind;
    const std::vector<configuration>& space;
    const tune_options& to;
    const tune_assessment& a;  ///< the tuner's last assessment
    std::string journal;       ///< its path; empty: no journal
    int parallel = 1;
    double decided_s = 0;        ///< when the choice was made, seconds since the tune began
    const nlohmann::json& trace;  ///< after each run: the machine time spent, the time since the start, the choice then
};
/// Writes --plot, then prints the result (--json: one document); returns the exit status, 0.
int print_report(const tune_summary& r);

}  // namespace mmgp::cli
