#pragma once
// Self-concordant barriers for SCRiBLe (AS17 §4.2; docs/spec/as17.md §A5, barriers table): for each decision set K the
// barrier R, its complexity nu, the FTRL step argmin_{x in int K} eta <g, x> + R(x), the eigenpairs of
// the Hessian (the axes of the Dikin ellipsoid the learner explores along), and the slack of a point.
//
//   set      parameters x            R(x)                                  nu     Hessian
//   ball     x in R^n, n = d         -ln(1 - ||x||^2)                       1      2I/s + 4xx^T/s^2, s =
//   1-||x||^2 cube     x in [-1,1]^n, n = d    -sum_i ln(1 - x_i^2)                   2n     diag(1/(1-x_i)^2
//   + 1/(1+x_i)^2) simplex  y in R^n, n = d - 1,    -sum_i ln y_i - ln(1 - sum_i y_i)      n+1 diag(1/y_i^2)
//   + 11^T/x_N^2
//            played (y, x_N = 1 - sum y) in the probability simplex of R^d
//
// How each Hessian is diagonalised (no dense n x n work anywhere, so nothing here is O(n^3)):
//   ball     closed form: x/||x|| with eigenvalue 2/s + 4||x||^2/s^2; the orthogonal complement (the
//            columns 1..n-1 of the Householder reflector that maps e_0 to the radial direction) with
//            eigenvalue 2/s. x = 0: H = 2I, eigenvectors e_k.
//   cube     diagonal: eigenvectors e_k.
//   simplex  diagonal plus rank one, D + c 11^T with D = diag(1/y_i^2), c = 1/x_N^2 > 0. Poles that tie
//            exactly (D_l == D_k, e.g. at the centre) are deflated: the group's Helmert vectors are exact
//            eigenvectors with eigenvalue D_k. Every other eigenvalue is the root of the secular equation
//            1/c + sum_l 1/(D_l - lambda) = 0 between consecutive distinct poles (the last one in
//            (D_max, D_max + c n]); it is solved in a shifted variable tau = lambda - (nearer pole), so
//            that every D_l - lambda is computed with relative accuracy (the Gu-Eisenstat / LAPACK dlaed4
//            device), by safeguarded Newton. The eigenvector is (D - lambda)^{-1} 1, normalised. O(n) work
//            per Newton iteration, and only the ONE eigenpair the learner samples is computed.
//   Why not Eigen's SelfAdjointEigenSolver: under nvcc 13 (Eigen 3.4) its Householder/triangular
//   products are host-only (warning 20011 "calling a __host__ function from a __host__ __device__
//   function"), so it cannot run on the device; JacobiSVD likewise. Eigen is the reference in the tests.
//
// Eigenpair enumeration (the learner draws k uniformly from [0, n)): ball k = 0 radial, k >= 1 tangential;
// cube k = coordinate k; simplex k = coordinate k: the secular root just above D_k if k is the first
// coordinate (in index order) with its value of D, else the Helmert vector of rank r = #{l < k : D_l ==
// D_k} of that tie group. Each is a bijection onto an orthonormal eigenbasis, which is all that the
// unbiasedness of the SCRiBLe estimator needs (sum_k v_k v_k^T = I).
//
// Accurate slacks. The Dikin ellipsoid of radius 1 lies inside K but can come within O(dist^3) of the
// boundary (ball, radial direction), so slacks are never formed as 1 - (something close to 1): the ball
// keeps s = 1 - ||x||^2 from the closed form, the cube keeps 1 - |x_i| per coordinate, the simplex keeps
// x_N = 1 - sum y as its own coordinate (ambient Newton step). slack() is the smallest constraint slack
// b - a^T x: ball 1 - ||x||_2, cube min_i 1 - |x_i|, simplex min(min_i y_i, x_N); negative = outside K.
//
// Everything is DPR_HD, allocation-free and exception-free; arrays are caller-provided (the learner's
// workspace). Dimensions: n = parameters, d = ambient (played point, loss vector).
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/core/hd.hpp"
#include "kernels/core/sets.hpp"
#include "kernels/mechanisms/calibration.hpp"

