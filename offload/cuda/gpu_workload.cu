// mmgp-gpu-workload: a multi-grain program on a GPU node whose structure is known, for validating the GPU model
// with nothing fitted (scripts/gpu-check.sh): m host processes, each running its share of U task units; a unit is
// N off-loads, each a host phase (a spin of H µs) then one kernel of p blocks sharing K µs of one-block work and a
// synchronise. The default kernel is a one-thread clock64 spin in 32-thread blocks (each block spins K/p µs; p at
// most the SMs); --compute makes it 256-thread blocks of FMA chains, as real kernels fill an SM, whose grid may
// exceed the SMs (each block K/p µs of one block's work alone; blocks resident together share the SM).
//
//   mmgp-gpu-workload --m M --p P [--compute] [--units U] [--offloads N] [--host-us H] [--kernel-us K] [--device D]
//   mmgp-gpu-workload --profile [--compute] [--units U] [--offloads N] [--host-us H] [--kernel-us K] [--device D]
//
// The run prints "time_s T" (from the processes' common start to the last one's end). --profile runs one process
// with p = 1 and prints the application profile of the program as measured (mmgp/1): T_hpu (the host phases),
// T_apu (the kernels' device time at p = 1, CUDA events), the off-load round trip of the run beside it, N, units;
// with --compute also the kernel's slot_time, measured at p = SMs, 2·SMs and 4·SMs (every block the same work).
// The processes are forked before CUDA is initialised; under MPS (the daemon running) each sets
// CUDA_MPS_ACTIVE_THREAD_PERCENTAGE from p when MMGP_SHARING=mps (as mmgp launch sets it). Exit 77: no usable GPU.
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "forked.hpp"  // run/: the processes, forked before CUDA is initialised here
#include "workload_profile.hpp"  // --profile's document, written by a host unit (workload_profile.cpp)

namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct options {
    int m = 1, p = 1, units = 16, offloads = 100, device = 0;
    double host_us = 200, kernel_us = 2000;
    bool profile = false, compute = false;
};

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> const char* {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "mmgp-gpu-workload: %s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--m") o.m = std::atoi(next());
        else if (a == "--p") o.p = std::atoi(next());
        else if (a == "--units") o.units = std::atoi(next());
        else if (a == "--offloads") o.offloads = std::atoi(next());
        else if (a == "--host-us") o.host_us = std::atof(next());
        else if (a == "--kernel-us") o.kernel_us = std::atof(next());
        else if (a == "--device") o.device = std::atoi(next());
        else if (a == "--profile") o.profile = true;
        else if (a == "--compute") o.compute = true;
        else {
            std::fprintf(stderr, "mmgp-gpu-workload: unknown argument \"%s\"\n", a.c_str());
            std::exit(2);
        }
    }
    if (o.m < 1 || o.p < 1 || o.units < 1 || o.offloads < 1 || !(o.host_us >= 0) || !(o.kernel_us > 0)) {
        std::fprintf(stderr, "mmgp-gpu-workload: expected m, p, units, offloads >= 1, host-us >= 0, kernel-us > 0\n");
        std::exit(2);
    }
    return o;
}

