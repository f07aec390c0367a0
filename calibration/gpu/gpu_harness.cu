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
// enqueue alone, and, in a forked child whose host thread blocks while it waits, the same round trip and those of
// kernels that wait 20-500 us on the device, beside this process's spinning ones: the blocked thread's wake-up
// against how long it slept); the cost of one off-load against its grid size p; the round trip to a persistent kernel spinning
// on mapped host memory (the Cell mailbox's analogue); pinned host↔device copies (CUDA events); the work rate of
// a compute-bound kernel against its number of blocks (how many blocks an SM holds before they slow each other);
// and the sharing between processes: two processes off-loading short kernels at once against one alone (and four,
// and eight), without MPS and, where the MPS control daemon can be started (root, nvidia-cuda-mps-control), with it. The sharing
// children are forked before this process initialises CUDA. Last, the round trip (by launch and by the mailbox) and
// the copies again through the calibration's accelerator seam: the CUDA backends (cuda_backend.cu) timed by the
// CPU harnesses' loops (record key backend_harnesses).
#include <cuda_runtime.h>
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "forked.hpp"  // run/: the children, forked before CUDA is initialised here
#include "gpu/cuda_backend.hpp"  // the device behind the calibration's seam (cuda_backend.cu)
#include "gpu/gpu_record.hpp"  // the samples, and the record written from them (a host unit: gpu_record.cpp)

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

namespace rec = mmgp::calib::gpu;

// ---- kernels ------------------------------------------------------------------------------------------------

__global__ void empty_kernel() {}

