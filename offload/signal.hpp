// Signalling of the off-load runtime: sequence words that one thread advances and another waits on (spin,
// futex or spin-then-futex, calib::spin_wait's loop), and the abort state every wait checks.
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <linux/futex.h>
#include <mutex>
#include <string>
#include <sys/syscall.h>
#include <unistd.h>

#include "spin_wait.hpp"  // calibration/: the loop the spin harness times
#include "runtime.hpp"

namespace mmgp::kernels::detail {

struct aborted {};  // thrown inside threads when the run is being torn down

struct abort_state {
    std::atomic<bool> flag{false};
    std::mutex mu;
    std::string why;
    void fail(const std::string& msg) {
        std::lock_guard<std::mutex> lk(mu);
        if (why.empty()) why = msg;
        flag.store(true);
    }
};

// A 32-bit sequence number that one thread advances and one other thread waits on (futex word).
struct alignas(64) signal_word {
    std::atomic<std::uint32_t> seq{0};
    std::atomic<std::uint32_t> sleeping{0};
};
static_assert(sizeof(std::atomic<std::uint32_t>) == 4 && std::atomic<std::uint32_t>::is_always_lock_free);

inline void post(signal_word& w) {
    w.seq.fetch_add(1, std::memory_order_seq_cst);
    if (w.sleeping.load(std::memory_order_seq_cst))
        syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&w.seq), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

enum class wait_kind { spin, block, spin_then_block };

// Waits until w.seq != old. Spinning checks the abort flag every 1024 iterations; blocking uses 50 ms futex
// time-outs so that a torn-down run is noticed.
inline void wait_change(signal_word& w, std::uint32_t old, wait_kind k, const abort_state& ab) {
    if (k != wait_kind::block) {
        const calib::spin_result r = calib::spin_wait(w.seq, old, k == wait_kind::spin ? -1 : spin_then_block_limit, ab.flag);
        if (r.end == calib::spin_end::changed) return;
        if (r.end == calib::spin_end::aborted) throw aborted{};
    }
    while (w.seq.load(std::memory_order_acquire) == old) {
        if (ab.flag.load(std::memory_order_relaxed)) throw aborted{};
        w.sleeping.store(1, std::memory_order_seq_cst);
        if (w.seq.load(std::memory_order_seq_cst) != old) {
            w.sleeping.store(0, std::memory_order_relaxed);
            break;
        }
        timespec ts{0, 50'000'000};
        syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&w.seq), FUTEX_WAIT_PRIVATE, old, &ts, nullptr, 0);
        w.sleeping.store(0, std::memory_order_relaxed);
    }
}

// One futex wait of at most `seconds` while w.seq == old (spurious returns are fine: the caller loops).
inline void wait_once(signal_word& w, std::uint32_t old, double seconds) {
    w.sleeping.store(1, std::memory_order_seq_cst);
    if (w.seq.load(std::memory_order_seq_cst) == old) {
        timespec ts{static_cast<time_t>(seconds), static_cast<long>((seconds - std::floor(seconds)) * 1e9)};
        syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&w.seq), FUTEX_WAIT_PRIVATE, old, &ts, nullptr, 0);
    }
    w.sleeping.store(0, std::memory_order_relaxed);
}

}  // namespace mmgp::kernels::detail