__global__ void share_kernel(long long cycles) {
    if (threadIdx.x != 0) return;
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

// --compute: a 256-thread block of FMA chains, `iterations` each (the GPU harness's reference kernel).
__global__ void fma_kernel(float* out, long long iterations) {
    float a = 1.0f + 1e-7f * threadIdx.x, b = 0.999999f;
    for (long long i = 0; i < iterations; ++i) a = a * b + 1e-7f;
    if (a == 12345.0f) out[blockIdx.x] = a;  // never true: keeps the chain alive
}

// Device time (s) of one fma_kernel grid, CUDA events.
double fma_time(int blocks, long long iterations, float* out) {
    cudaEvent_t a, b;
    cudaEventCreate(&a), cudaEventCreate(&b);
    cudaEventRecord(a);
    fma_kernel<<<blocks, 256>>>(out, iterations);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    cudaEventDestroy(a), cudaEventDestroy(b);
    return 1e-3 * ms;
}

void host_spin(double us) {
    const double end = now_s() + us * 1e-6;
    while (now_s() < end) {
    }
}

// The device's SMs, SM clock (kHz) and one 256-thread block's FMA iterations per µs alone (--compute), asked in a
// child so that this process stays without CUDA; 0 SMs: unusable.
void device_facts(int device, int& sms, int& khz, double& iters_per_us) {
    mmgp::run::forked child = mmgp::run::fork_with_pipes([&](int to_parent, int) {
        double v[3] = {0, 0, 0};
        int n = 0, clock = 0;
        float* out = nullptr;
        if (cudaSetDevice(device) != cudaSuccess ||
            cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
            cudaDeviceGetAttribute(&clock, cudaDevAttrClockRate, device) != cudaSuccess ||
            cudaMalloc(&out, sizeof(float)) != cudaSuccess) {
            std::fprintf(stderr, "mmgp-gpu-workload: no usable GPU: %s\n", cudaGetErrorString(cudaGetLastError()));
            n = 0;
        } else {
            const long long probe = 200000;
            fma_time(1, probe, out);  // warm-up
            double best = fma_time(1, probe, out);
            for (int r = 0; r < 2; ++r) best = std::min(best, fma_time(1, probe, out));
            v[2] = best > 0 ? probe / (1e6 * best) : 0;
        }
        v[0] = n, v[1] = clock;
        (void)!write(to_parent, v, sizeof v);
        return 0;
    });
    if (child.pid < 0) std::exit(1);
    double v[3] = {0, 0, 0};
    (void)!read(child.from_child, v, sizeof v);
    mmgp::run::wait_forked(child);
    sms = static_cast<int>(v[0]), khz = static_cast<int>(v[1]), iters_per_us = v[2];
}

struct unit_times {
    double host_s = 0, kernel_s = 0, offload_s = 0;  // per run of this process: host phases, kernels (events), wall of off-loads
    double slot[3] = {0, 0, 0};  // --profile --compute: one grid at 1, 2, 4 blocks per SM (events)
};

// One process's units. Writes its times to `fd` after the start signal on `go`.
[[noreturn]] void process(const options& o, int rank, int sms, int khz, double iters_per_us, int ready_fd, int go_fd) {
    if (const char* sh = std::getenv("MMGP_SHARING"); sh && std::string(sh) == "mps") {
        const int pct = std::clamp((100 * o.p + sms - 1) / sms, 1, 100);
        setenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", std::to_string(pct).c_str(), 1);
    }
    if (cudaSetDevice(o.device) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) _exit(1);
    const int units = o.units / o.m + (rank < o.units % o.m ? 1 : 0);
    const long long cycles = static_cast<long long>(o.kernel_us / o.p * 1e-3 * khz);
    const long long iterations = std::max(1LL, static_cast<long long>(o.kernel_us / o.p * iters_per_us));
    float* out = nullptr;
    if (o.compute && cudaMalloc(&out, sizeof(float) * static_cast<std::size_t>(o.p)) != cudaSuccess) _exit(1);
    cudaEvent_t a, b;
    cudaEventCreate(&a), cudaEventCreate(&b);
    if (o.compute) fma_kernel<<<o.p, 256>>>(out, 1000);  // warm-up
    else share_kernel<<<o.p, 32>>>(1000);
    cudaDeviceSynchronize();
    char c = 'r';
    (void)!write(ready_fd, &c, 1);
    (void)!read(go_fd, &c, 1);
    unit_times t;
    for (int u = 0; u < units; ++u)
        for (int k = 0; k < o.offloads; ++k) {
            const double h0 = now_s();
            host_spin(o.host_us);
            const double h1 = now_s();
            cudaEventRecord(a);
            if (o.compute) fma_kernel<<<o.p, 256>>>(out, iterations);
            else share_kernel<<<o.p, 32>>>(cycles);
            cudaEventRecord(b);
            cudaEventSynchronize(b);
            const double h2 = now_s();
            float ms = 0;
            cudaEventElapsedTime(&ms, a, b);
            t.host_s += h1 - h0, t.kernel_s += 1e-3 * ms, t.offload_s += h2 - h1;
        }
    if (o.profile && o.compute) {  // the kernel's slot_time: k·SMs blocks of the same work against SMs blocks
        const long long per_block = std::max(1LL, static_cast<long long>(500 * iters_per_us));  // ~0.5 ms alone
        cudaFree(out);
        if (cudaMalloc(&out, sizeof(float) * 4 * static_cast<std::size_t>(sms)) != cudaSuccess) _exit(1);
        for (int k : {1, 2, 4}) {
            double best = fma_time(k * sms, per_block, out);
            for (int r = 0; r < 2; ++r) best = std::min(best, fma_time(k * sms, per_block, out));
            t.slot[k == 1 ? 0 : k == 2 ? 1 : 2] = best;
        }
    }
    (void)!write(ready_fd, &t, sizeof t);
    _exit(cudaGetLastError() == cudaSuccess ? 0 : 1);
}

}  // namespace

