// Runs of a tuner's configurations, as the tests of its stages write them: (configuration index, run) pairs in the
// order they were recorded, and the measurements the stages read (tuner::measured). Included by
// tests/tune/test_tune.cpp, tests/tune/test_short_runs.cpp and tests/run/test_tune_loop.cpp.
#pragma once

#include <cstddef>
#include <map>
#include <utility>
#include <vector>

#include "mmgp/measurement.hpp"
#include "mmgp/tune.hpp"

namespace test {

using config_run = std::pair<std::size_t, mmgp::measurement::run>;

/// The runs as the tuner keeps them: one measurement per configuration run, each run's order its place in `runs`.
inline std::map<std::size_t, mmgp::measurement> measured(const std::vector<config_run>& runs) {
    std::map<std::size_t, mmgp::measurement> out;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        mmgp::measurement::run r = runs[i].second;
        r.order = i;
        out[runs[i].first].runs.push_back(r);
    }
    return out;
}

/// A tuner's runs, copied, in the order they were recorded.
inline std::vector<config_run> runs_of(const mmgp::tuner& t) {
    std::vector<config_run> out;
    for (const auto& [c, r] : t.runs_in_order()) out.emplace_back(c, *r);
    return out;
}

}  // namespace test
