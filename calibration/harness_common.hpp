// Helpers shared by the calibration harnesses (harness_*.cpp): timing, pinning, repetition counts, the retry
// loops for noisy measurements and the construction of a measurement. Internal: not part of harness.hpp.
#pragma once

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <string>
#include <utility>
#include <vector>

#include "harness.hpp"

namespace mmgp::calib::detail {

using clk = std::chrono::steady_clock;
inline double secs(clk::duration d) { return std::chrono::duration<double>(d).count(); }

/// Pins the calling thread for the lifetime of the guard, then restores its affinity.
class pin_guard {
public:
    explicit pin_guard(int cpu) {
        CPU_ZERO(&old_);
        saved_ = pthread_getaffinity_np(pthread_self(), sizeof old_, &old_) == 0;
        ok_ = pin_current_thread(cpu);
    }
    ~pin_guard() {
        if (saved_) pthread_setaffinity_np(pthread_self(), sizeof old_, &old_);
    }
    bool ok() const { return ok_; }

private:
    cpu_set_t old_;
    bool saved_ = false, ok_ = false;
};

void say(const harness_options& o, const std::string& s);
int reps_or(const harness_options& o, int quick, int full);

/// Runs `once` until its per-repetition CV is under the threshold or the retry budget is spent; keeps the
/// attempt with the lowest CV and flags it when even that one is noisy.
template <class F>
measurement with_retries(const harness_options& o, F once) {
    auto start = clk::now();
    measurement best = once();
    int attempts = 1;
    while (best.reps.cv > o.cv_threshold) {
        double spent = secs(clk::now() - start);
        double per = spent / attempts;
        if (spent + per > o.retry_budget_s) break;
        say(o, fmt::format("{}: CV {:.1f} % above {:.0f} %, repeating", best.name, 100 * best.reps.cv,
                           100 * o.cv_threshold));
        measurement again = once();
        ++attempts;
        if (again.reps.cv < best.reps.cv) best = std::move(again);
    }
    best.attempts = attempts;
    if (best.reps.cv > o.cv_threshold) {
        best.flagged = true;
        best.warning = fmt::format("noisy: CV {:.1f} % above the {:.0f} % threshold after {} attempt(s)",
                                   100 * best.reps.cv, 100 * o.cv_threshold, attempts);
    }
    return best;
}

/// A measurement of `obs` (value: their median) with one value per repetition in `per_rep`.
measurement make(std::string name, std::string harness, const std::vector<double>& obs,
                 const std::vector<double>& per_rep);
/// The first HPU context / APU core of the roles (throws when there is none).
int hpu0(const harness_options& o);
int apu0(const harness_options& o);

/// Repeats a multi-quantity harness while one of its quantities is noisy and the retry budget lasts; keeps the
/// attempt whose noisiest quantity is the least noisy.
template <class R, class F>
R retry_all(const harness_options& o, const char* what, F once, std::vector<measurement> R::*items) {
    auto worst = [&](const R& r) {
        double w = 0;
        for (const auto& m : r.*items) w = std::max(w, m.reps.cv);
        return w;
    };
    auto start = clk::now();
    R best = once(o);
    int attempts = 1;
    while (worst(best) > o.cv_threshold) {
        double spent = secs(clk::now() - start);
        if (spent + spent / attempts > o.retry_budget_s) break;
        say(o, fmt::format("{}: CV {:.1f} % above {:.0f} %, repeating", what, 100 * worst(best), 100 * o.cv_threshold));
        R again = once(o);
        ++attempts;
        if (worst(again) < worst(best)) best = std::move(again);
    }
    for (auto& m : best.*items) {
        m.attempts = attempts;
        if (m.flagged) m.warning += fmt::format(" after {} attempt(s)", attempts);
    }
    return best;
}

}  // namespace mmgp::calib::detail