namespace dpr::learners::barriers {

inline constexpr double kEps = std::numeric_limits<double>::epsilon();

/// Damped Newton settings for FTRL steps without a closed form (docs/spec/as17.md §A5: "damped Newton").
struct NewtonSettings {
    double tol = 1e-12;           ///< stop when the Newton decrement sqrt(grad^T H^{-1} grad) <= tol
    std::uint32_t max_iter = 100; ///< fixed cap
};

// ---- generic damped Newton for argmin_x eta <g, x> + R(x) -------------------------------------------

/// Damped Newton (Nesterov-Nemirovski): with decrement delta, step 1/(1 + delta) while delta > 1/4 (stays
/// in the unit Dikin ellipsoid, hence interior), full steps after (quadratic convergence). Stops at
/// delta <= tol, at the rounding floor (delta < 1e-6 and no longer halving), or after max_iter
/// iterations. A step that would leave K numerically is halved (never happens in exact arithmetic).
/// grad and dir are scratch arrays of n doubles. Returns the number of Newton steps taken.
template <class B>
DPR_HD std::uint32_t newton_ftrl(std::uint32_t n, double eta, const double* g, double* x, double* aux,
                                 const NewtonSettings& ns, double* grad, double* dir) {
    double prev = std::numeric_limits<double>::infinity();
    std::uint32_t it = 0;
    for (; it < ns.max_iter; ++it) {
        const double dec = B::newton_direction(n, eta, g, x, aux, grad, dir);
        if (!(dec > ns.tol)) break; // also stops on NaN
        if (dec < 1e-6 && dec > 0.5 * prev) break;
        prev = dec;
        double alpha = dec > 0.25 ? 1.0 / (1.0 + dec) : 1.0;
        for (int tries = 0; tries < 60 && !B::step_feasible(n, x, aux, dir, alpha); ++tries) alpha *= 0.5;
        B::apply_step(n, x, aux, dir, alpha);
    }
    return it;
}

// ---- ball {||x||_2 <= 1} ---------------------------------------------------------------------------

struct Ball {
    static constexpr Geometry kGeometry = Geometry::Ball;
    static constexpr const char* kSet = "ball";
    static constexpr bool kClosedForm = true;
    DPR_HD static std::uint32_t params(std::uint32_t d) { return d; }
    DPR_HD static double nu(std::uint32_t) { return 1.0; }
    DPR_HD static std::uint64_t aux_size(std::uint32_t) { return 2; } // s = 1 - ||x||^2, r = ||x||
    /// Y = unit l2 ball: ||Y||_1 = sqrt(d); replace-one Delta = 2 sqrt(d) (calibration.hpp).
    static mech::LossSetNorms loss_norms(std::uint32_t d) { return mech::sphere_loss_norms(d); }
    static double x_norm1(std::uint32_t d) { return std::sqrt(static_cast<double>(d)); } // ||X||_1

