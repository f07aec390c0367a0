// The application profile of the bootstrap program on an accelerator's processes (a GPU node): what
// `mmgp-offload-run --accelerator cuda --profile` prints and `mmgp profile --accelerator cuda` writes. The same
// program and schema as measure_profile() (app_profile.hpp), measured the way the GPU model reads it:
//
//   - one process at p = 1 (its host thread waiting by the request's policy, blocking by default), `repetitions`
//     times, each an untimed run (the host's view: T_hpu, N, the off-loads'
//     round trip) and a timed one (the kernels' device time by CUDA events, the bytes copied);
//   - T_apu: the grids that split over the blocks (newview, evaluate, sumtable, derivatives) per unit, less their
//     floor when the SMs are given (split_floor(): a + b/p through p = 1 and p = S; T_apu = b, C_apu gains a),
//     plus the part of the off-loads' other cost that divides by p (offload_split(): c0 + b/p through C_apu at
//     p = 1 and at p = S; T_apu gains b, C_apu keeps c0);
//   - C_apu: what an off-load costs beyond its split work and what the model charges it anyway (given the
//     platform: model_offload_charge(), O_offload + T_csw + the transfer; else one empty grid's round trip in the
//     process): the P-matrix grid, the further launches, copies and synchronisations of each off-load, per unit; measured
//     at p = S when the SMs are given (one more untimed run per repetition, the split work from the slot curve's
//     timed run at S), where the grids are as short as in the mappings the search weighs (at p = 1 each
//     off-load waits milliseconds for one block, and what that wait costs beyond the work would be counted in);
//     the p = 1 value stays in the record (measurements.C_apu_p1_s);
//   - g = 0: an off-load is one launch whatever p;
//   - dma_bytes: the bytes copied per off-load;
//   - waits_per_offload: how often an off-load's host waits for its grids, counted in the timed runs (a
//     time-sliced switch each when processes share the device);
//   - slot_time, when the device's SMs S are given: the program's own kernels at p = S, 2S and 4S blocks, f(k) =
//     k·T(kS)/T(S) with T the split work's device time (the work is the same at every p).
//
//   mmgp::kernels::process_profile_request rq;  rq.base.simulate_sites = 100000;  rq.sms = 132;
//   std::string doc = mmgp::kernels::measure_process_profile(rq, timed, untimed).json;
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "app_profile.hpp"
#include "runtime.hpp"

namespace mmgp::kernels {

struct process_profile_request {
    config base;            ///< the workload; m and p are set by the profiler
    /// How the runs' host thread waits for its grids: edtlp blocks (the program's default), os spins. The profile
    /// is for runs of that policy: C_apu holds what its waits cost beyond the model's charge (model_offload_charge()
    /// under the same policy), so that a blocking profile's C_apu holds the wake-ups beyond T_csw and a spinning
    /// one's does not.
    host_policy policy = host_policy::edtlp;
    int repetitions = 3;    ///< pairs of sequential runs (untimed, timed)
    int sms = 0;            ///< the device's multiprocessors: the slot curve at S, 2S, 4S blocks (0: not measured)
    std::string name = "raxml-libpll-cuda";
    std::string command;    ///< the command line, recorded as provenance
    /// What the model charges an off-load on the platform the profile is for (model_offload_charge(); bytes copied,
    /// blocks p), and that platform's name for the record. Given, C_apu is the round trip less the split work and
    /// this per off-load, so that the model's prediction of the profile's own runs on that platform is what they
    /// measured. Empty: less one empty grid's round trip as measured in the process (which the model does not
    /// charge: it charges the platform's).
    std::function<double(double bytes, int p)> offload_charge;
    std::string charge_platform;
    std::function<void(const std::string&)> progress;  ///< one line per run; may be empty
};

struct process_profile_report {
    statistic T_hpu, T_apu, C_apu, N, bytes, roundtrip, empty;  ///< per unit (bytes, roundtrip, empty: per off-load)
    std::vector<double> slot_split_s;  ///< the split work's device time at S, 2S, 4S blocks (those measured)
    std::vector<result> runs;          ///< every run: per repetition untimed, timed (p = 1) and untimed at p = S
                                       ///< (when measured), then the slot runs
    double elapsed_s = 0;
    std::string json;                  ///< the application profile, schema mmgp/1
};

/// The split grids' floor per unit: through the split work at p = 1 (t1) and at p = S (tS), a + b/p; a is the time
/// a grid takes whatever its blocks (its start and its tail), b the work that divides by p. 0 where the two points
/// give no floor strictly between 0 and t1 (a grid at S as fast as t1/S or faster, or not faster than at p = 1).
double split_floor(double t1, double tS, int S);

/// The part of the off-loads' cost beyond their split work that divides by p, per unit: through that cost at p = 1
/// (c1) and at p = S (cS), c0 + b/p; b is work of p blocks outside the split kernels (the P-matrix update's grid),
/// which the model's T_apu/p carries, c0 what stays C_apu. 0 where the two give no such part (not lower at S than at
/// p = 1, a negative cS, or one SM); at most S·cS, so that c0 is not below 0.
double offload_split(double c1, double cS, int S);

/// Measures the profile on `timed` (an accelerator whose off-loaders report their device time) and `untimed` (the
/// same without timing). Throws as run_processes(), and mmgp::failure when the timed runs report no device time.
process_profile_report measure_process_profile(const process_profile_request& rq, const process_accelerator& timed,
                                               const process_accelerator& untimed);

}  // namespace mmgp::kernels
