// Internal: the output of an OSU micro-benchmarks latency test as a communication table's points.
#pragma once

#include <string>
#include <vector>

#include "mmgp/profile.hpp"

namespace mmgp::detail {

/// The points of an OSU latency test's output (osu_allreduce, osu_latency, ...) in the file `osu_path`; errors
/// name the file `shown` and the line. Refuses a bandwidth test's output.
std::vector<comm_point> read_osu(const std::string& osu_path, const std::string& shown);

}  // namespace mmgp::detail