    DPR_HD static void center(std::uint32_t n, double* x, double* aux) {
        for (std::uint32_t i = 0; i < n; ++i) x[i] = 0.0;
        aux[0] = 1.0;
        aux[1] = 0.0;
    }
    /// Closed form (A5 table): x = -c g, c = (sqrt(1 + eta^2 ||g||^2) - 1)/(eta ||g||^2) = eta/(1 + q),
    /// q = sqrt(1 + a^2), a = eta ||g||; ||x|| = a/(1 + q) and 1 - ||x|| = (1 + 1/(q + a))/(1 + q)
    /// without cancellation.
    DPR_HD static std::uint32_t ftrl(std::uint32_t n, double eta, const double* g, double* x, double* aux,
                                     const NewtonSettings&, double*, double*) {
        double G = 0.0;
        for (std::uint32_t i = 0; i < n; ++i) G += g[i] * g[i];
        const double a = eta * std::sqrt(G);
        if (!(a > 0.0)) {
            center(n, x, aux);
            return 0;
        }
        const double q = std::sqrt(1.0 + a * a);
        const double c = eta / (1.0 + q);
        for (std::uint32_t i = 0; i < n; ++i) x[i] = -c * g[i];
        const double r = a / (1.0 + q);
        const double one_minus_r = (1.0 + 1.0 / (q + a)) / (1.0 + q);
        aux[0] = one_minus_r * (1.0 + r);
        aux[1] = r;
        return 0;
    }
    /// The FTRL step after g changed along eigenvector k only (the learner's update): here a full step.
    DPR_HD static std::uint32_t ftrl_along(std::uint32_t n, double eta, const double* g, double* x,
                                           double* aux, std::uint32_t, const NewtonSettings& ns, double* s1,
                                           double* s2) {
        return ftrl(n, eta, g, x, aux, ns, s1, s2);
    }
    DPR_HD static double slack(std::uint32_t, const double*, const double* aux) {
        return aux[0] / (1.0 + aux[1]); // 1 - r = s / (1 + r)
    }
    /// Eigenpair k of the Hessian at x: writes the unit eigenvector into v[0..n), returns the eigenvalue.
    DPR_HD static double eigenpair(std::uint32_t n, const double* x, const double* aux, std::uint32_t k,
                                   double* v) {
        const double s = aux[0], r = aux[1];
        if (!(r > 0.0)) {
            for (std::uint32_t i = 0; i < n; ++i) v[i] = i == k ? 1.0 : 0.0;
            return 2.0 / s;
        }
        if (k == 0) {
            for (std::uint32_t i = 0; i < n; ++i) v[i] = x[i] / r;
            return 2.0 / s + 4.0 * r * r / (s * s);
        }
        // Householder P = I - 2 w w^T / (w^T w), w = u + sign(u_0) e_0 (u = x/r): P e_0 = -sign(u_0) u, so
        // P e_k (k >= 1) is a unit vector orthogonal to u; over k = 1..n-1 an orthonormal basis of u^perp.
        const double u0 = x[0] / r;
        const double w0 = u0 + (u0 >= 0.0 ? 1.0 : -1.0);
        const double wk = x[k] / r;
        const double ww = 2.0 * (1.0 + std::fabs(u0)); // ||u||^2 + 2|u_0| + 1
        const double f = 2.0 * wk / ww;
        for (std::uint32_t i = 0; i < n; ++i) v[i] = -f * (i == 0 ? w0 : x[i] / r);
        v[k] += 1.0;
        return 2.0 / s;
    }
    /// Played point y = x + step v (ambient = parameters); returns its slack 1 - ||y||_2 computed from
    /// 1 - ||y||^2 = s - step (2 <x, v> + step <v, v>).
    DPR_HD static double play(std::uint32_t n, const double* x, const double* aux, const double* v,
                              double step, double* y) {
        double xv = 0.0, vv = 0.0;
        for (std::uint32_t i = 0; i < n; ++i) {
            y[i] = x[i] + step * v[i];
            xv += x[i] * v[i];
            vv += v[i] * v[i];
        }
        const double q = aux[0] - step * (2.0 * xv + step * vv);
        const double norm_y = std::sqrt(q < 1.0 ? 1.0 - q : 0.0);
        return q / (1.0 + norm_y);
    }
    // Generic Newton interface (tests compare it with the closed form).
    DPR_HD static double newton_direction(std::uint32_t n, double eta, const double* g, const double* x,
                                          const double* aux, double* grad, double* dir) {
        // grad = eta g + 2x/s;  H = a I + b x x^T, a = 2/s, b = 4/s^2;
        // H^{-1} z = (z - b x (x^T z)/(a + b ||x||^2)) / a.
        const double s = aux[0];
        double xg = 0.0, xx = 0.0;
        for (std::uint32_t i = 0; i < n; ++i) {
            grad[i] = eta * g[i] + 2.0 * x[i] / s;
            xg += x[i] * grad[i];
            xx += x[i] * x[i];
        }
        const double a = 2.0 / s, b = 4.0 / (s * s);
        const double f = b * xg / (a + b * xx);
        double dec2 = 0.0;
        for (std::uint32_t i = 0; i < n; ++i) {
            dir[i] = -(grad[i] - f * x[i]) / a;
            dec2 -= grad[i] * dir[i];
        }
        return std::sqrt(dec2 > 0.0 ? dec2 : 0.0);
    }
    DPR_HD static bool step_feasible(std::uint32_t n, const double* x, const double*, const double* dir,
                                     double alpha) {
        double q = 0.0;
        for (std::uint32_t i = 0; i < n; ++i) q += (x[i] + alpha * dir[i]) * (x[i] + alpha * dir[i]);
        return q < 1.0;
    }
    DPR_HD static void apply_step(std::uint32_t n, double* x, double* aux, const double* dir, double alpha) {
        double q = 0.0;
        for (std::uint32_t i = 0; i < n; ++i) {
            x[i] += alpha * dir[i];
            q += x[i] * x[i];
        }
        aux[0] = 1.0 - q;
        aux[1] = std::sqrt(q);
    }
    /// Sets x (inside K) and its slack state, for tests.
    DPR_HD static void set_point(std::uint32_t n, const double* src, double* x, double* aux) {
        for (std::uint32_t i = 0; i < n; ++i) x[i] = src[i];
        apply_step(n, x, aux, src, 0.0);
    }
    /// Gradient and Hessian of R at x (tests; Hessian dense, row-major n x n).
    DPR_HD static void hessian(std::uint32_t n, const double* x, const double* aux, double* H) {
        const double s = aux[0];
        for (std::uint32_t i = 0; i < n; ++i)
            for (std::uint32_t j = 0; j < n; ++j)
                H[i * n + j] = (i == j ? 2.0 / s : 0.0) + 4.0 * x[i] * x[j] / (s * s);
    }
};

// ---- cube [-1,1]^n -------------------------------------------------------------------------------------

struct Cube {
    static constexpr Geometry kGeometry = Geometry::Cube;
    static constexpr const char* kSet = "cube";
    static constexpr bool kClosedForm = true;
    DPR_HD static std::uint32_t params(std::uint32_t d) { return d; }
    DPR_HD static double nu(std::uint32_t n) { return 2.0 * static_cast<double>(n); }
    DPR_HD static std::uint64_t aux_size(std::uint32_t n) { return n; } // 1 - |x_i|
    /// Y = unit l1 ball: ||Y||_1 = 1; replace-one Delta = 2 (calibration.hpp).
    static mech::LossSetNorms loss_norms(std::uint32_t) { return mech::cube_loss_norms(); }
    static double x_norm1(std::uint32_t d) { return static_cast<double>(d); } // ||X||_1