// Spins for `cycles` SM clock cycles (thread 0 of each block; the other threads leave at once).
__global__ void spin_kernel(long long cycles) {
    if (threadIdx.x != 0) return;
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

// Waits `ns` nanoseconds of the device's global timer (thread 0; the other threads leave at once): a kernel as long
// as an off-load's, whatever the SM clock runs at.
__global__ void wait_kernel(unsigned long long ns) {
    if (threadIdx.x != 0) return;
    unsigned long long t0 = 0, t = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
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

// Launch + synchronise of an empty kernel of `blocks` blocks, or, with `wait_ns`, of one that waits that long.
round_trip launch_round_trips(int blocks, int reps, unsigned long long wait_ns = 0) {
    auto launch = [&] {
        if (wait_ns > 0) wait_kernel<<<blocks, 32>>>(wait_ns);
        else empty_kernel<<<blocks, 32>>>();
    };
    round_trip r;
    for (int i = 0; i < 50; ++i) launch();
    check(cudaDeviceSynchronize(), "warm-up");
    for (int i = 0; i < reps; ++i) {
        const double t0 = now_s();
        launch();
        const double t1 = now_s();
        check(cudaStreamSynchronize(0), "launch + synchronise");
        const double t2 = now_s();
        r.enqueue.push_back(t1 - t0);
        r.sync.push_back(t2 - t0);
    }
    return r;
}

// How long the one-block kernels of offload_samples' by_wait wait on the device: from about an empty grid's round
// trip to about the bootstrap program's off-loads and ten times theirs.
const std::vector<double> wait_lengths_s = {20e-6, 50e-6, 100e-6, 200e-6, 500e-6};

int wait_reps(int reps) { return reps / 4 + 1; }

unsigned long long wait_ns(double wait_s) { return static_cast<unsigned long long>(wait_s * 1e9); }

// The launch round trip with the host thread blocking while it waits (cudaDeviceScheduleBlockingSync), in a
// forked child: the flag holds for a process's context, and this one's spins. First `reps` of the empty kernel,
// then wait_reps(reps) of each of wait_lengths_s's waiting ones. Empty when the child fails.
std::vector<double> blocking_round_trips(int device, int reps) {
    const std::size_t n = static_cast<std::size_t>(reps + wait_reps(reps) * static_cast<int>(wait_lengths_s.size()));
    std::vector<double> t(n);
    int code = -1;
    const bool got = mmgp::run::answer_of_child([&](int to_parent) {
        // The device first: the flags are recorded for the current device.
        if (cudaSetDevice(device) != cudaSuccess || cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) != cudaSuccess) return 1;
        std::vector<double> s = launch_round_trips(1, reps).sync;
        for (double w : wait_lengths_s) {
            const std::vector<double> more = launch_round_trips(1, wait_reps(reps), wait_ns(w)).sync;
            s.insert(s.end(), more.begin(), more.end());
        }
        return mmgp::run::write_all(to_parent, s.data(), s.size() * sizeof(double)) ? 0 : 1;
    }, t.data(), t.size() * sizeof(double), mmgp::run::steady_seconds() + 60, &code);
    return got && code == 0 ? t : std::vector<double>{};
}

// The blocking child's samples (blocking_round_trips) split as it took them: the empty kernel's, then each
// waiting kernel's beside this process's spinning ones (offload_samples' by_wait).
void add_blocking(rec::offload_samples& out, const std::vector<double>& blocking, int reps) {
    if (blocking.empty()) return;
    out.blocking_sync_s.assign(blocking.begin(), blocking.begin() + reps);
    auto at = blocking.begin() + reps;
    for (auto& w : out.by_wait) {
        w.blocking_s.assign(at, at + wait_reps(reps));
        at += wait_reps(reps);
    }
}

// The spinning round trips: the empty one-block kernel, the grids of 1 to 2 SMs blocks, and the waiting kernels
// (their blocking twins: add_blocking).
rec::offload_samples offload_samples(int sms, int reps) {
    const round_trip one = launch_round_trips(1, reps);
    rec::offload_samples out{one.sync, one.enqueue, {}};
    for (int p = 1; p <= 2 * sms; p = p < sms && 2 * p > sms ? sms : 2 * p)
        out.by_blocks.push_back({p, launch_round_trips(p, reps / 4 + 1).sync});
    for (double w : wait_lengths_s) out.by_wait.push_back({w, launch_round_trips(1, wait_reps(reps), wait_ns(w)).sync, {}});
    return out;
}

// ---- the mailbox: a persistent kernel on mapped host memory -------------------------------------------------

rec::mailbox_samples mailbox_samples(int rounds) {
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
    if (timed_out) return {};
    return {true, std::vector<double>(t.begin() + std::min<std::size_t>(t.size(), 20), t.end())};
}

// ---- pinned copies --------------------------------------------------------------------------------------------

// Event times of `reps` copies of `bytes` in direction `kind`.
std::vector<double> copy_times(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, int reps) {
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
    return t;
}

rec::copy_samples copy_samples(bool quick) {
    const std::size_t largest = quick ? (std::size_t{64} << 20) : (std::size_t{256} << 20);
    void* host = nullptr;
    void* dev = nullptr;
    check(cudaMallocHost(&host, largest), "pinned host memory");
    check(cudaMalloc(&dev, largest), "device memory");
    std::memset(host, 1, largest);
    rec::copy_samples out;
    for (int d = 0; d < 2; ++d)
        for (std::size_t bytes = 8; bytes <= largest; bytes *= (bytes < (std::size_t{1} << 20) ? 16 : 4)) {
            const int reps = bytes >= (std::size_t{16} << 20) ? 5 : 30;
            (d == 0 ? out.host_to_device : out.device_to_host)
                .push_back({bytes, d == 0 ? copy_times(dev, host, bytes, cudaMemcpyHostToDevice, reps)
                                          : copy_times(host, dev, bytes, cudaMemcpyDeviceToHost, reps)});
        }
    cudaFree(dev), cudaFreeHost(host);
    return out;
}

// ---- blocks per SM --------------------------------------------------------------------------------------------

rec::block_samples block_samples(int sms, bool quick) {
    float* scratch = nullptr;
    check(cudaMalloc(&scratch, sizeof(float) * 64 * static_cast<std::size_t>(sms)), "device memory");
    const int iterations = quick ? 200000 : 1000000;
    rec::block_samples out{256, iterations, 0, {}};
    cudaEvent_t a, b;
    check(cudaEventCreate(&a), "event");
    check(cudaEventCreate(&b), "event");
    for (int mult : {0, 1, 2, 3, 4, 6, 8, 16}) {
        const int blocks = mult == 0 ? 1 : mult * sms;
        std::vector<double> t;
        for (int r = 0; r < 3; ++r) {
            check(cudaEventRecord(a), "event record");
            work_kernel<<<blocks, 256>>>(scratch, iterations);
            check(cudaEventRecord(b), "event record");
            check(cudaEventSynchronize(b), "work kernel");
            float ms = 0;
            check(cudaEventElapsedTime(&ms, a, b), "event time");
            t.push_back(1e-3 * ms);
        }
        out.by_blocks.push_back({blocks, t});
    }
    cudaEventDestroy(a), cudaEventDestroy(b);
    cudaFree(scratch);
    // The blocks of this kernel an SM holds at once (its occupancy at 256 threads): the platform's apu_slots.
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&out.resident_per_sm, work_kernel, 256, 0), "occupancy");
    return out;
}

// ---- sharing between processes ---------------------------------------------------------------------------------

