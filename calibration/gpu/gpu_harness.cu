// mmgp-gpu-harness: the GPU node's calibration measurements, one JSON document on standard output. Run by
// `mmgp calibrate --accelerator cuda[:DEVICE]` (calibration/gpu_describe.cpp turns the record into platform keys)
// and by the `gpu` test suite. A separate executable so that neither mmgp nor libmmgp links the CUDA runtime or
// libcuda: this one links the CUDA runtime statically, which opens the driver at run time.
//
//   mmgp-gpu-harness [--device N] [--quick] [--mps auto|off|on] [--check]
//
// Exit 0: measured. Exit 77: no usable GPU (no device, no driver, or a driver too old: CUDA error 35), the reason on
// standard error. Exit 1: a measurement failed. --check only says whether a GPU is usable (0 or 77).
//
// Measures (docs/GPU.md): the off-load round trip (launch + synchronise of an empty one-block kernel, and its
// enqueue alone); the cost of one off-load against its grid size p; the round trip to a persistent kernel spinning
// on mapped host memory (the Cell mailbox's analogue); pinned host↔device copies (CUDA events); the work rate of
// a compute-bound kernel against its number of blocks (how many blocks an SM holds before they slow each other);
// and the sharing between processes: two processes off-loading short kernels at once against one alone, without
// MPS and, where the MPS control daemon can be started (root, nvidia-cuda-mps-control), with it. The sharing
// children are forked before this process initialises CUDA.
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "forked.hpp"  // run/: the children, forked before CUDA is initialised here

namespace {

using clock_type = std::chrono::steady_clock;

double now_s() { return std::chrono::duration<double>(clock_type::now().time_since_epoch()).count(); }

[[noreturn]] void fail(const char* what, cudaError_t e) {
    std::fprintf(stderr, "mmgp-gpu-harness: %s: %s (CUDA error %d)\n", what, cudaGetErrorString(e), static_cast<int>(e));
    std::exit(1);
}

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) fail(what, e);
}