    DPR_HD static void center(std::uint32_t n, double* x, double* aux) {
        for (std::uint32_t i = 0; i < n; ++i) {
            x[i] = 0.0;
            aux[i] = 1.0;
        }
    }
    /// Closed form (A5 table) per coordinate: x_i = (1 - sqrt(1 + a^2))/a = -a/(1 + q), a = eta g_i,
    /// q = sqrt(1 + a^2); 1 - |x_i| = (1 + 1/(q + |a|))/(1 + q) without cancellation.
    DPR_HD static void ftrl_coordinate(double eta, double gi, double& xi, double& sli) {
        const double a = eta * gi;
        const double q = std::sqrt(1.0 + a * a);
        xi = -a / (1.0 + q);
        sli = (1.0 + 1.0 / (q + std::fabs(a))) / (1.0 + q);
    }
    DPR_HD static std::uint32_t ftrl(std::uint32_t n, double eta, const double* g, double* x, double* aux,
                                     const NewtonSettings&, double*, double*) {
        for (std::uint32_t i = 0; i < n; ++i) ftrl_coordinate(eta, g[i], x[i], aux[i]);
        return 0;
    }
    /// After g changed along e_k only, only coordinate k moves: O(1), bitwise equal to the full step
    /// (every other coordinate would be recomputed from the same g_j).
    DPR_HD static std::uint32_t ftrl_along(std::uint32_t, double eta, const double* g, double* x, double* aux,
                                           std::uint32_t k, const NewtonSettings&, double*, double*) {
        ftrl_coordinate(eta, g[k], x[k], aux[k]);
        return 0;
    }
    DPR_HD static double slack(std::uint32_t n, const double*, const double* aux) {
        double m = aux[0];
        for (std::uint32_t i = 1; i < n; ++i) m = aux[i] < m ? aux[i] : m;
        return m;
    }
    DPR_HD static double hess_diag(double sl) { // 1/(1-|x|)^2 + 1/(1+|x|)^2 with sl = 1 - |x|
        const double o = 2.0 - sl;
        return 1.0 / (sl * sl) + 1.0 / (o * o);
    }
    DPR_HD static double eigenpair(std::uint32_t n, const double*, const double* aux, std::uint32_t k,
                                   double* v) {
        for (std::uint32_t i = 0; i < n; ++i) v[i] = i == k ? 1.0 : 0.0;
        return hess_diag(aux[k]);
    }
    /// y = x + step v. v = e_k for the learner's eigenpairs; the slack of coordinate k is formed from the
    /// stored 1 - |x_k| whenever y_k stays on the side of x_k (no cancellation); a general v (tests) falls
    /// back to 1 - |y_i|.
    DPR_HD static double play(std::uint32_t n, const double* x, const double* aux, const double* v,
                              double step, double* y) {
        double m = std::numeric_limits<double>::infinity();
        for (std::uint32_t i = 0; i < n; ++i) {
            const double dv = step * v[i];
            y[i] = x[i] + dv;
            double sl;
            if (dv == 0.0)
                sl = aux[i];
            else if (y[i] >= 0.0)
                sl = x[i] >= 0.0 ? aux[i] - dv : 1.0 - y[i];
            else
                sl = x[i] < 0.0 ? aux[i] + dv : 1.0 + y[i];
            m = sl < m ? sl : m;
        }
        return m;
    }
    DPR_HD static double newton_direction(std::uint32_t n, double eta, const double* g, const double* x,
                                          const double* aux, double* grad, double* dir) {
        double dec2 = 0.0;
        for (std::uint32_t i = 0; i < n; ++i) {
            const double sl = aux[i];
            grad[i] = eta * g[i] + 2.0 * x[i] / (sl * (2.0 - sl)); // 2x/(1 - x^2)
            dir[i] = -grad[i] / hess_diag(sl);
            dec2 -= grad[i] * dir[i];
        }
        return std::sqrt(dec2 > 0.0 ? dec2 : 0.0);
    }
    DPR_HD static bool step_feasible(std::uint32_t n, const double* x, const double*, const double* dir,
                                     double alpha) {
        for (std::uint32_t i = 0; i < n; ++i)
            if (!(std::fabs(x[i] + alpha * dir[i]) < 1.0)) return false;
        return true;
    }
    DPR_HD static void apply_step(std::uint32_t n, double* x, double* aux, const double* dir, double alpha) {
        for (std::uint32_t i = 0; i < n; ++i) {
            x[i] += alpha * dir[i];
            aux[i] = 1.0 - std::fabs(x[i]);
        }
    }
    DPR_HD static void set_point(std::uint32_t n, const double* src, double* x, double* aux) {
        for (std::uint32_t i = 0; i < n; ++i) {
            x[i] = src[i];
            aux[i] = 1.0 - std::fabs(src[i]);
        }
    }
    DPR_HD static void hessian(std::uint32_t n, const double*, const double* aux, double* H) {
        for (std::uint32_t i = 0; i < n; ++i)
            for (std::uint32_t j = 0; j < n; ++j) H[i * n + j] = i == j ? hess_diag(aux[i]) : 0.0;
    }
};

// ---- probability simplex of R^d, parametrised by its first n = d - 1 coordinates ------------------------

struct Simplex {
    static constexpr Geometry kGeometry = Geometry::Simplex;
    static constexpr const char* kSet = "simplex";
    static constexpr bool kClosedForm = false;
    DPR_HD static std::uint32_t params(std::uint32_t d) { return d - 1; }
    DPR_HD static double nu(std::uint32_t n) { return static_cast<double>(n) + 1.0; }
    DPR_HD static std::uint64_t aux_size(std::uint32_t) { return 1; } // x_N = 1 - sum y
    /// Y = [0,1]^d: ||Y||_1 = d; Delta = d (X in the non-negative orthant; AS17 Lemma 4.2, docs/spec/as17.md §A3).
    static mech::LossSetNorms loss_norms(std::uint32_t d) { return mech::experts_loss_norms(d); }
    static double x_norm1(std::uint32_t) { return 1.0; }

