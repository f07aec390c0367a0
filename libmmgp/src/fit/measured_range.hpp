// The range of a measured run time the readers accept (fit's runs, validate's cases): from a nanosecond, below
// what a wall clock resolves, to 10^9 s (31 years), the journal's bound on a run. A time outside it is a typo or a
// unit error, and inside the model's arithmetic it overflows the relative errors and the design (docs/BAD_INPUT.md).
#pragma once

namespace mmgp::detail {

inline constexpr double min_measured_s = 1e-9;
inline constexpr double max_measured_s = 1e9;
inline constexpr const char* measured_range_text = "a time in [1e-09, 1e+09] seconds";

inline bool measured_in_range(double t) noexcept { return t >= min_measured_s && t <= max_measured_s; }

}  // namespace mmgp::detail
