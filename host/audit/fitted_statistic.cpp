#include "host/audit/fitted_statistic.hpp"

#include <cmath>
#include <stdexcept>

#include <Eigen/Dense>

namespace dpr::audit {
namespace {

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// The sample's mean and its sum of squared deviations (the scatter matrix, (n - 1) times the covariance).
void moments(const std::vector<double>& x, std::size_t p, Eigen::VectorXd& mean, Eigen::MatrixXd& scatter) {
    const Eigen::Index n = static_cast<Eigen::Index>(x.size() / p);
    const Eigen::Map<const Matrix> X(x.data(), n, static_cast<Eigen::Index>(p));
    mean = X.colwise().mean().transpose();
    const Matrix C = X.rowwise() - mean.transpose();
    scatter = C.transpose() * C;
}

} // namespace

std::vector<double> fisher_direction(const std::vector<double>& a, const std::vector<double>& b, std::size_t p) {
    if (p == 0 || a.size() % p || b.size() % p || a.size() / p < 2 || b.size() / p < 2)
        throw std::invalid_argument("fisher_direction: two samples of at least 2 vectors of p > 0 numbers");
    Eigen::VectorXd ma, mb;
    Eigen::MatrixXd sa, sb;
    moments(a, p, ma, sa);
    moments(b, p, mb, sb);
    const double na = static_cast<double>(a.size() / p), nb = static_cast<double>(b.size() / p);
    Eigen::MatrixXd S = 0.5 * (sa / (na - 1.0) + sb / (nb - 1.0));
    const double ridge = 1e-9 * S.trace() / static_cast<double>(p) + 1e-300;
    S.diagonal().array() += ridge;
    const Eigen::VectorXd w = S.ldlt().solve(ma - mb);
    std::vector<double> out(w.data(), w.data() + w.size());
    bool usable = w.allFinite() && w.cwiseAbs().maxCoeff() > 0.0;
    if (!usable) out.assign(p, 1.0);
    return out;
}

} // namespace dpr::audit
