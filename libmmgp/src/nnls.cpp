#include "detail/nnls.hpp"

#include <cmath>
#include <limits>

namespace mmgp::detail {

bool nnls_small(const Eigen::MatrixXd& X, const Eigen::VectorXd& y, const std::vector<bool>& usable,
                Eigen::VectorXd& b) {
    const int k = static_cast<int>(X.cols());
    // Columns scaled to unit norm: the rank decisions do not depend on the units of the parameters
    // or the scale of the times; the solution is scaled back.
    Eigen::VectorXd scale = Eigen::VectorXd::Ones(k);
    for (int j = 0; j < k; ++j)
        if (const double nrm = X.col(j).stableNorm(); nrm > 0 && std::isfinite(nrm)) scale(j) = nrm;
    const Eigen::MatrixXd Xn = X * scale.cwiseInverse().asDiagonal();
    double best_rss = std::numeric_limits<double>::infinity();
    b = Eigen::VectorXd::Zero(k);
    for (unsigned mask = 1; mask < (1u << k); ++mask) {
        std::vector<int> cols;
        bool ok = true;
        for (int j = 0; j < k; ++j)
            if ((mask >> j) & 1u) {
                ok = ok && usable[static_cast<std::size_t>(j)];
                cols.push_back(j);
            }
        if (!ok || static_cast<int>(cols.size()) > X.rows()) continue;
        Eigen::MatrixXd Xs(X.rows(), static_cast<Eigen::Index>(cols.size()));
        for (std::size_t c = 0; c < cols.size(); ++c) Xs.col(static_cast<Eigen::Index>(c)) = Xn.col(cols[c]);
        Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(Xs);
        if (qr.rank() < static_cast<Eigen::Index>(cols.size())) continue;
        Eigen::VectorXd s = qr.solve(y);
        if ((s.array() < 0).any()) continue;
        double rss = (Xs * s - y).squaredNorm();
        if (rss < best_rss) {
            best_rss = rss;
            b.setZero();
            for (std::size_t c = 0; c < cols.size(); ++c) b(cols[c]) = s(static_cast<Eigen::Index>(c)) / scale(cols[c]);
        }
    }
    return std::isfinite(best_rss);
}

double t_quantile_975(int dof) noexcept {
    // Student t, 0.975 quantile (standard tables), dof 1..30, then 40, 60, 120, infinity.
    static constexpr double table[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                       2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                       2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
    if (dof < 1) return std::numeric_limits<double>::infinity();
    if (dof <= 30) return table[dof - 1];
    if (dof <= 40) return 2.042 + (2.021 - 2.042) * (dof - 30) / 10.0;
    if (dof <= 60) return 2.021 + (2.000 - 2.021) * (dof - 40) / 20.0;
    if (dof <= 120) return 2.000 + (1.980 - 2.000) * (dof - 60) / 60.0;
    return 1.960;
}

}  // namespace mmgp::detail
