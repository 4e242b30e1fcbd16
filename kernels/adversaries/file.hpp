#pragma once
// kind = "file": a fixed loss matrix read from a file (docs/ADVERSARIES.md).
//
// Law: l_t(i) = M[t-1][i] for a (T, d) matrix M with entries in [0, 1] (Geometry::Simplex, experts /
// MAB losses, ALGORITHMS.md §0.2). Deterministic: no draws.
//
// The host reads the file named by `path`, checks its shape (exactly T rows of d values) and range
// ([0, 1], the key's min and max), and passes the values row-major in KeyValues::list with
// list_size = T * d; resolve() copies the pointer. The matrix is one sequence for all instances: the
// host rejects adversary.per_instance = true (kSharedOnly). `data` points to host memory; a device
// backend replaces it with a device copy of the T * d values before launching.
#include <cstdint>

#include "kernels/adversaries/common.hpp"
#include "kernels/core/hd.hpp"
#include "kernels/core/params.hpp"
#include "kernels/core/sets.hpp"

namespace dpr::adversaries {

struct File {
    static constexpr const char* kName = "file";
    static constexpr Geometry kGeometry = Geometry::Simplex;
    static constexpr bool kSharedOnly = true;
    static constexpr KeySpec kKeys[] = {
        {"path", KeyType::Path, "", 0.0, 1.0, nullptr,
         "loss matrix file: T rows of d losses in [0,1] (row t-1 = l_t); one sequence shared by all "
         "instances"},
    };
    static constexpr int kPath = key_index(kKeys, "path");

    struct Params {
        std::uint32_t d;
        std::uint64_t T;
        const double* data; ///< row-major T x d; host memory (device copy on a device backend)
    };

    static Params resolve(const KeyValues& kv, const Problem& pb) {
        return Params{pb.d, pb.T, kv.list[kPath]};
    }

    static bool check(const KeyValues& kv, const Problem& pb, Diagnostic& diag) {
        const unsigned long long want = static_cast<unsigned long long>(pb.d) * pb.T;
        if (kv.list[kPath] == nullptr) return diag.fail("path", "the loss file was not loaded");
        if (kv.list_size[kPath] != want)
            return diag.fail("path", "the loss file holds %llu values; T * d = %llu * %u = %llu expected",
                             static_cast<unsigned long long>(kv.list_size[kPath]),
                             static_cast<unsigned long long>(pb.T), pb.d, want);
        for (unsigned long long k = 0; k < want; ++k) {
            const double v = kv.list[kPath][k];
            if (!(v >= 0.0 && v <= 1.0))
                return diag.fail("path", "loss at row %llu, column %llu is %.17g; losses must lie in [0, 1]",
                                 k / pb.d + 1, k % pb.d + 1, v);
        }
        return true;
    }

    DPR_HD static void fill(const Params& p, const SequenceCtx&, std::uint64_t t, double* out) {
        const double* row = p.data + (t - 1) * p.d;
        for (std::uint32_t i = 0; i < p.d; ++i) out[i] = row[i];
    }
};

} // namespace dpr::adversaries
