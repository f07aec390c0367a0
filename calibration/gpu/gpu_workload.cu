// mmgp-gpu-workload: a multi-grain program on a GPU node whose structure is known, for validating the GPU model
// with nothing fitted (scripts/gpu-check.sh): m host processes, each running its share of U task units; a unit is
// N off-loads, each a host phase (a spin of H µs) then one kernel of p blocks sharing K µs of one-block work (each
// block spins K/p µs; p at most the SMs) and a synchronise.
//
//   mmgp-gpu-workload --m M --p P [--units U] [--offloads N] [--host-us H] [--kernel-us K] [--device D]
//   mmgp-gpu-workload --profile [--units U] [--offloads N] [--host-us H] [--kernel-us K] [--device D]
//
// The run prints "time_s T" (from the processes' common start to the last one's end). --profile runs one process
// with p = 1 and prints the application profile of the program as measured (mmgp/1): T_hpu (the host phases),
// T_apu (the kernels' device time at p = 1, CUDA events), the off-load round trip of the run beside it, N, units.
// The processes are forked before CUDA is initialised; under MPS (the daemon running) each sets
// CUDA_MPS_ACTIVE_THREAD_PERCENTAGE from p when MMGP_SHARING=mps (as mmgp launch sets it). Exit 77: no usable GPU.
#include <cuda_runtime.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct options {
    int m = 1, p = 1, units = 16, offloads = 100, device = 0;
    double host_us = 200, kernel_us = 2000;
    bool profile = false;
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

void host_spin(double us) {
    const double end = now_s() + us * 1e-6;
    while (now_s() < end) {
    }
}

// The device's SMs and SM clock (kHz), asked in a child so that this process stays without CUDA; 0 SMs: unusable.
void device_facts(int device, int& sms, int& khz) {
    int fds[2];
    if (pipe(fds) != 0) std::exit(1);
    const pid_t pid = fork();
    if (pid == 0) {
        int v[2] = {0, 0};
        if (cudaDeviceGetAttribute(&v[0], cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
            cudaDeviceGetAttribute(&v[1], cudaDevAttrClockRate, device) != cudaSuccess) {
            std::fprintf(stderr, "mmgp-gpu-workload: no usable GPU: %s\n", cudaGetErrorString(cudaGetLastError()));
            v[0] = 0;
        }
        (void)!write(fds[1], v, sizeof v);
        _exit(0);
    }
    int v[2] = {0, 0};
    close(fds[1]);
    (void)!read(fds[0], v, sizeof v);
    close(fds[0]);
    waitpid(pid, nullptr, 0);
    sms = v[0], khz = v[1];
}

struct unit_times {
    double host_s = 0, kernel_s = 0, offload_s = 0;  // per run of this process: host phases, kernels (events), wall of off-loads
};

// One process's units. Writes its times to `fd` after the start signal on `go`.
[[noreturn]] void process(const options& o, int rank, int sms, int khz, int ready_fd, int go_fd) {
    if (const char* sh = std::getenv("MMGP_SHARING"); sh && std::string(sh) == "mps") {
        const int pct = std::clamp((100 * o.p + sms - 1) / sms, 1, 100);
        setenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", std::to_string(pct).c_str(), 1);
    }
    if (cudaSetDevice(o.device) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) _exit(1);
    const int units = o.units / o.m + (rank < o.units % o.m ? 1 : 0);
    const long long cycles = static_cast<long long>(o.kernel_us / o.p * 1e-3 * khz);
    cudaEvent_t a, b;
    cudaEventCreate(&a), cudaEventCreate(&b);
    share_kernel<<<o.p, 32>>>(1000);  // warm-up
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
            share_kernel<<<o.p, 32>>>(cycles);
            cudaEventRecord(b);
            cudaEventSynchronize(b);
            const double h2 = now_s();
            float ms = 0;
            cudaEventElapsedTime(&ms, a, b);
            t.host_s += h1 - h0, t.kernel_s += 1e-3 * ms, t.offload_s += h2 - h1;
        }
    (void)!write(ready_fd, &t, sizeof t);
    _exit(cudaGetLastError() == cudaSuccess ? 0 : 1);
}

}  // namespace

int main(int argc, char** argv) {
    options o = parse(argc, argv);
    if (o.profile) o.m = 1, o.p = 1;
    int sms = 0, khz = 0;
    device_facts(o.device, sms, khz);
    if (sms == 0) return 77;
    if (o.p > sms) {
        std::fprintf(stderr, "mmgp-gpu-workload: --p %d: expected at most the device's %d SMs\n", o.p, sms);
        return 2;
    }
    std::vector<pid_t> pids;
    std::vector<int> ready, go;
    for (int r = 0; r < o.m; ++r) {
        int rf[2], gf[2];
        if (pipe(rf) != 0 || pipe(gf) != 0) return 1;
        const pid_t pid = fork();
        if (pid == 0) {
            close(rf[0]), close(gf[1]);
            process(o, r, sms, khz, rf[1], gf[0]);
        }
        close(rf[1]), close(gf[0]);
        pids.push_back(pid), ready.push_back(rf[0]), go.push_back(gf[1]);
    }
    char c = 0;
    for (int fd : ready) (void)!read(fd, &c, 1);
    const double t0 = now_s();
    for (int fd : go) (void)!write(fd, "g", 1);
    unit_times total;
    bool ok = true;
    for (int fd : ready) {
        unit_times t;
        if (read(fd, &t, sizeof t) != static_cast<ssize_t>(sizeof t)) ok = false;
        total.host_s += t.host_s, total.kernel_s += t.kernel_s, total.offload_s += t.offload_s;
    }
    const double wall = now_s() - t0;
    for (pid_t pid : pids) {
        int st = 0;
        waitpid(pid, &st, 0);
        ok = ok && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    if (!ok) {
        std::fprintf(stderr, "mmgp-gpu-workload: a process failed\n");
        return 1;
    }
    if (!o.profile) {
        std::printf("time_s %.9g\n", wall);
        return 0;
    }
    // The sequential run as an application profile: per unit, the host phases and the kernels' device time; the
    // off-load round trip beyond the kernel is the platform's O_offload (calibrated), not the program's.
    const double per_unit_host = total.host_s / o.units, per_unit_kernel = total.kernel_s / o.units;
    std::printf("{\"schema\": \"mmgp/1\", \"kind\": \"application\", \"name\": \"gpu-workload\",\n"
                " \"description\": \"mmgp-gpu-workload: %d units of %d off-loads, host %.6g us and kernel %.6g us each\",\n"
                " \"decomposition\": \"task\", \"units\": %d, \"N\": %d,\n"
                " \"T_hpu\": {\"value\": %.9g, \"source\": \"mmgp-gpu-workload --profile: host phases per unit, measured\"},\n"
                " \"T_apu\": {\"value\": %.9g, \"source\": \"mmgp-gpu-workload --profile: kernels per unit at p = 1, CUDA events\"},\n"
                " \"C_apu\": 0, \"g\": 0,\n"
                " \"measurements\": {\"wall_s\": %.9g, \"offload_wall_s_per_unit\": %.9g}}\n",
                o.units, o.offloads, o.host_us, o.kernel_us, o.units, o.offloads, per_unit_host, per_unit_kernel, wall,
                total.offload_s / o.units);
    return 0;
}