// The blocks of a sharing child's grids: `grid` itself when positive, else the device's SMs / -grid (-1: one block
// per SM; -4: a quarter of the SMs), at least one.
int grid_blocks(int device, int grid) {
    if (grid > 0) return grid;
    int sms = 1;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    return std::max(1, sms / -grid);
}

// One child's work: initialise CUDA, time one spin kernel alone (events), say "ready" with its time and its blocks,
// wait for "go", then run `kernels` off-loads (launch + synchronise) and report the wall time. Every kernel is a grid
// of grid_blocks(grid) blocks, each spinning `cycles`. Its host thread spins while it waits (CUDA's default with few
// contexts a core), or blocks (`blocking`: cudaDeviceScheduleBlockingSync, as an edtlp process of the off-load
// runtime waits). Runs in a forked child that has not touched CUDA before.
[[noreturn]] void sharing_child(int device, int kernels, long long cycles, int grid, bool blocking, int ready_fd, int go_fd) {
    char line[256];
    if (cudaSetDevice(device) != cudaSuccess ||
        (blocking && cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) != cudaSuccess) || cudaFree(nullptr) != cudaSuccess) {
        const int n = std::snprintf(line, sizeof line, "error\n");
        (void)!write(ready_fd, line, static_cast<std::size_t>(n));
        _exit(1);
    }
    const int blocks = grid_blocks(device, grid);
    cudaEvent_t a, b;
    cudaEventCreate(&a), cudaEventCreate(&b);
    spin_kernel<<<blocks, 32>>>(cycles);  // warm-up
    cudaDeviceSynchronize();
    cudaEventRecord(a);
    spin_kernel<<<blocks, 32>>>(cycles);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    int n = std::snprintf(line, sizeof line, "ready %.9g %d\n", 1e-3 * ms, blocks);
    (void)!write(ready_fd, line, static_cast<std::size_t>(n));
    char go = 0;
    (void)!read(go_fd, &go, 1);
    const double t0 = now_s();
    for (int i = 0; i < kernels; ++i) {
        spin_kernel<<<blocks, 32>>>(cycles);
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
    int blocks = 0;         // the grid of every kernel
};