    DPR_HD static void center(std::uint32_t n, double* x, double* aux) {
        const double c = 1.0 / (static_cast<double>(n) + 1.0);
        for (std::uint32_t i = 0; i < n; ++i) x[i] = c;
        aux[0] = c;
    }
    /// No closed form: damped Newton warm-started at the current point (A5 table, "Newton").
    DPR_HD static std::uint32_t ftrl(std::uint32_t n, double eta, const double* g, double* x, double* aux,
                                     const NewtonSettings& ns, double* grad, double* dir) {
        return newton_ftrl<Simplex>(n, eta, g, x, aux, ns, grad, dir);
    }
    DPR_HD static std::uint32_t ftrl_along(std::uint32_t n, double eta, const double* g, double* x,
                                           double* aux, std::uint32_t, const NewtonSettings& ns, double* grad,
                                           double* dir) {
        return ftrl(n, eta, g, x, aux, ns, grad, dir);
    }
    DPR_HD static double slack(std::uint32_t n, const double* x, const double* aux) {
        double m = aux[0];
        for (std::uint32_t i = 0; i < n; ++i) m = x[i] < m ? x[i] : m;
        return m;
    }

    /// Eigenpair k of H = D + c 11^T, D_l = 1/y_l^2, c = 1/x_N^2 (see the header comment).
    DPR_HD static double eigenpair(std::uint32_t n, const double* x, const double* aux, std::uint32_t k,
                                   double* v) {
        const double dk = 1.0 / (x[k] * x[k]);
        std::uint32_t rank = 0; // tied poles before k
        bool has_next = false;
        double dnext = 0.0; // smallest pole above dk
        for (std::uint32_t l = 0; l < n; ++l) {
            const double dl = 1.0 / (x[l] * x[l]);
            if (dl == dk && l < k) ++rank;
            if (dl > dk && (!has_next || dl < dnext)) {
                dnext = dl;
                has_next = true;
            }
        }
        if (rank > 0) { // Helmert vector of the tie group: exact eigenvector, eigenvalue dk
            const double r = static_cast<double>(rank);
            const double a = 1.0 / std::sqrt(r * (r + 1.0));
            std::uint32_t seen = 0;
            for (std::uint32_t l = 0; l < n; ++l) {
                const double dl = 1.0 / (x[l] * x[l]);
                v[l] = 0.0;
                if (dl == dk && seen < rank && l != k) {
                    v[l] = a;
                    ++seen;
                }
            }
            v[k] = -r * a;
            return dk;
        }
        const double inv_c = aux[0] * aux[0];
        // Bracket the root in tau = lambda - origin; origin = the nearer pole (decided at the midpoint).
        double origin = dk, lo = 0.0, hi;
        if (has_next) {
            const double gap = dnext - dk;
            for (std::uint32_t l = 0; l < n; ++l) v[l] = 1.0 / (x[l] * x[l]) - dk;
            hi = 0.5 * gap;
            if (secular(n, v, inv_c, hi) < 0.0) { // root in (gap/2, gap): measure from the upper pole
                origin = dnext;
                for (std::uint32_t l = 0; l < n; ++l) v[l] = 1.0 / (x[l] * x[l]) - dnext;
                lo = -0.5 * gap;
                hi = 0.0;
            }
        } else {
            for (std::uint32_t l = 0; l < n; ++l) v[l] = 1.0 / (x[l] * x[l]) - dk;
            hi = static_cast<double>(n) / inv_c; // f(c n) >= 0 (interlacing bound)
        }
        const double tau = secular_root(n, v, inv_c, lo, hi);
        double nrm = 0.0;
        for (std::uint32_t l = 0; l < n; ++l) {
            v[l] = 1.0 / (v[l] - tau);
            nrm += v[l] * v[l];
        }
        nrm = 1.0 / std::sqrt(nrm);
        for (std::uint32_t l = 0; l < n; ++l) v[l] *= nrm;
        return origin + tau;
    }
    /// f(tau) = 1/c + sum_l 1/(a_l - tau), a_l = D_l - origin (increasing in tau between poles).
    DPR_HD static double secular(std::uint32_t n, const double* a, double inv_c, double tau) {
        double f = inv_c;
        for (std::uint32_t l = 0; l < n; ++l) f += 1.0 / (a[l] - tau);
        return f;
    }
    /// Root of f in (lo, hi] (a pole sits at whichever end is 0, where f = -inf or +inf): safeguarded
    /// Newton from the one-pole approximation, bisecting (geometrically across decades) when Newton
    /// leaves the bracket. Stops at relative change <= 4 eps or after 200 iterations.
    DPR_HD static double secular_root(std::uint32_t n, const double* a, double inv_c, double lo, double hi) {
        // One-pole start: f ~ m/(-tau) + K with m poles at the origin and K the rest at tau = 0.
        double m = 0.0, K = inv_c;
        for (std::uint32_t l = 0; l < n; ++l) {
            if (a[l] == 0.0)
                m += 1.0;
            else
                K += 1.0 / a[l];
        }
        double tau = K != 0.0 ? m / K : 0.5 * (lo + hi);
        if (!(tau > lo && tau < hi)) tau = 0.5 * (lo + hi);
        if (hi > 0.0 && lo == 0.0 && secular(n, a, inv_c, hi) <= 0.0) return hi; // all poles tied: tau = c n
        for (int it = 0; it < 200; ++it) {
            double f = inv_c, fp = 0.0;
            for (std::uint32_t l = 0; l < n; ++l) {
                const double r = 1.0 / (a[l] - tau);
                f += r;
                fp += r * r;
            }
            if (f == 0.0) return tau;
            if (f < 0.0)
                lo = tau;
            else
                hi = tau;
            double next = tau - f / fp;
            if (!(next > lo && next < hi)) {
                const double alo = std::fabs(lo), ahi = std::fabs(hi);
                const bool same_side = (lo > 0.0 && hi > 0.0) || (lo < 0.0 && hi < 0.0);
                if (same_side && (ahi > 8.0 * alo || alo > 8.0 * ahi))
                    next = (lo > 0.0 ? 1.0 : -1.0) * std::sqrt(alo * ahi);
                else
                    next = 0.5 * (lo + hi);
            }
            const bool done =
                std::fabs(next - tau) <= 4.0 * kEps * std::fabs(next) || next == lo || next == hi;
            tau = next;
            if (done) break;
        }
        return tau;
    }

