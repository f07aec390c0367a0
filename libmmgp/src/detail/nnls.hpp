// Internal: small least-squares helpers shared by the communication fit and the application fit.
#pragma once

#include <Eigen/Dense>
#include <vector>

namespace mmgp::detail {

/// Non-negative least squares min ||X b - y||, b >= 0, for a few unknowns (<= 8): every support is
/// tried and the best feasible one kept, so the answer is exact. Columns with usable[j] == false
/// stay at 0. Returns false when no support has full rank.
bool nnls_small(const Eigen::MatrixXd& X, const Eigen::VectorXd& y, const std::vector<bool>& usable,
                Eigen::VectorXd& b);

/// Two-sided 97.5 % quantile of Student's t with `dof` degrees of freedom (dof >= 1).
double t_quantile_975(int dof) noexcept;

}  // namespace mmgp::detail
