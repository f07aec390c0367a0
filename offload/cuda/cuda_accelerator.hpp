// The GPU behind the off-load runtime's processes (kernels::run_processes): each process opens its own context on
// device 0 (CUDA_VISIBLE_DEVICES chooses it) after it is forked, holds the alignment's sites there (device_slice)
// and runs every off-load as a grid of p blocks. Built with nvcc into mmgp-offload-run only (MMGP_WITH_CUDA);
// mmgp and libmmgp never link it. Called by offload_run_main.cpp (--accelerator cuda).
#pragma once

#include <string>

#include "runtime.hpp"

namespace mmgp::offload {

/// What a forked child found of CUDA (so that this process stays without a context): usable devices, device 0's
/// multiprocessors, and why none is usable.
struct cuda_facts {
    int devices = 0, sms = 0;
    std::string why;
};
cuda_facts probe_cuda();

/// The accelerator each process makes after the fork. Under MPS (MMGP_SHARING=mps, as mmgp launch sets it) a
/// process without CUDA_MPS_ACTIVE_THREAD_PERCENTAGE gets ⌈100·p / SMs⌉, as mmgp launch would give it; every
/// process loads its kernels when its context opens (CUDA_MODULE_LOADING=EAGER unless set), before the start.
/// `wait`: how a process's host thread waits for its grids, as its HPU does for its APUs: edtlp blocks in the driver
/// (its core yielded), os spins. `timed`: every call's kernels timed by CUDA events, and one empty grid's round trip
/// measured before the start (the profile's runs; events cost the host time, so runs to be compared are untimed).
kernels::process_accelerator cuda_accelerator(const cuda_facts& facts, kernels::host_policy wait, bool timed = false);

}  // namespace mmgp::offload
