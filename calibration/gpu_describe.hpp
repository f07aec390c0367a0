// mmgp calibrate --accelerator cuda: the GPU harness's record (calibration/gpu/gpu_harness.cu) as platform keys.
// Called by cli/cmd_calibrate_gpu.cpp after the host harnesses; pure (JSON in, JSON out), so the tests check it on
// records made by hand where no GPU is present.
#pragma once

#include <nlohmann/json.hpp>

namespace mmgp::calib {

/// Rewrites a host-calibrated platform profile as a GPU node from the harness's record `gpu`: apus = the SMs,
/// O_offload = launch + synchronise of an empty one-block kernel (host-timed), dma = the pinned copies (the
/// latency of the smallest copy, the bandwidth of the largest; the slower direction of each), sharing and
/// T_slice_switch from the sharing measurement (docs/MODEL.md §7), the record under measurements.gpu and notes
/// for what the model does not use (the mailbox round trip, blocks per SM, the grid's cost). Throws
/// incomplete_profile (calibrate.hpp) naming the record's member that is missing or malformed.
void describe_gpu(nlohmann::json& profile, const nlohmann::json& gpu);

/// Two processes' off-loads at once took `pair_over_alone` times as long as one process's alone: below this they
/// ran concurrently (MPS), above it one after the other (time-sliced). 1 is perfect overlap, 2 serialisation.
inline constexpr double concurrent_below = 1.5;

/// How many blocks of the reference kernel an SM runs before they slow each other: the largest measured
/// blocks/SMs whose time stays within 10 % of one block's (the record's blocks.by_blocks), at least 1.
double blocks_per_sm(const nlohmann::json& gpu);

}  // namespace mmgp::calib
