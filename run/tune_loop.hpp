// The loop of mmgp tune: up to --parallel runs in flight on one backend (tune_backend.hpp), each journaled as it
// ends (in any order), the next chosen knowing which are in flight (tuner::assess), until the tuner stops.
// Called by mmgp tune (cli/cmd_tune.cpp); calls the backend, the journal and the tuner, and prints the progress
// lines (tune_progress.hpp).
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

#include "tune_backend.hpp"
#include "tune_journal.hpp"

namespace mmgp::run {

struct loop_settings {
    int parallel = 1;  ///< runs in flight at once
    bool quiet = false;  ///< no progress lines
    double tolerance = 0.03;  ///< for the progress lines
    objective minimise = objective::time;
};

/// What the loop leaves for the report.
struct loop_result {
    /// 128 + signal when mmgp was interrupted (the rest then unset). The loop re-raises the signal with its
    /// default action first, so a caller sees it only where that action does not end the process.
    std::optional<int> interrupted_status;
    double decided_s = 0;                   ///< when the choice was made, seconds since the tune began
    nlohmann::json trace = nlohmann::json::array();  ///< after each run: machine time, time since the start, choice
};

/// Runs the tune to its end; the runs still in flight then are cancelled and the backend closed. Throws
/// mmgp::error when the program cannot run (its first runs all failed alike, none succeeded).
loop_result run_tune_loop(tuner& t, tune_backend& backend, journal& jr, const journal_history& history,
                          const loop_settings& settings);

}  // namespace mmgp::run