double median(std::vector<double> v) {
    if (v.empty()) return NAN;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double minimum(const std::vector<double>& v) { return v.empty() ? NAN : *std::min_element(v.begin(), v.end()); }

std::string num(double x) {
    if (!std::isfinite(x)) return "null";
    char b[64];
    std::snprintf(b, sizeof b, "%.9g", x);
    return b;
}

// ---- kernels ------------------------------------------------------------------------------------------------

__global__ void empty_kernel() {}

// Spins for `cycles` SM clock cycles (thread 0 of each block; the other threads leave at once).
__global__ void spin_kernel(long long cycles) {
    if (threadIdx.x != 0) return;
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

// Answers round i by writing i to *reply once *flag reaches i; ends after `rounds` rounds.
__global__ void mailbox_kernel(volatile int* flag, volatile int* reply, int rounds) {
    for (int i = 1; i <= rounds; ++i) {
        while (*flag < i) {
        }
        *reply = i;
        __threadfence_system();
    }
}

// Compute-bound work: each thread iterates a dependent multiply-add chain.
__global__ void work_kernel(float* out, int iterations) {
    float a = 1.0f + 1e-7f * threadIdx.x, b = 0.999999f;
    for (int i = 0; i < iterations; ++i) a = a * b + 1e-7f;
    if (a == 12345.0f) out[blockIdx.x] = a;  // never true: keeps the chain alive
}

// ---- the device ---------------------------------------------------------------------------------------------

// 0 when device `dev` is usable, else 77 with the reason on standard error.
int usable(int dev) {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        std::fprintf(stderr, "mmgp-gpu-harness: no usable GPU: %s (CUDA error %d)\n", cudaGetErrorString(e),
                     static_cast<int>(e));
        return 77;
    }
    if (dev < 0 || dev >= count) {
        std::fprintf(stderr, "mmgp-gpu-harness: no usable GPU: device %d requested, %d present\n", dev, count);
        return 77;
    }
    return 0;
}

struct options {
    int device = 0;
    bool quick = false, check_only = false;
    std::string mps = "auto";
};

// ---- the off-load round trip and its grid size ---------------------------------------------------------------

struct round_trip {
    std::vector<double> sync, enqueue;
};

round_trip launch_round_trips(int blocks, int reps) {
    round_trip r;
    for (int i = 0; i < 50; ++i) empty_kernel<<<blocks, 32>>>();
    check(cudaDeviceSynchronize(), "warm-up");
    for (int i = 0; i < reps; ++i) {
        const double t0 = now_s();
        empty_kernel<<<blocks, 32>>>();
        const double t1 = now_s();
        check(cudaStreamSynchronize(0), "launch + synchronise");
        const double t2 = now_s();
        r.enqueue.push_back(t1 - t0);
        r.sync.push_back(t2 - t0);
    }
    return r;
}

std::string offload_json(int sms, int reps) {
    const round_trip one = launch_round_trips(1, reps);
    std::string grid = "[";
    for (int p = 1; p <= 2 * sms; p = p < sms && 2 * p > sms ? sms : 2 * p) {
        const round_trip g = launch_round_trips(p, reps / 4 + 1);
        grid += (grid.size() > 1 ? ", " : "") + std::string("[") + std::to_string(p) + ", " + num(median(g.sync)) + "]";
    }
    grid += "]";
    return "{\"launch_sync_s\": {\"median\": " + num(median(one.sync)) + ", \"min\": " + num(minimum(one.sync)) +
           ", \"repetitions\": " + std::to_string(reps) + "}, \"enqueue_s\": {\"median\": " + num(median(one.enqueue)) +
           ", \"min\": " + num(minimum(one.enqueue)) + "}, \"by_blocks\": " + grid + "}";
}

// ---- the mailbox: a persistent kernel on mapped host memory -------------------------------------------------

std::string mailbox_json(int rounds) {
    int* host = nullptr;
    check(cudaHostAlloc(&host, 2 * sizeof(int), cudaHostAllocMapped), "mapped host memory");
    volatile int* flag = host;
    volatile int* reply = host + 1;
    *flag = 0, *reply = 0;
    int* dev = nullptr;
    check(cudaHostGetDevicePointer(&dev, host, 0), "device pointer of mapped memory");
    cudaStream_t s;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream");
    mailbox_kernel<<<1, 1, 0, s>>>(dev, dev + 1, rounds);
    check(cudaGetLastError(), "persistent kernel launch");
    std::vector<double> t;
    t.reserve(static_cast<std::size_t>(rounds));
    bool timed_out = false;
    for (int i = 1; i <= rounds && !timed_out; ++i) {
        const double t0 = now_s();
        __sync_synchronize();
        *flag = i;
        __sync_synchronize();
        while (*reply < i)
            if (now_s() - t0 > 5.0) {  // the kernel never answered (mapped memory not coherent here)
                timed_out = true;
                break;
            }
        if (!timed_out) t.push_back(now_s() - t0);
    }
    if (timed_out) *flag = rounds;  // let the kernel finish its rounds
    check(cudaStreamSynchronize(s), "persistent kernel");
    check(cudaStreamDestroy(s), "stream");
    check(cudaFreeHost(host), "free mapped memory");
    if (timed_out) return "{\"answered\": false}";
    std::vector<double> warm(t.begin() + std::min<std::size_t>(t.size(), 20), t.end());
    return "{\"answered\": true, \"round_trip_s\": {\"median\": " + num(median(warm)) + ", \"min\": " + num(minimum(warm)) +
           ", \"repetitions\": " + std::to_string(warm.size()) + "}}";
}

// ---- pinned copies --------------------------------------------------------------------------------------------

// Median event time of `reps` copies of `bytes` in direction `kind`.
double copy_time(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, int reps) {
    cudaEvent_t a, b;
    check(cudaEventCreate(&a), "event");
    check(cudaEventCreate(&b), "event");
    std::vector<double> t;
    for (int i = 0; i < reps + 2; ++i) {
        check(cudaEventRecord(a), "event record");
        check(cudaMemcpyAsync(dst, src, bytes, kind), "copy");
        check(cudaEventRecord(b), "event record");
        check(cudaEventSynchronize(b), "copy");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, a, b), "event time");
        if (i >= 2) t.push_back(1e-3 * ms);
    }
    cudaEventDestroy(a), cudaEventDestroy(b);
    return median(t);
}