    /// y = x + step v in parameters; ambient y_N = x_N - step sum v. Returns min(min_i y_i, y_N).
    DPR_HD static double play(std::uint32_t n, const double* x, const double* aux, const double* v,
                              double step, double* y) {
        double sv = 0.0, m = std::numeric_limits<double>::infinity();
        for (std::uint32_t i = 0; i < n; ++i) {
            y[i] = x[i] + step * v[i];
            sv += v[i];
            m = y[i] < m ? y[i] : m;
        }
        y[n] = aux[0] - step * sv;
        return y[n] < m ? y[n] : m;
    }
    /// grad = eta g - 1/y + (1/x_N) 1; H^{-1} z = w - y^2 (1^T w)/(x_N^2 + ||y||^2), w = y^2 z
    /// (Sherman-Morrison).
    DPR_HD static double newton_direction(std::uint32_t n, double eta, const double* g, const double* x,
                                          const double* aux, double* grad, double* dir) {
        const double xn = aux[0];
        double sw = 0.0, yy = 0.0;
        for (std::uint32_t i = 0; i < n; ++i) {
            grad[i] = eta * g[i] - 1.0 / x[i] + 1.0 / xn;
            const double y2 = x[i] * x[i];
            sw += y2 * grad[i];
            yy += y2;
        }
        const double f = sw / (xn * xn + yy);
        double dec2 = 0.0;
        for (std::uint32_t i = 0; i < n; ++i) {
            const double y2 = x[i] * x[i];
            dir[i] = -(y2 * grad[i] - y2 * f);
            dec2 -= grad[i] * dir[i];
        }
        return std::sqrt(dec2 > 0.0 ? dec2 : 0.0);
    }
    DPR_HD static bool step_feasible(std::uint32_t n, const double* x, const double* aux, const double* dir,
                                     double alpha) {
        double sd = 0.0;
        for (std::uint32_t i = 0; i < n; ++i) {
            if (!(x[i] + alpha * dir[i] > 0.0)) return false;
            sd += dir[i];
        }
        return aux[0] - alpha * sd > 0.0;
    }
    DPR_HD static void apply_step(std::uint32_t n, double* x, double* aux, const double* dir, double alpha) {
        double sd = 0.0;
        for (std::uint32_t i = 0; i < n; ++i) {
            x[i] += alpha * dir[i];
            sd += dir[i];
        }
        aux[0] -= alpha * sd;
    }
    DPR_HD static void set_point(std::uint32_t n, const double* src, double* x, double* aux) {
        double s = 0.0;
        for (std::uint32_t i = 0; i < n; ++i) {
            x[i] = src[i];
            s += src[i];
        }
        aux[0] = 1.0 - s;
    }
    DPR_HD static void hessian(std::uint32_t n, const double* x, const double* aux, double* H) {
        const double c = 1.0 / (aux[0] * aux[0]);
        for (std::uint32_t i = 0; i < n; ++i)
            for (std::uint32_t j = 0; j < n; ++j) H[i * n + j] = (i == j ? 1.0 / (x[i] * x[i]) : 0.0) + c;
    }
};

} // namespace dpr::learners::barriers
