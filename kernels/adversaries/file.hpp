#pragma once
// kind = "file", "file-ball", "file-cube": a fixed loss matrix read from a file (docs/ADVERSARIES.md),
// one kind per loss set (kernels/core/sets.hpp), so that every learner can run on a user's sequence:
//
//   kind         loss set Y (= the learner's)                    every row l_t must satisfy
//   file         simplex: experts, MAB, scrible-simplex         0 <= l_t(i) <= 1 for every i
//   file-ball    unit l2 ball: ftrl-l2-ball, dp-ftrl-sphere, ... ||l_t||_2 <= 1
//   file-cube    unit l1 ball: the cube [-1,1]^d learners        ||l_t||_1 <= 1
//
// Law: l_t(i) = M[t-1][i] for a (T, d) matrix M. Deterministic: no draws.
//
// The host reads the file named by `path` (host/engine/loss_file.hpp), checks its shape (exactly T
// rows of d values) and every row against the loss set (errors name the row, and the column or the
// norm), and passes the values row-major in KeyValues::list with list_size = T * d; resolve() copies
// the pointer; check() verifies the shape and the rows again. A norm may exceed 1 by kNormSlack, the
// rounding of a row normalised in floating point (x / ||x||) and written with 17 digits. The matrix is
// one sequence for all instances: the host rejects adversary.per_instance = true (kSharedOnly). `data`
// points to host memory; a device backend replaces it with a device copy of the T * d values before
// launching.
#include <cstdio>
#include <cstdlib>

#include "kernels/adversaries/common.hpp"

namespace dpr::adversaries {

/// How far above 1 a row norm of a file-ball / file-cube loss file may be: rounding, not a violation.
inline constexpr double kNormSlack = 1e-12;

/// ||row||_2 (Ball) or ||row||_1 (Cube) without overflow or underflow (scaled by max |x_i|) and with
/// a compensated sum, so the result is accurate to a few ulp for any d; NaN if an entry is NaN, inf if
/// one is infinite.
DPR_HD inline double loss_row_norm(Geometry g, const double* row, std::uint32_t d) {
    double scale = 0.0;
    for (std::uint32_t i = 0; i < d; ++i) {
        const double a = std::fabs(row[i]);
        if (!(a <= scale)) scale = a; // NaN propagates: a NaN entry makes scale NaN
        if (std::isnan(a)) return a;
    }
    if (scale == 0.0 || std::isinf(scale)) return scale;
    double sum = 0.0, comp = 0.0; // Neumaier summation
    for (std::uint32_t i = 0; i < d; ++i) {
        const double a = std::fabs(row[i]) / scale;
        const double x = g == Geometry::Ball ? a * a : a;
        const double s = sum + x;
        comp += std::fabs(sum) >= std::fabs(x) ? (sum - s) + x : (x - s) + sum;
        sum = s;
    }
    sum += comp;
    return scale * (g == Geometry::Ball ? std::sqrt(sum) : sum);
}

/// `v` in the shortest %g form that reads back exactly (host only: for check() messages).
struct ShortestText {
    char text[32];
    explicit ShortestText(double v) {
        for (int precision = 1; precision <= 17; ++precision) {
            std::snprintf(text, sizeof text, "%.*g", precision, v);
            if (std::strtod(text, nullptr) == v || std::isnan(v)) break;
        }
    }
};

/// The name, entry range and description of the file adversary of each geometry.
template <Geometry G>
struct FileKind {
    static constexpr const char* kName = G == Geometry::Simplex ? "file"
                                         : G == Geometry::Ball  ? "file-ball"
                                                                : "file-cube";
    static constexpr double kMin = G == Geometry::Simplex ? 0.0 : -1.0, kMax = 1.0;
    static constexpr const char* kDoc =
        G == Geometry::Simplex ? "loss matrix file: T rows of d losses in [0,1] (row t-1 = l_t); one "
                                 "sequence shared by all instances"
        : G == Geometry::Ball
            ? "loss matrix file: T rows l_t in R^d with ||l_t||_2 <= 1 (row t-1 = l_t); one "
              "sequence shared by all instances"
            : "loss matrix file: T rows l_t in R^d with ||l_t||_1 <= 1 (row t-1 = l_t); one "
              "sequence shared by all instances";
};

template <Geometry G>
struct FileLosses {
    static constexpr const char* kName = FileKind<G>::kName;
    static constexpr Geometry kGeometry = G;
    static constexpr bool kSharedOnly = true;
    /// min/max: the range of one entry (the norm bound of a row is checked by check()).
    static constexpr KeySpec kKeys[] = {
        {"path", KeyType::Path, "", FileKind<G>::kMin, FileKind<G>::kMax, nullptr, FileKind<G>::kDoc},
    };
    static constexpr int kPath = key_index(kKeys, "path");

    struct Params : Dims {
        const double* data; ///< row-major T x d; host memory (device copy on a device backend)
    };

    static Params resolve(const KeyValues& kv, const Problem& pb) { return Params{dims(pb), kv.list[kPath]}; }

    static bool check(const KeyValues& kv, const Problem& pb, Diagnostic& diag) {
        const unsigned long long want = static_cast<unsigned long long>(pb.d) * pb.T;
        if (kv.list[kPath] == nullptr) return diag.fail("path", "the loss file was not loaded");
        if (kv.list_size[kPath] != want)
            return diag.fail("path", "the loss file holds %llu values; T * d = %llu * %u = %llu expected",
                             static_cast<unsigned long long>(kv.list_size[kPath]),
                             static_cast<unsigned long long>(pb.T), pb.d, want);
        for (unsigned long long t = 0; t < pb.T; ++t) {
            const double* row = kv.list[kPath] + t * pb.d;
            if constexpr (G == Geometry::Simplex) {
                for (std::uint32_t i = 0; i < pb.d; ++i)
                    if (!(row[i] >= 0.0 && row[i] <= 1.0))
                        return diag.fail("path", "loss at row %llu, column %u is %s; losses must lie in [0, 1]",
                                         t + 1, i + 1, ShortestText(row[i]).text);
            } else {
                const double norm = loss_row_norm(G, row, pb.d);
                if (!(norm <= 1.0 + kNormSlack))
                    return diag.fail("path", "row %llu has ||l||_%d = %s; rows must lie in the unit l%d ball",
                                     t + 1, G == Geometry::Ball ? 2 : 1, ShortestText(norm).text,
                                     G == Geometry::Ball ? 2 : 1);
            }
        }
        return true;
    }

    DPR_HD static void fill(const Params& p, const SequenceCtx&, std::uint64_t t, double* out) {
        const double* row = p.data + (t - 1) * p.d;
        for (std::uint32_t i = 0; i < p.d; ++i) out[i] = row[i];
    }
};

using File = FileLosses<Geometry::Simplex>;
using FileBall = FileLosses<Geometry::Ball>;
using FileCube = FileLosses<Geometry::Cube>;

} // namespace dpr::adversaries
