// mmgp calibrate --accelerator cuda: the GPU harness's record (calibration/gpu/gpu_harness.cu) as platform keys.
// Called by cli/cmd_calibrate_gpu.cpp after the host harnesses; pure (JSON in, JSON out), so the tests check it on
// records made by hand where no GPU is present.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace mmgp::calib {

/// Rewrites a host-calibrated platform profile as a GPU node from the harness's record `gpu`: apus = the SMs,
/// O_offload = launch + synchronise of an empty one-block kernel (host-timed), dma = the pinned copies (the
/// latency of the smallest copy, the bandwidth of the largest; the slower direction of each), sharing and
/// T_slice_switch from the sharing measurement, apu_slots and slot_time from the block sweep (docs/MODEL.md §7),
/// the record under measurements.gpu and notes for what the model does not use (the mailbox round trip, the
/// launch's cost against its grid). Throws
/// incomplete_profile (calibrate.hpp) naming the record's member that is missing or malformed.
void describe_gpu(nlohmann::json& profile, const nlohmann::json& gpu);

/// A GPU platform calibrated before (calibrate --accelerator cuda --from): hpu_contexts = every hardware context of
/// the measured machine (machine.num_cpus), then describe_gpu() again from its measurements.gpu. Nothing measured.
/// Throws incomplete_profile naming what is missing.
void redescribe_gpu_host(nlohmann::json& profile);

/// Two processes' off-loads at once took `pair_over_alone` times as long as one process's alone: below this they
/// ran concurrently (MPS), above it one after the other (time-sliced). 1 is perfect overlap, 2 serialisation.
inline constexpr double concurrent_below = 1.5;

/// The platform's slot_time from the record's block sweep: [k, t(k·SMs blocks) / t(SMs blocks)] for every grid of
/// a whole number k of blocks per SM (the reference kernel: every block the same work).
nlohmann::json slot_time_of(const nlohmann::json& gpu);

/// The platform's apu_slots: the reference kernel's occupancy (blocks.resident_per_sm), else the SM's resident
/// threads over the kernel's block size, else 1 (an older record) with `source` empty.
int slots_of(const nlohmann::json& gpu, std::string& source);

}  // namespace mmgp::calib
