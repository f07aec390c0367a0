// The CUDA backend of the calibration's accelerator seam (cuda_backend.hpp): only the mechanism, signalling the
// device and copying to it; what is measured with it and how (warm-up, repetitions, statistics, records) is the CPU
// harnesses' (harness_offload.cpp, harness_dma.cpp), called by gpu_backend_section.cpp. Made by gpu_harness.cu.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "gpu/cuda_backend.hpp"
#include "mmgp/error.hpp"

namespace mmgp::calib::gpu {
namespace {

constexpr int line_words = 16;        // one 64-byte line per APU's request and reply
constexpr double answer_limit_s = 5;  // an answer later than this: the device never saw the request
// Kernels that run at once on one device: at most 128 from compute capability 3.5 on (the CUDA C++ Programming
// Guide's table of features and technical specifications, "maximum number of resident grids per device").
constexpr int resident_grids = 128;

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess)
        throw mmgp::failure(std::string("CUDA backend: ") + what + ": " + cudaGetErrorString(e) + " (CUDA error " +
                            std::to_string(static_cast<int>(e)) + ")");
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// launch: one off-load = this kernel, which answers payload + 1 through mapped host memory.
__global__ void answer_kernel(volatile unsigned* reply, unsigned payload) {
    reply[1] = payload + 1;
    __threadfence_system();
}

// mailbox: one APU's persistent kernel. request: [0] sequence number, [1] payload, [2] stop; reply: [0] the sequence
// number answered, [1] payload + 1.
__global__ void mailbox_kernel(volatile unsigned* request, volatile unsigned* reply) {
    unsigned seen = 0;
    for (;;) {
        unsigned s;
        while ((s = request[0]) == seen) {
        }
        __threadfence_system();  // the payload and the stop word after the sequence number that announced them
        seen = s;
        if (request[2] != 0) return;
        reply[1] = request[1] + 1;
        __threadfence_system();
        reply[0] = s;
        __threadfence_system();
    }
}

class cuda_backend final : public apu_backend {
public:
    cuda_backend(cuda_signal how, std::size_t transfer) : how_(how), transfer_(transfer) {}
    ~cuda_backend() override {
        try {
            stop();
        } catch (...) {  // a kernel that did not end: said by stop() to whoever called it; nothing more to do here
        }
    }
    std::string name() const override { return how_ == cuda_signal::launch ? "cuda/launch" : "cuda/mailbox"; }
    int count() const override { return static_cast<int>(apus_.size()); }
    std::size_t max_transfer() const override { return transfer_; }

    void start(const std::vector<int>&, int count) override {
        stop();
        (void)cudaGetLastError();  // an error left by another backend's failure is not this one's
        if (count < 1) throw mmgp::failure("CUDA backend: start: at least one APU");
        int device = 0, sms = 0;
        check(cudaGetDevice(&device), "current device");
        check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "SM count");
        if (how_ == cuda_signal::mailbox && count > std::min(sms, resident_grids))
            throw mmgp::failure("CUDA backend: " + std::to_string(count) + " persistent kernels would not all be "
                                "resident (" + std::to_string(sms) + " SMs, at most " +
                                std::to_string(resident_grids) + " grids at once)");
        const std::size_t words = 2 * line_words * static_cast<std::size_t>(count);
        void* host = nullptr;
        check(cudaHostAlloc(&host, words * sizeof(unsigned), cudaHostAllocMapped), "mapped host memory");
        lines_ = static_cast<volatile unsigned*>(host);
        for (std::size_t w = 0; w < words; ++w) lines_[w] = 0;
        void* dev = nullptr;
        check(cudaHostGetDevicePointer(&dev, host, 0), "device pointer of mapped memory");
        dev_lines_ = static_cast<unsigned*>(dev);
        apus_.resize(static_cast<std::size_t>(count));
        // Every allocation before any persistent kernel runs (an allocation between launches may keep them apart).
        for (apu& a : apus_) {
            check(cudaStreamCreateWithFlags(&a.run, cudaStreamNonBlocking), "stream");
            check(cudaStreamCreateWithFlags(&a.copy, cudaStreamNonBlocking), "stream");
            check(cudaEventCreate(&a.before), "event");
            check(cudaEventCreate(&a.after), "event");
            if (transfer_ > 0) check(cudaMalloc(&a.buffer, transfer_), "device memory");
        }
        if (how_ == cuda_signal::mailbox)
            for (int i = 0; i < count; ++i) {
                mailbox_kernel<<<1, 1, 0, apus_[static_cast<std::size_t>(i)].run>>>(dev_lines_ + request(i),
                                                                                   dev_lines_ + reply(i));
                check(cudaGetLastError(), "persistent kernel launch");
            }
    }

