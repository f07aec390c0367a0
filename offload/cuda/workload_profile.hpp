// What mmgp-gpu-workload --profile measured (gpu_workload.cu), and the one function that writes it as an
// application profile (workload_profile.cpp, a host C++20 unit linked into the program and tested without a GPU in
// tests/offload/test_workload_profile.cpp): the document goes through the project's JSON writer, not printf.
//
// This header is C++17 and free of nlohmann, so that nvcc compiles it with the .cu file.
#pragma once

#include <string>

namespace mmgp::gpu_workload {

/// The program's structure (its options) and the sequential run's sums over every unit.
struct profile_samples {
    int units = 0, offloads = 0;
    double host_us = 0, kernel_us = 0;  ///< the asked host phase and kernel per off-load
    double host_s = 0;                  ///< the host phases' time, all units
    double kernel_s = 0;                ///< the kernels' device time at p = 1 (CUDA events), all units
    double offload_s = 0;               ///< the off-loads' wall time (launch to synchronised), all units
    double wall_s = 0;                  ///< the run's wall time
    bool slots_measured = false;        ///< --compute: the kernel at SMs, 2·SMs and 4·SMs blocks
    double slot_s[3] = {0, 0, 0};       ///< its device time at 1, 2 and 4 blocks per SM
};

/// The application profile (schema mmgp/1, kind application, one JSON document and a newline): T_hpu and T_apu per
/// unit with their sources, N, units, and with the slots measured the kernel's slot_time. Pure.
std::string profile_document(const profile_samples& s);

}  // namespace mmgp::gpu_workload
