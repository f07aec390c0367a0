// The synthetic workload of the off-load runtime (config::synthetic): a fake program of known host, split and
// serial busy-waits, timed by itself as the ground truth for the runtime's timers.
#include "runtime_internal.hpp"

namespace mmgp::kernels::detail {

namespace {

// Busy-waits `seconds` of wall time; returns the time it actually took. Throws aborted once *stop is set.
double busy_wait(double seconds, const std::atomic<bool>* stop) {
    const double start = now(), end = start + seconds;
    double t = start;
    while (t < end) {
        if (stop && stop->load(std::memory_order_relaxed)) throw aborted{};
        calib::cpu_relax();
        t = now();
    }
    return t - start;
}

}  // namespace

void synthetic_slice::setup(const request&) { serial += busy_wait(s_.serial_s, stop_); }

void synthetic_slice::setup_copy(const apu_slice&, const request&) {}  // the serial work is per APU, not per chunk

void synthetic_slice::compute(const request&, reply& out) {
    split += busy_wait(s_.split_s / p_, stop_);
    out.v[0] = 1.0;
}

double synthetic_host::run_unit(int, offloader& off) {
    double sum = 0;
    request rq;
    rq.kind = k_synthetic;
    for (int i = 0; i < s_.offloads; ++i) {
        host += busy_wait(s_.host_s, stop_);
        sum += off.offload(rq).v[0];
    }
    return sum;
}

}  // namespace mmgp::kernels::detail