// `procs` children at once, each `kernels` off-loads of a `cycles`-cycle kernel of grid_blocks(grid) blocks.
sharing_run run_children(int device, int procs, int kernels, long long cycles, int grid, bool blocking = false) {
    sharing_run out;
    std::vector<mmgp::run::forked> children;
    bool ok = true;
    for (int i = 0; i < procs && ok; ++i) {
        children.push_back(mmgp::run::fork_with_pipes([&](int to_parent, int from_parent) {
            sharing_child(device, kernels, cycles, grid, blocking, to_parent, from_parent);
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
        double kernel_s = NAN;
        int blocks = 0;
        if (l.rfind("ready ", 0) != 0 || std::sscanf(l.c_str() + 6, "%lf %d", &kernel_s, &blocks) != 2) {
            ok = false;
            continue;
        }
        out.kernel_s = std::isnan(out.kernel_s) ? kernel_s : std::min(out.kernel_s, kernel_s);
        out.blocks = blocks;
    }
    const double t0 = now_s();
    if (ok)
        for (const mmgp::run::forked& c : children) (void)!write(c.to_child, "g", 1);
    for (const mmgp::run::forked& c : children)
        if (!ok || read_line(c.from_child).rfind("done ", 0) != 0) ok = false;
    out.wall_s = now_s() - t0;
    // A run given up (a child failed or never said ready) kills its children first: those still waiting for "go"
    // would never see their pipe's end, since each later child holds a copy of the earlier ones' write ends.
    if (!ok)
        for (const mmgp::run::forked& c : children)
            if (c.pid > 0) kill(c.pid, SIGKILL);
    for (mmgp::run::forked& c : children) ok = mmgp::run::wait_forked(c) == 0 && ok;
    out.ok = ok;
    return out;
}

// One sharing measurement: one process alone, then `procs` at once (gpu_record.cpp derives the switch cost), every
// kernel a grid of grid_blocks(grid) blocks, the host threads spinning or blocking while they wait.
rec::sharing_samples sharing_samples(int device, bool quick, int grid = 1, int procs = 2, bool blocking = false) {
    const int kernels = quick ? 200 : 1000;
    const long long cycles = 100000;  // ~50-70 µs at 1.5-2 GHz: longer than a launch, shorter than a time slice
    const sharing_run one = run_children(device, 1, kernels, cycles, grid, blocking);
    const sharing_run many = run_children(device, procs, kernels, cycles, grid, blocking);
    rec::sharing_samples out;
    out.procs = procs;
    out.blocking = blocking;
    if (!one.ok || !many.ok) return out;
    out.measured = true;
    out.kernels = kernels;
    out.kernel_s = one.kernel_s;
    out.alone_wall_s = one.wall_s;
    out.pair_wall_s = many.wall_s;
    out.blocks = one.blocks;
    return out;
}

// The processes beyond a pair that the switch and MPS's overlap are measured with (a program's m). Each child's
// host thread spins while it waits (CUDA's default with few contexts a core): on a host with fewer cores than
// children they would also share cores.
constexpr int more_procs[] = {4, 8};

bool mps_control(const char* what) {
    const std::string cmd = std::string("nvidia-cuda-mps-control ") + what + " >/dev/null 2>&1";
    return mmgp::run::shell_status(cmd) == 0;
}

// Without MPS and, when asked or possible (root and the control program), with the daemon started for the
// measurement and stopped after it. Runs before this process initialises CUDA.
rec::sharing_section sharing_section(const options& o) {
    rec::sharing_section out;
    if (o.mps != "on") {
        out.time_sliced = sharing_samples(o.device, o.quick);
        // The switch between grids spread over the SMs, as a program's off-loads of p blocks are: a quarter of the
        // SMs and all of them.
        for (int grid : {-4, -1}) out.time_sliced_grids.push_back(sharing_samples(o.device, o.quick, grid));
        for (int procs : more_procs) out.time_sliced_procs.push_back(sharing_samples(o.device, o.quick, 1, procs));
        // The same with every host thread blocking while it waits, as the off-load runtime's edtlp processes do.
        for (int procs : {2, more_procs[0], more_procs[1]})
            out.time_sliced_blocking_procs.push_back(sharing_samples(o.device, o.quick, 1, procs, true));
    }
    const bool can = geteuid() == 0 && mmgp::run::shell_status("command -v nvidia-cuda-mps-control >/dev/null 2>&1") == 0;
    if (o.mps == "off" || (o.mps == "auto" && !can)) {
        out.mps_note = o.mps == "off" ? "not asked" : "the MPS daemon cannot be started here (needs root and nvidia-cuda-mps-control)";
        return out;
    }
    if (!mps_control("-d")) {
        out.mps_note = "nvidia-cuda-mps-control -d failed";
        return out;
    }
    sleep(1);
    out.mps = sharing_samples(o.device, o.quick);
    for (int procs : more_procs) out.mps_procs.push_back(sharing_samples(o.device, o.quick, 1, procs));
    mmgp::run::shell_status("echo quit | nvidia-cuda-mps-control >/dev/null 2>&1");
    sleep(1);
    return out;
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
    rec::harness_samples samples;
    samples.sharing = sharing_section(o);
    const int reps = o.quick ? 300 : 2000;
    const std::vector<double> blocking = blocking_round_trips(o.device, reps);  // before this process's context
    check(cudaSetDevice(o.device), "select device");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, o.device), "device properties");
    rec::device_facts& d = samples.device;
    d = {o.device, prop.name, prop.multiProcessorCount, prop.major, prop.minor, prop.totalGlobalMem,
         prop.maxBlocksPerMultiProcessor, prop.maxThreadsPerMultiProcessor, 0, 0, 0};
    cudaDriverGetVersion(&d.driver_version), cudaRuntimeGetVersion(&d.runtime_version);
    cudaDeviceGetAttribute(&d.compute_mode, cudaDevAttrComputeMode, o.device);
    samples.quick = o.quick;
    samples.offload = offload_samples(d.sms, reps);
    add_blocking(samples.offload, blocking, reps);
    samples.mailbox = mailbox_samples(reps);
    samples.copies = copy_samples(o.quick);
    samples.blocks = block_samples(d.sms, o.quick);
    {  // The round trip and the copies again through the calibration's seam: the CUDA backends timed by the CPU
       // harnesses' loops and statistics (gpu_backend_section.cpp), recorded beside the measurements above. Their
       // quick repetitions always (5 x 20,000 round trips, copies 4x apart): a comparison, a few seconds.
        auto launch = rec::make_cuda_backend(rec::cuda_signal::launch);
        auto mailbox = rec::make_cuda_backend(rec::cuda_signal::mailbox, 0);
        samples.backend_harnesses = rec::backend_harnesses({launch.get(), mailbox.get()}, true);
    }
    std::printf("%s\n", rec::harness_record(samples).c_str());
    return 0;
}
