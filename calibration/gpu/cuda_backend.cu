// The CUDA backend of the calibration's accelerator seam (cuda_backend.hpp): only the mechanism, signalling the
// device and copying to it; what is measured with it and how (warm-up, repetitions, statistics, records) is the CPU
// harnesses' (harness_offload.cpp, harness_dma.cpp), called by gpu_backend_section.cpp. Made by gpu_harness.cu.
#include <cuda_runtime.h>

#include <chrono>
#include <string>
#include <vector>

#include "gpu/cuda_backend.hpp"
#include "mmgp/error.hpp"

namespace mmgp::calib::gpu {
namespace {

constexpr int line_words = 16;        // one 64-byte line per APU's request and reply
constexpr double answer_limit_s = 5;  // an answer later than this: the device never saw the request

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess)
        throw mmgp::failure(std::string("CUDA backend: ") + what + ": " + cudaGetErrorString(e) + " (CUDA error " +
                            std::to_string(static_cast<int>(e)) + ")");
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// launch: one off-load = this kernel, which answers through mapped host memory.
__global__ void answer_kernel(volatile unsigned* reply, unsigned value) {
    reply[1] = value;
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
        } catch (...) {
        }
    }
    std::string name() const override { return how_ == cuda_signal::launch ? "cuda/launch" : "cuda/mailbox"; }
    int count() const override { return static_cast<int>(apus_.size()); }
    std::size_t max_transfer() const override { return transfer_; }

    void start(const std::vector<int>&, int count) override {
        stop();
        if (count < 1) throw mmgp::failure("CUDA backend: start: at least one APU");
        int device = 0, sms = 0;
        check(cudaGetDevice(&device), "current device");
        check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "SM count");
        if (how_ == cuda_signal::mailbox && count > sms)
            throw mmgp::failure("CUDA backend: " + std::to_string(count) + " persistent kernels on " +
                                std::to_string(sms) + " SMs would not all be resident");
        const std::size_t words = 2 * line_words * static_cast<std::size_t>(count);
        void* host = nullptr;
        check(cudaHostAlloc(&host, words * sizeof(unsigned), cudaHostAllocMapped), "mapped host memory");
        lines_ = static_cast<volatile unsigned*>(host);
        for (std::size_t w = 0; w < words; ++w) lines_[w] = 0;
        void* dev = nullptr;
        check(cudaHostGetDevicePointer(&dev, host, 0), "device pointer of mapped memory");
        dev_lines_ = static_cast<unsigned*>(dev);
        apus_.resize(static_cast<std::size_t>(count));
        for (int i = 0; i < count; ++i) {
            apu& a = apus_[static_cast<std::size_t>(i)];
            check(cudaStreamCreateWithFlags(&a.run, cudaStreamNonBlocking), "stream");
            check(cudaStreamCreateWithFlags(&a.copy, cudaStreamNonBlocking), "stream");
            check(cudaEventCreate(&a.before), "event");
            check(cudaEventCreate(&a.after), "event");
            if (transfer_ > 0) check(cudaMalloc(&a.buffer, transfer_), "device memory");
            if (how_ == cuda_signal::mailbox) {
                mailbox_kernel<<<1, 1, 0, a.run>>>(dev_lines_ + request(i), dev_lines_ + reply(i));
                check(cudaGetLastError(), "persistent kernel launch");
            }
        }
    }

    void stop() override {
        if (apus_.empty() && lines_ == nullptr) return;
        bool all_ended = true;
        if (how_ == cuda_signal::mailbox)
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
            cudaError_t e;
            while ((e = cudaStreamQuery(a.run)) == cudaErrorNotReady && seconds_since(t0) < answer_limit_s) {
            }
            all_ended = all_ended && e != cudaErrorNotReady;
        }
        if (all_ended) {
            for (apu& a : apus_) {
                cudaStreamDestroy(a.run), cudaStreamDestroy(a.copy);
                cudaEventDestroy(a.before), cudaEventDestroy(a.after);
                if (a.buffer != nullptr) cudaFree(a.buffer);
            }
            if (lines_ != nullptr) cudaFreeHost(const_cast<unsigned*>(lines_));
        }
        apus_.clear();
        lines_ = nullptr;
        dev_lines_ = nullptr;
    }

    void signal(int i, std::uint32_t payload) override {
        apu& a = at(i);
        if (how_ == cuda_signal::launch) {
            answer_kernel<<<1, 1, 0, a.run>>>(dev_lines_ + reply(i), payload + 1);
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