std::string copies_json(bool quick) {
    const std::size_t largest = quick ? (std::size_t{64} << 20) : (std::size_t{256} << 20);
    void* host = nullptr;
    void* dev = nullptr;
    check(cudaMallocHost(&host, largest), "pinned host memory");
    check(cudaMalloc(&dev, largest), "device memory");
    std::memset(host, 1, largest);
    std::string out = "{";
    const char* names[] = {"host_to_device", "device_to_host"};
    for (int d = 0; d < 2; ++d) {
        std::string pts = "[";
        for (std::size_t bytes = 8; bytes <= largest; bytes *= (bytes < (std::size_t{1} << 20) ? 16 : 4)) {
            const int reps = bytes >= (std::size_t{16} << 20) ? 5 : 30;
            const double t = d == 0 ? copy_time(dev, host, bytes, cudaMemcpyHostToDevice, reps)
                                    : copy_time(host, dev, bytes, cudaMemcpyDeviceToHost, reps);
            pts += (pts.size() > 1 ? ", [" : "[") + std::to_string(bytes) + ", " + num(t) + "]";
        }
        out += std::string(d ? ", " : "") + "\"" + names[d] + "\": " + pts + "]";
    }
    cudaFree(dev), cudaFreeHost(host);
    return out + "}";
}

// ---- blocks per SM --------------------------------------------------------------------------------------------

std::string blocks_json(int sms, bool quick) {
    float* out = nullptr;
    check(cudaMalloc(&out, sizeof(float) * 64 * static_cast<std::size_t>(sms)), "device memory");
    const int iterations = quick ? 200000 : 1000000;
    std::string pts = "[";
    cudaEvent_t a, b;
    check(cudaEventCreate(&a), "event");
    check(cudaEventCreate(&b), "event");
    for (int mult : {0, 1, 2, 3, 4, 6, 8, 16}) {
        const int blocks = mult == 0 ? 1 : mult * sms;
        std::vector<double> t;
        for (int r = 0; r < 3; ++r) {
            check(cudaEventRecord(a), "event record");
            work_kernel<<<blocks, 256>>>(out, iterations);
            check(cudaEventRecord(b), "event record");
            check(cudaEventSynchronize(b), "work kernel");
            float ms = 0;
            check(cudaEventElapsedTime(&ms, a, b), "event time");
            t.push_back(1e-3 * ms);
        }
        pts += (pts.size() > 1 ? ", [" : "[") + std::to_string(blocks) + ", " + num(median(t)) + "]";
    }
    cudaEventDestroy(a), cudaEventDestroy(b);
    cudaFree(out);
    // The blocks of this kernel an SM holds at once (its occupancy at 256 threads): the platform's apu_slots.
    int resident = 0;
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, work_kernel, 256, 0), "occupancy");
    return "{\"threads_per_block\": 256, \"iterations\": " + std::to_string(iterations) +
           ", \"resident_per_sm\": " + std::to_string(resident) + ", \"by_blocks\": " + pts + "]}";
}

// ---- sharing between processes ---------------------------------------------------------------------------------