int main(int argc, char** argv) {
    options o = parse(argc, argv);
    if (o.profile) o.m = 1, o.p = 1;
    int sms = 0, khz = 0;
    double iters_per_us = 0;
    device_facts(o.device, sms, khz, iters_per_us);
    if (sms == 0) return 77;
    if (o.p > sms * (o.compute ? 32 : 1)) {
        std::fprintf(stderr, "mmgp-gpu-workload: --p %d: expected at most %d (the device's %d SMs%s)\n", o.p,
                     sms * (o.compute ? 32 : 1), sms, o.compute ? " x 32 blocks" : "");
        return 2;
    }
    if (o.compute && !(iters_per_us > 0)) {
        std::fprintf(stderr, "mmgp-gpu-workload: --compute: the FMA kernel's rate could not be measured\n");
        return 1;
    }
    std::vector<mmgp::run::forked> procs;
    for (int r = 0; r < o.m; ++r) {
        procs.push_back(mmgp::run::fork_with_pipes([&](int to_parent, int from_parent) {
            process(o, r, sms, khz, iters_per_us, to_parent, from_parent);
            return 1;
        }));
        if (procs.back().pid < 0) return 1;
    }
    char c = 0;
    for (const mmgp::run::forked& pr : procs) (void)!read(pr.from_child, &c, 1);
    const double t0 = now_s();
    for (const mmgp::run::forked& pr : procs) (void)!write(pr.to_child, "g", 1);
    unit_times total;
    bool ok = true;
    for (const mmgp::run::forked& pr : procs) {
        unit_times t;
        if (read(pr.from_child, &t, sizeof t) != static_cast<ssize_t>(sizeof t)) ok = false;
        total.host_s += t.host_s, total.kernel_s += t.kernel_s, total.offload_s += t.offload_s;
        for (int k = 0; k < 3; ++k) total.slot[k] += t.slot[k];
    }
    const double wall = now_s() - t0;
    for (mmgp::run::forked& pr : procs) ok = mmgp::run::wait_forked(pr) == 0 && ok;
    if (!ok) {
        std::fprintf(stderr, "mmgp-gpu-workload: a process failed\n");
        return 1;
    }
    if (!o.profile) {
        std::printf("time_s %.9g\n", wall);
        return 0;
    }
    // The sequential run as an application profile (workload_profile.cpp).
    mmgp::gpu_workload::profile_samples ps;
    ps.units = o.units, ps.offloads = o.offloads, ps.host_us = o.host_us, ps.kernel_us = o.kernel_us;
    ps.host_s = total.host_s, ps.kernel_s = total.kernel_s, ps.offload_s = total.offload_s, ps.wall_s = wall;
    ps.slots_measured = o.compute;
    for (int k = 0; k < 3; ++k) ps.slot_s[k] = total.slot[k];
    std::fputs(mmgp::gpu_workload::profile_document(ps).c_str(), stdout);
    return 0;
}
