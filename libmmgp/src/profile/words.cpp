// A configuration and a time for people (mmgp/words.hpp): every output of the mmgp command and of a tune's loop.
#include "mmgp/words.hpp"

#include <cmath>
#include <cstdio>

namespace mmgp {

namespace {

// printf's text of one number (the whole of it, however long).
std::string printed(const char* format, double v, const char* unit) {
    const int n = std::snprintf(nullptr, 0, format, v, unit);
    std::string out(static_cast<std::size_t>(n), '\0');
    std::snprintf(out.data(), out.size() + 1, format, v, unit);
    return out;
}

}  // namespace

std::string human_time(double s) {
    double a = std::fabs(s);
    // Each unit from where its three digits round to 1.00 (999.7 ms is 1.00 s, not "1e+03 ms").
    // Past a million seconds in three digits and an exponent (%.2f printed 20 digits of 1e19 s).
    if (a >= 9.995e5) return printed("%.3g %s", s, "s");
    if (a >= 0.9995 || a == 0.0) return printed("%.2f %s", s, "s");
    if (a >= 0.9995e-3) return printed("%.3g %s", s * 1e3, "ms");
    if (a >= 0.9995e-6) return printed("%.3g %s", s * 1e6, "us");
    return printed("%.3g %s", s * 1e9, "ns");
}

std::string label(const configuration& c) {
    std::string out = "m=" + std::to_string(c.m) + " p=" + std::to_string(c.p) + " nodes=" + std::to_string(c.nodes);
    if (c.share != accelerator_sharing::dedicated) out += " sharing=" + std::string(to_string(c.share));
    return out;
}

std::string key_of(const configuration& c) {
    return std::to_string(c.m) + "/" + std::to_string(c.p) + "/" + std::to_string(c.nodes) + "/" + std::string(to_string(c.pol));
}

}  // namespace mmgp