    /// Throws mmgp::failure, its state cleared, when a persistent kernel did not end within the answer limit.
    void stop() override {
        if (apus_.empty() && lines_ == nullptr) return;
        int running = 0;
        if (how_ == cuda_signal::mailbox && lines_ != nullptr)
            for (int i = 0; i < count(); ++i) {
                volatile unsigned* req = lines_ + request(i);
                req[2] = 1;
                __sync_synchronize();
                req[0] = ++apus_[static_cast<std::size_t>(i)].sent;
                __sync_synchronize();
            }
        const auto t0 = std::chrono::steady_clock::now();
        for (apu& a : apus_) {
            // A persistent kernel that never sees its stop line (mapped memory not coherent here) would hang a
            // synchronise: wait for it within the answer limit, and otherwise leave its memory to the process's end.
            if (a.run == nullptr) continue;  // a start() that failed before this APU's stream
            cudaError_t e;
            while ((e = cudaStreamQuery(a.run)) == cudaErrorNotReady && seconds_since(t0) < answer_limit_s) {
            }
            running += e == cudaErrorNotReady;
        }
        if (running == 0) {
            for (apu& a : apus_) {
                if (a.run != nullptr) cudaStreamDestroy(a.run);
                if (a.copy != nullptr) cudaStreamDestroy(a.copy);
                if (a.before != nullptr) cudaEventDestroy(a.before);
                if (a.after != nullptr) cudaEventDestroy(a.after);
                if (a.buffer != nullptr) cudaFree(a.buffer);
            }
            if (lines_ != nullptr) cudaFreeHost(const_cast<unsigned*>(lines_));
        }
        (void)cudaGetLastError();  // what the clean-up left is not the next call's error
        apus_.clear();
        lines_ = nullptr;
        dev_lines_ = nullptr;
        if (running > 0)
            throw mmgp::failure("CUDA backend: " + std::to_string(running) + " persistent kernel(s) did not end within "
                                "5 s of their stop request (left running, their memory kept)");
    }

    void signal(int i, std::uint32_t payload) override {
        apu& a = at(i);
        if (how_ == cuda_signal::launch) {
            answer_kernel<<<1, 1, 0, a.run>>>(dev_lines_ + reply(i), payload);
            check(cudaGetLastError(), "off-load launch");
            return;
        }
        volatile unsigned* req = lines_ + request(i);
        req[1] = payload;
        __sync_synchronize();
        req[0] = ++a.sent;
        __sync_synchronize();
    }

    std::uint32_t wait(int i) override {
        apu& a = at(i);
        volatile unsigned* rep = lines_ + reply(i);
        if (how_ == cuda_signal::launch) {
            check(cudaStreamSynchronize(a.run), "off-load synchronise");
            return rep[1];
        }
        const auto t0 = std::chrono::steady_clock::now();
        for (unsigned spins = 0; rep[0] != a.sent; ++spins)
            if ((spins & 1023) == 1023 && seconds_since(t0) > answer_limit_s)
                throw mmgp::failure("CUDA backend: the persistent kernel did not answer within 5 s (mapped host "
                                    "memory not coherent with the device here?)");
        __sync_synchronize();
        return rep[1];
    }

    double timed_get(int i, const void* src, std::size_t bytes) override {
        apu& a = at(i);
        if (bytes > transfer_) throw mmgp::failure("CUDA backend: a copy of " + std::to_string(bytes) +
                                                   " bytes exceeds the transfer buffer");
        check(cudaEventRecord(a.before, a.copy), "event record");
        check(cudaMemcpyAsync(a.buffer, src, bytes, cudaMemcpyHostToDevice, a.copy), "copy to the device");
        check(cudaEventRecord(a.after, a.copy), "event record");
        check(cudaEventSynchronize(a.after), "copy to the device");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, a.before, a.after), "event time");
        return 1e-3 * ms;
    }

private:
    struct apu {
        cudaStream_t run = nullptr, copy = nullptr;  // its off-loads (the persistent kernel in mailbox mode); its copies
        cudaEvent_t before = nullptr, after = nullptr;
        void* buffer = nullptr;
        unsigned sent = 0;  // requests sent (mailbox)
    };
    static std::size_t request(int i) { return 2 * line_words * static_cast<std::size_t>(i); }
    static std::size_t reply(int i) { return request(i) + line_words; }
    apu& at(int i) {
        if (i < 0 || i >= count()) throw mmgp::failure("CUDA backend: no APU " + std::to_string(i));
        return apus_[static_cast<std::size_t>(i)];
    }

    cuda_signal how_;
    std::size_t transfer_;
    std::vector<apu> apus_;
    volatile unsigned* lines_ = nullptr;  // host view of the request and reply lines
    unsigned* dev_lines_ = nullptr;       // the device's
};

}  // namespace

std::unique_ptr<apu_backend> make_cuda_backend(cuda_signal how, std::size_t transfer_buffer) {
    return std::make_unique<cuda_backend>(how, transfer_buffer);
}

}  // namespace mmgp::calib::gpu