// One child's work: initialise CUDA, time one spin kernel alone (events), say "ready", wait for "go", then run
// `kernels` off-loads (launch + synchronise) and report the wall time. Runs in a forked child that has not touched
// CUDA before.
[[noreturn]] void sharing_child(int device, int kernels, long long cycles, int ready_fd, int go_fd) {
    char line[256];
    if (cudaSetDevice(device) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) {
        const int n = std::snprintf(line, sizeof line, "error\n");
        (void)!write(ready_fd, line, static_cast<std::size_t>(n));
        _exit(1);
    }
    cudaEvent_t a, b;
    cudaEventCreate(&a), cudaEventCreate(&b);
    spin_kernel<<<1, 32>>>(cycles);  // warm-up
    cudaDeviceSynchronize();
    cudaEventRecord(a);
    spin_kernel<<<1, 32>>>(cycles);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    int n = std::snprintf(line, sizeof line, "ready %.9g\n", 1e-3 * ms);
    (void)!write(ready_fd, line, static_cast<std::size_t>(n));
    char go = 0;
    (void)!read(go_fd, &go, 1);
    const double t0 = now_s();
    for (int i = 0; i < kernels; ++i) {
        spin_kernel<<<1, 32>>>(cycles);
        cudaStreamSynchronize(0);
    }
    const double wall = now_s() - t0;
    n = std::snprintf(line, sizeof line, "done %.9g\n", wall);
    (void)!write(ready_fd, line, static_cast<std::size_t>(n));
    _exit(cudaGetLastError() == cudaSuccess ? 0 : 1);
}

struct sharing_run {
    bool ok = false;
    double kernel_s = NAN;  // one kernel's device time, alone (events)
    double wall_s = NAN;    // from "go" until every child is done
};

// `procs` children at once, each `kernels` off-loads of a `cycles`-cycle kernel.
sharing_run run_children(int device, int procs, int kernels, long long cycles) {
    sharing_run out;
    std::vector<mmgp::run::forked> children;
    bool ok = true;
    for (int i = 0; i < procs && ok; ++i) {
        children.push_back(mmgp::run::fork_with_pipes([&](int to_parent, int from_parent) {
            sharing_child(device, kernels, cycles, to_parent, from_parent);
            return 1;
        }));
        ok = children.back().pid > 0;
    }
    auto read_line = [](int fd) {
        std::string s;
        char c;
        while (read(fd, &c, 1) == 1 && c != '\n') s += c;
        return s;
    };
    for (const mmgp::run::forked& c : children) {
        const std::string l = ok ? read_line(c.from_child) : std::string();
        if (l.rfind("ready ", 0) != 0) ok = false;
        else out.kernel_s = std::isnan(out.kernel_s) ? std::atof(l.c_str() + 6) : std::min(out.kernel_s, std::atof(l.c_str() + 6));
    }
    const double t0 = now_s();
    if (ok)
        for (const mmgp::run::forked& c : children) (void)!write(c.to_child, "g", 1);
    for (const mmgp::run::forked& c : children)
        if (!ok || read_line(c.from_child).rfind("done ", 0) != 0) ok = false;
    out.wall_s = now_s() - t0;
    for (mmgp::run::forked& c : children) ok = mmgp::run::wait_forked(c) == 0 && ok;
    out.ok = ok;
    return out;
}

// One sharing measurement: one process alone, then two at once; the switch cost per off-load when serialised.
std::string sharing_json(int device, bool quick) {
    const int kernels = quick ? 200 : 1000;
    const long long cycles = 100000;  // ~50-70 µs at 1.5-2 GHz: longer than a launch, shorter than a time slice
    const sharing_run one = run_children(device, 1, kernels, cycles);
    const sharing_run two = run_children(device, 2, kernels, cycles);
    if (!one.ok || !two.ok) return "{\"measured\": false}";
    // Serialised, the GPU runs 2·kernels kernels one after the other with a switch before each: wall2 =
    // 2·kernels·(kernel + switch). Concurrent: wall2 ≈ wall1.
    const double overlap = two.wall_s / one.wall_s;
    const double sw = two.wall_s / (2.0 * kernels) - one.kernel_s;
    return "{\"measured\": true, \"kernels\": " + std::to_string(kernels) + ", \"kernel_s\": " + num(one.kernel_s) +
           ", \"alone_wall_s\": " + num(one.wall_s) + ", \"pair_wall_s\": " + num(two.wall_s) +
           ", \"pair_over_alone\": " + num(overlap) + ", \"switch_s\": " + num(sw) + "}";
}

bool mps_control(const char* what) {
    const std::string cmd = std::string("nvidia-cuda-mps-control ") + what + " >/dev/null 2>&1";
    return mmgp::run::shell_status(cmd) == 0;
}

