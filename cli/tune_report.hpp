// What mmgp tune prints at its end: the result on stdout (text or one JSON document, and the --plot SVG); the
// progress lines while it runs are the loop's (run/tune_progress.hpp). Called by cmd_tune.cpp; pure text but
// for print_report(), which writes.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tune_options.hpp"
#include "mmgp/tune.hpp"

namespace mmgp::cli {

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
