// run/words.cpp — a time and a configuration for people (words.hpp): the tune's progress lines and result, and
// every output of the mmgp command.
#include "words.hpp"

#include <cmath>

namespace mmgp::run {

std::string human_time(double s) {
    double a = std::fabs(s);
    // Each unit from where its three digits round to 1.00 (999.7 ms is 1.00 s, not "1e+03 ms").
    if (a >= 0.9995 || a == 0.0) return fmt::format("{:.2f} s", s);
    if (a >= 0.9995e-3) return fmt::format("{:.3g} ms", s * 1e3);
    if (a >= 0.9995e-6) return fmt::format("{:.3g} us", s * 1e6);
    return fmt::format("{:.3g} ns", s * 1e9);
}

std::string label(const configuration& c) {
    if (c.share != accelerator_sharing::dedicated) return fmt::format("m={} p={} nodes={} sharing={}", c.m, c.p, c.nodes, to_string(c.share));
    return fmt::format("m={} p={} nodes={}", c.m, c.p, c.nodes);
}

}  // namespace mmgp::run
