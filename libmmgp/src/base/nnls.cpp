// Non-negative least squares for a few unknowns (base/nnls.hpp): called by the communication fit and the
// application fit; calls Eigen only.
#include "base/nnls.hpp"

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

}  // namespace mmgp::detail
