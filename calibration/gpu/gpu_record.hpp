// What mmgp-gpu-harness (gpu_harness.cu) measures, as plain samples, and the one function that writes them as the
// harness's JSON record (gpu_record.cpp): the medians, minima and derived ratios are computed there with the
// calibration's statistics (stats.hpp) and written by the project's JSON writer, not in the .cu file. The record is
// read back by gpu_describe.cpp (mmgp calibrate --accelerator cuda).
//
// This header is C++17 and free of nlohmann, so that nvcc compiles it with the .cu file; gpu_record.cpp is a host
// C++20 unit of the calibration library, linked into the harness and tested without a GPU (tests/calibration).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mmgp::calib {
class apu_backend;  // backend.hpp
}

namespace mmgp::calib::gpu {

/// The device, as cudaGetDeviceProperties and the runtime report it.
struct device_facts {
    int index = 0;
    std::string name;
    int sms = 0;
    int cc_major = 0, cc_minor = 0;
    std::size_t memory_bytes = 0;
    int max_blocks_per_sm = 0, max_threads_per_sm = 0;
    int driver_version = 0, runtime_version = 0, compute_mode = 0;
};

/// Repeated timings (seconds) of one grid size.
struct grid_sample {
    int blocks = 0;
    std::vector<double> seconds;
};

/// The off-load round trip: launch + synchronise and the enqueue alone of an empty one-block kernel, then the round
/// trip against the grid size.
struct offload_samples {
    std::vector<double> sync_s, enqueue_s;
    std::vector<grid_sample> by_blocks;
    /// The same launch + synchronise in a process whose host thread blocks while it waits
    /// (cudaDeviceScheduleBlockingSync, as an edtlp process of the off-load runtime waits); empty: not measured.
    std::vector<double> blocking_sync_s = {};
    /// The same round trips of a one-block kernel that waits `wait_s` on the device, spinning and blocking: how the
    /// blocked thread's wake-up (blocking less spinning) grows with how long it slept; empty: not measured.
    struct wait_sample {
        double wait_s = 0;
        std::vector<double> spinning_s, blocking_s;
    };
    std::vector<wait_sample> by_wait = {};
};

/// The persistent kernel on mapped host memory: the warm rounds' round trips; answered false when it never replied.
struct mailbox_samples {
    bool answered = false;
    std::vector<double> round_trip_s;
};

/// Pinned copies of one size (bytes), repeated.
struct copy_sample {
    std::size_t bytes = 0;
    std::vector<double> seconds;
};
struct copy_samples {
    std::vector<copy_sample> host_to_device, device_to_host;
};

/// The compute-bound reference kernel against its grid, and its occupancy (blocks an SM holds at once).
struct block_samples {
    int threads_per_block = 0, iterations = 0, resident_per_sm = 0;
    std::vector<grid_sample> by_blocks;
};

/// One sharing measurement: `kernels` off-loads by one process alone, then by `procs` (two, unless said) at once
/// (measured false when a child failed).
struct sharing_samples {
    bool measured = false;
    int kernels = 0;
    double kernel_s = 0;      ///< one kernel's device time, alone (the children's least)
    double alone_wall_s = 0;  ///< one process's kernels, wall time
    double pair_wall_s = 0;   ///< `procs` processes' kernels at once, wall time
    int blocks = 1;           ///< the grid of every kernel
    int procs = 2;            ///< the processes at once
    bool blocking = false;    ///< their host threads blocked while they waited (else they spun)
};

/// Without MPS (absent when only MPS was asked for) and with it (absent, with the reason, where it was not run).
struct sharing_section {
    std::optional<sharing_samples> time_sliced, mps;
    /// Time-sliced again with grids spread over the SMs (a quarter of them, all of them); empty: not measured.
    std::vector<sharing_samples> time_sliced_grids = {};
    /// One-block kernels again, by more processes at once (4, 8), time-sliced and under MPS; time-sliced by 2, 4 and
    /// 8 processes whose host threads block while they wait; empty: not measured.
    std::vector<sharing_samples> time_sliced_procs = {}, mps_procs = {}, time_sliced_blocking_procs = {};
    std::string mps_note;
};

struct harness_samples {
    device_facts device;
    bool quick = false;
    offload_samples offload;
    mailbox_samples mailbox;
    copy_samples copies;
    block_samples blocks;
    sharing_section sharing;
    /// The CPU harnesses' round trips and copies through the CUDA backends (backend_harnesses, as JSON text);
    /// empty: not measured.
    std::string backend_harnesses = {};
};

/// Each backend (unstarted) started with one APU and timed by the CPU harnesses' own loops, statistics and records:
/// the off-load round trip (run_offload_with, as the host threads' spin round trip) and, where the backend has a
/// data-transfer path, the copies (run_dma_with) with their latency-bandwidth fit; then stopped. One JSON object as
/// text, a key per backend name: {"offload": record, "dma": {"latency_s", "bandwidth_Bps", "r2", "per_size"}}, or
/// {"error": what} where starting or measuring it threw (beside its measurements where only stopping it did). The
/// calling thread is pinned to its current CPU while it measures. A host unit (gpu_backend_section.cpp): tested
/// with the host-thread backends.
std::string backend_harnesses(const std::vector<apu_backend*>& backends, bool quick);

/// The harness's record (one JSON document, no newline): medians and minima of the samples, the sharing ratios
/// (pair_over_alone, switch_s), non-finite numbers as null. Pure.
std::string harness_record(const harness_samples& s);

}  // namespace mmgp::calib::gpu
