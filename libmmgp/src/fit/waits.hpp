// The switches an off-load waits for (application.waits_per_offload), the one term only the time-sliced runs of
// several processes show: the count that prices them best. Called by mmgp fit (fit/fit.cpp) and by the tuner's fit
// without a profile (tune/prior.cpp, through mmgp fit's selection). Pure.
#pragma once

#include <functional>

namespace mmgp::detail {

/// best_count's answer when the error does not depend on the count (the same over the whole scan).
inline constexpr double count_not_identified = -2;

/// The count in [0, 1e9] that minimises `squared_error` (a sum of squared log errors; infinite where the model
/// refuses the count): a scan from 0 over half-decades from 1e-3, refined by golden section between the best
/// point's neighbours. Returns -1 when the error is infinite everywhere, count_not_identified when it is the same
/// over the scan (to a relative 1e-12).
double best_count(const std::function<double(double)>& squared_error);

}  // namespace mmgp::detail