// Without MPS and, when asked or possible (root and the control program), with the daemon started for the
// measurement and stopped after it. Runs before this process initialises CUDA.
std::string sharing_section(const options& o) {
    std::string out = "{\"time_sliced\": " + (o.mps == "on" ? std::string("null") : sharing_json(o.device, o.quick));
    const bool can = geteuid() == 0 && mmgp::run::shell_status("command -v nvidia-cuda-mps-control >/dev/null 2>&1") == 0;
    if (o.mps == "off" || (o.mps == "auto" && !can)) return out + ", \"mps\": null, \"mps_note\": \"" +
                                                        (o.mps == "off" ? "not asked" : "the MPS daemon cannot be started here (needs root and nvidia-cuda-mps-control)") + "\"}";
    if (!mps_control("-d")) return out + ", \"mps\": null, \"mps_note\": \"nvidia-cuda-mps-control -d failed\"}";
    sleep(1);
    out += ", \"mps\": " + sharing_json(o.device, o.quick);
    mmgp::run::shell_status("echo quit | nvidia-cuda-mps-control >/dev/null 2>&1");
    sleep(1);
    return out + "}";
}

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--quick") o.quick = true;
        else if (a == "--check") o.check_only = true;
        else if (a == "--device" && i + 1 < argc) o.device = std::atoi(argv[++i]);
        else if (a == "--mps" && i + 1 < argc && (std::string(argv[i + 1]) == "auto" || std::string(argv[i + 1]) == "off" ||
                                                  std::string(argv[i + 1]) == "on"))
            o.mps = argv[++i];
        else {
            std::fprintf(stderr, "mmgp-gpu-harness: unknown argument \"%s\" (expected --device N, --quick, --mps auto|off|on, --check)\n",
                         a.c_str());
            std::exit(2);
        }
    }
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    // The sharing children must be forked before this process touches CUDA; the device check then runs in them.
    // So: check in a child first (it exits), then measure the sharing, then everything else here.
    {
        mmgp::run::forked check = mmgp::run::fork_with_pipes([&](int, int) { return usable(o.device); });
        const int code = mmgp::run::wait_forked(check);
        if (code != 0 || o.check_only) return code < 0 || code > 127 ? 1 : code;
    }
    const std::string sharing = sharing_section(o);
    check(cudaSetDevice(o.device), "select device");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, o.device), "device properties");
    int driver = 0, runtime = 0, compute_mode = 0;
    cudaDriverGetVersion(&driver), cudaRuntimeGetVersion(&runtime);
    cudaDeviceGetAttribute(&compute_mode, cudaDevAttrComputeMode, o.device);
    const int sms = prop.multiProcessorCount;
    const int reps = o.quick ? 300 : 2000;
    std::string out = "{\"harness\": \"mmgp-gpu-harness\", \"device\": {\"index\": " + std::to_string(o.device) +
                      ", \"name\": \"" + prop.name + "\", \"sms\": " + std::to_string(sms) +
                      ", \"compute_capability\": \"" + std::to_string(prop.major) + "." + std::to_string(prop.minor) +
                      "\", \"memory_bytes\": " + std::to_string(prop.totalGlobalMem) +
                      ", \"max_blocks_per_sm\": " + std::to_string(prop.maxBlocksPerMultiProcessor) +
                      ", \"max_threads_per_sm\": " + std::to_string(prop.maxThreadsPerMultiProcessor) +
                      ", \"driver_version\": " + std::to_string(driver) + ", \"runtime_version\": " + std::to_string(runtime) +
                      ", \"compute_mode\": " + std::to_string(compute_mode) + "}";
    out += ", \"quick\": " + std::string(o.quick ? "true" : "false");
    out += ", \"offload\": " + offload_json(sms, reps);
    out += ", \"mailbox\": " + mailbox_json(reps);
    out += ", \"copies\": " + copies_json(o.quick);
    out += ", \"blocks\": " + blocks_json(sms, o.quick);
    out += ", \"sharing\": " + sharing + "}";
    std::printf("%s\n", out.c_str());
    return 0;
}
