// The application profile of the off-load runtime's program (`mmgp profile`): runs the sequential configuration
// (1 HPU thread, 1 APU) `repetitions` times, and the same program with 2 APUs to measure g, and writes
// T_hpu, T_apu, C_apu, N (per unit) and g (per phase per APU) with their statistics (schema "mmgp/1").
//
//   mmgp::kernels::profile_request rq;  rq.base.alignment = "/usr/share/doc/examl/testData/49.gz";  rq.base.units = 8;
//   mmgp::kernels::profile_report rep = mmgp::kernels::measure_profile(rq);
//   mmgp::write_file_atomically("app.json", rep.json);   // mmgp/io.hpp
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime.hpp"

namespace mmgp::kernels {

struct profile_request {
    config base;               ///< the workload; m, p and policy are set by the profiler
    int repetitions = 3;       ///< sequential runs (and as many p = 2 runs for g)
    bool measure_g = true;     ///< false: g = 0 with a note (e.g. a one-site alignment)
    std::string name = "raxml-libpll";
    std::string command;       ///< the command line, recorded as provenance
    std::function<void(const std::string&)> progress;  ///< one line per run; may be empty
};

/// One statistic over repetitions.
struct statistic {
    double median = 0, mad = 0, cv = 0, min = 0, max = 0;
    int repetitions = 0;
};
statistic summarize(std::vector<double> v);
/// A profile's value with its statistic: {"value", "median", "mad", "cv", "min", "repetitions", "harness", "source"}.
nlohmann::json statistic_json(const statistic& s, double value, const std::string& source, const std::string& harness);
/// The head of the bootstrap program's application profile: schema, kind, name, description, its task
/// decomposition under strong scaling, and its units.
nlohmann::json application_head(const std::string& name, const std::string& description, int units);
/// This machine's host name ("unknown" when it cannot be read).
std::string this_hostname();

struct profile_report {
    statistic T_hpu, T_apu, C_apu, N, g;   ///< per unit (N: off-loads per unit; g: per off-load per APU)
    statistic O_measured;                  ///< per off-load: round trip minus master-APU busy time
    statistic wall1, wall2;                ///< wall time of the p = 1 and p = 2 runs
    double elapsed_s = 0;                  ///< total time of the profiling
    std::string json;                      ///< the application profile, schema mmgp/1
    std::vector<result> runs;              ///< every run, p = 1 and p = 2 interleaved
    std::vector<int> g_pairs_used;         ///< repetitions whose p = 2 run was undisturbed (g is their median)
};

/// A p = 2 profiling run counts as undisturbed (and enters g) when its wall time is at most this many times
/// the fastest p = 2 run: repetitions of an undisturbed run differ by < 15 % here, a run whose host thread
/// took a core from the APU team is 1.7-4x slower (docs: validation/README.md, "The gap g").
inline constexpr double undisturbed_p2_ratio = 1.25;

/// Measures the profile. Throws mmgp::input_error or usage_error (bad input) or mmgp::failure.
profile_report measure_profile(const profile_request& rq);


}  // namespace mmgp::kernels
