// Internal: non-negative least squares for a few unknowns, shared by the communication fit and the application
// fit (the application fit's t quantile is in mmgp/statistics.hpp).
#pragma once

#include <Eigen/Dense>
#include <vector>

namespace mmgp::detail {

/// Non-negative least squares min ||X b - y||, b >= 0, for a few unknowns (<= 8): every support is
/// tried and the best feasible one kept, so the answer is exact. Columns with usable[j] == false
/// stay at 0. Returns false when no support has full rank.
bool nnls_small(const Eigen::MatrixXd& X, const Eigen::VectorXd& y, const std::vector<bool>& usable,
                Eigen::VectorXd& b);

}  // namespace mmgp::detail
