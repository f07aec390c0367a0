// run/tune_progress.hpp — the lines a tune prints on standard error while it runs: before the first run what
// running every configuration once is expected to cost and the cap, then one line after each run with the choice
// as it stands and the budget spent. Called by the loop (tune_loop.cpp); written by tune_progress.cpp.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "mmgp/tune.hpp"

namespace mmgp::run {

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
    bool short_run = false;     ///< a short run (--work)
    double projected_s = 0;     ///< stopped by its progress lines: the time they projected (0: not so stopped)
};
/// Before the first run: what running every configuration once is expected to cost, and the cap.
std::string plan_line(const tune_assessment& a, std::size_t configurations);
std::string progress_line(const run_progress& run, const tune_assessment& a, const std::vector<configuration>& space,
                          double tolerance, objective minimise);

}  // namespace mmgp::run
