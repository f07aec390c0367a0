// The GPU behind the calibration's accelerator seam (backend.hpp): an APU is the device, signalled either by a
// kernel launch or through a mailbox in mapped host memory that a persistent kernel watches. Made by
// mmgp-gpu-harness (gpu_harness.cu), whose CPU-side harnesses (gpu_backend_section.cpp: run_offload_with,
// run_dma_with) then time it as they time the host threads. Built by nvcc alone (cuda_backend.cu); C++17.
#pragma once

#include <cstddef>
#include <memory>

#include "backend.hpp"

namespace mmgp::calib::gpu {

/// How the host signals the device and how the device answers.
enum class cuda_signal {
    /// Each off-load launches a one-block kernel on the APU's stream that writes payload + 1 to mapped host memory;
    /// wait() synchronises the stream and reads it (the off-load runtime's launch and synchronise).
    launch,
    /// start() launches one persistent one-block kernel per APU that spins on a request line in mapped host memory
    /// and answers on a reply line; signal() and wait() only touch those lines (the Cell mailbox's analogue).
    mailbox,
};

/// The backend on the current CUDA device (cudaSetDevice before). Every APU owns two streams (its off-loads, or its
/// persistent kernel; its copies), `transfer_buffer` bytes of device memory for timed_get() (its copy from host
/// memory, timed by CUDA events on the copy stream) and its request and reply lines. start() throws mmgp::failure
/// when CUDA fails, and in mailbox mode for more APUs than the device can keep resident (its SMs, and at most 128
/// grids at once); in mailbox mode wait() throws when an answer does not come within 5 s (in launch mode it waits
/// for the stream) and stop() when a persistent kernel does not end within 5 s of its stop request.
std::unique_ptr<apu_backend> make_cuda_backend(cuda_signal how, std::size_t transfer_buffer = std::size_t{16} << 20);

}  // namespace mmgp::calib::gpu
