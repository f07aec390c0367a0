// mmgp-gpu-backend-check: the CUDA backend (cuda_backend.cu) keeps the calibration's backend protocol on a real
// device (the gpu suite). Exit 77 where no GPU is usable, with the reason; 1 on the first check that fails.
//
// For both signalling modes: three APUs started back to back answer every payload + 1, rounds of off-loads
// signalled to all before any is waited for; a copy to APU 1 is timed; a copy past the transfer buffer and an APU
// that does not exist are refused; the backend stops, starts again with one APU and still answers. In mailbox mode,
// more persistent kernels than SMs are refused.
#include <cuda_runtime.h>

#include <cstdio>
#include <exception>
#include <stdexcept>
#include <vector>

#include "gpu/cuda_backend.hpp"

namespace {

namespace gpu = mmgp::calib::gpu;

int failures = 0;

void check(bool ok, const char* what) {
    std::printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok) ++failures;
}

template <class F>
bool throws(F f) {
    try {
        f();
    } catch (const std::exception&) {
        return true;
    }
    return false;
}

void protocol(gpu::cuda_signal how, const char* name) {
    std::printf("-- %s\n", name);
    constexpr std::size_t buffer = std::size_t{1} << 20;
    auto be = gpu::make_cuda_backend(how, buffer);
    be->start({}, 3);
    check(be->count() == 3, "three APUs started");
    bool answered = true;
    for (std::uint32_t round = 1; round <= 100 && answered; ++round) {
        for (int i = 0; i < 3; ++i) be->signal(i, 10 * round + static_cast<std::uint32_t>(i));
        for (int i = 0; i < 3; ++i) answered = answered && be->wait(i) == 10 * round + static_cast<std::uint32_t>(i) + 1;
    }
    check(answered, "100 rounds, each signalled to every APU before any wait: every answer is payload + 1");
    std::vector<char> host(buffer, 1);
    const double t = be->timed_get(1, host.data(), buffer);
    check(t > 0 && t < 1, "a 1 MiB copy to APU 1 timed by CUDA events, in (0, 1) s");
    check(throws([&] { be->timed_get(0, host.data(), buffer + 1); }), "a copy past the transfer buffer is refused");
    check(throws([&] { be->signal(3, 0); }), "APU 3 of 3 does not exist");
    be->stop();  // throws when a persistent kernel did not end (the check then fails)
    check(be->count() == 0, "stopped");
    be->start({}, 1);
    be->signal(0, 41);
    check(be->wait(0) == 42, "started again with one APU, it answers");
    be->stop();
}

}  // namespace

int main() {
    int devices = 0;
    const cudaError_t e = cudaGetDeviceCount(&devices);
    if (e != cudaSuccess || devices == 0) {
        std::printf("SKIP gpu-backend: no usable GPU: %s\n", e != cudaSuccess ? cudaGetErrorString(e) : "no device");
        return 77;
    }
    try {
        if (cudaSetDevice(0) != cudaSuccess) throw std::runtime_error("cudaSetDevice(0) failed");
        protocol(gpu::cuda_signal::launch, "cuda/launch");
        protocol(gpu::cuda_signal::mailbox, "cuda/mailbox");
        int sms = 0;
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
        auto mailbox = gpu::make_cuda_backend(gpu::cuda_signal::mailbox, 0);
        check(throws([&] { mailbox->start({}, sms + 1); }), "mailbox: more persistent kernels than SMs refused");
        mailbox->start({}, 1);
        char byte = 0;
        check(mailbox->max_transfer() == 0 && throws([&] { mailbox->timed_get(0, &byte, 1); }),
              "no transfer buffer: no copy");
        mailbox->stop();
    } catch (const std::exception& x) {
        std::printf("FAIL gpu-backend: %s\n", x.what());
        return 1;
    }
    std::printf(failures == 0 ? "gpu-backend: all checks passed\n" : "gpu-backend: %d check(s) failed\n", failures);
    return failures == 0 ? 0 : 1;
}
