// The accelerator mechanism behind the calibration harnesses: how an APU is started, signalled and waited for,
// and how it pulls data from host memory. The harnesses (harness.hpp) only measure; a backend only moves bits.
//
// Protocol every backend implements: an off-load carries a 4-byte payload to APU `i`; the APU answers with
// payload + 1. signal() must not wait for the answer (so that one HPU thread can start several off-loads back
// to back); wait() blocks or spins until APU `i` has answered and returns the answer. At most one off-load per APU
// is outstanding. See README.md for how a Cell (libspe2 mailboxes + MFC DMA) or a GPU backend maps onto this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mmgp::calib {

class apu_backend {
public:
    virtual ~apu_backend() = default;
    /// Short name recorded in the profile ("host-thread/spin").
    virtual std::string name() const = 0;
    /// Starts `count` APUs; APU i runs on cpus[i % cpus.size()] (operating-system CPU numbers; a backend for a
    /// device ignores them). Throws mmgp::failure when the APUs cannot be started.
    virtual void start(const std::vector<int>& cpus, int count) = 0;
    /// Stops every APU (idempotent; the destructor calls it).
    virtual void stop() = 0;
    virtual int count() const = 0;
    /// Starts an off-load of a 4-byte payload on APU i.
    virtual void signal(int apu, std::uint32_t payload) = 0;
    /// Waits for APU i's answer (payload + 1).
    virtual std::uint32_t wait(int apu) = 0;
    /// Largest transfer timed_get() supports (0: the backend has no data-transfer path).
    virtual std::size_t max_transfer() const { return 0; }
    /// APU i copies `bytes` from host memory `src` into its own memory and returns the copy time measured on the
    /// APU side (seconds, timer overhead included; the caller subtracts it). A synchronous call.
    virtual double timed_get(int apu, const void* src, std::size_t bytes);
};

/// How a host-thread APU waits for work and how the host waits for answers.
enum class wait_mode { spin, futex };

/// APUs that are host threads pinned to other cores, each with a cache-line mailbox in shared memory. In spin
/// mode, when there are more APUs than CPUs, one worker thread per CPU serves several mailboxes in turn; in futex
/// mode every APU has its own (blocking) thread.
std::unique_ptr<apu_backend> make_host_thread_backend(wait_mode mode, std::size_t transfer_buffer = 16u << 20);

}  // namespace mmgp::calib
