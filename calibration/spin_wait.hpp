// The spin-wait loop of the off-load runtime (kernels/signal.hpp, wait_change) and of the harness that
// times one of its iterations (harness_spin.cpp, spin_pause): one definition, so the calibrated spin_pause is the
// cost of the loop the runtime runs.
#pragma once

#include <atomic>
#include <cstdint>

namespace mmgp::calib {

/// The CPU's spin-loop hint: `pause` on x86, `yield` on aarch64, nothing elsewhere.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

enum class spin_end { changed, aborted, exhausted };

struct spin_result {
    spin_end end;
    long iterations;  ///< iterations done before the end
};

/// Spins while word == old: an acquire load of the word, a pause, the loop bound (limit < 0: none) and,
/// every 1024 iterations, the abort flag.
inline spin_result spin_wait(const std::atomic<std::uint32_t>& word, std::uint32_t old, long limit,
                             const std::atomic<bool>& abort_flag) {
    for (long i = 0; limit < 0 || i < limit; ++i) {
        if (word.load(std::memory_order_acquire) != old) return {spin_end::changed, i};
        cpu_relax();
        if ((i & 1023) == 1023 && abort_flag.load(std::memory_order_relaxed)) return {spin_end::aborted, i};
    }
    return {spin_end::exhausted, limit};
}

}  // namespace mmgp::calib
