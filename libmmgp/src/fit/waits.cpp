// The count that prices the time-sliced runs of several processes best (fit/waits.hpp), for mmgp fit (fit/fit.cpp).
#include "fit/waits.hpp"

#include <cmath>
#include <vector>

namespace mmgp::detail {

double best_count(const std::function<double(double)>& squared_error) {
    std::vector<double> grid = {0.0};
    for (int k = 0; k <= 24; ++k) grid.push_back(1e-3 * std::pow(10.0, k / 2.0));  // 1e-3 .. 1e9
    std::vector<double> e(grid.size());
    std::size_t best = 0, worst = 0;
    for (std::size_t i = 0; i < grid.size(); ++i) {
        e[i] = squared_error(grid[i]);
        if (e[i] < e[best]) best = i;
        if (!(e[i] <= e[worst])) worst = i;
    }
    if (!std::isfinite(e[best])) return -1;
    if (e[worst] - e[best] <= 1e-12 * std::max(e[best], 1e-300)) return count_not_identified;
    // The error of one count is a sum of squares of a time that rises with it: one minimum between the best
    // point's neighbours on the scan, found by golden section.
    double lo = grid[best > 0 ? best - 1 : 0], hi = grid[std::min(best + 1, grid.size() - 1)];
    const double phi = (std::sqrt(5.0) - 1) / 2;
    double x1 = hi - phi * (hi - lo), x2 = lo + phi * (hi - lo);
    double f1 = squared_error(x1), f2 = squared_error(x2);
    for (int it = 0; it < 80 && hi - lo > 1e-10 * std::max(1.0, hi); ++it) {
        if (f1 <= f2) {
            hi = x2, x2 = x1, f2 = f1;
            x1 = hi - phi * (hi - lo), f1 = squared_error(x1);
        } else {
            lo = x1, x1 = x2, f1 = f2;
            x2 = lo + phi * (hi - lo), f2 = squared_error(x2);
        }
    }
    const double refined = f1 <= f2 ? x1 : x2;
    return std::min(f1, f2) <= e[best] ? refined : grid[best];
}

}  // namespace mmgp::detail
