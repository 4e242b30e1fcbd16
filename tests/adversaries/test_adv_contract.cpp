// The adversary contract (kernels/adversaries/common.hpp), checked for every entry of
// AllAdversaries: well-formed names and keys, POD params, defaults that pass check(), fill() a pure
// function of (params, ctx, t) that writes exactly its row width (d, or d + 1 for the linear-model loss
// families of kernels/core/sets.hpp) of values inside the declared loss set, and a loss
// sequence that depends on the context (shared vs per-instance, seed, stream) for every randomised
// adversary.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "adversaries/adv_test_util.hpp"
#include "kernels/adversaries/registry.hpp"

using namespace dpr;
using namespace dpr::adversaries;
using advtest::ctx;

namespace {

constexpr std::uint32_t kD = 64;
constexpr std::uint64_t kT = 64;
const Problem kProblem{kD, kT, 1};

/// Default KeyValues as the host would build them with nothing configured, plus what is required:
/// a path key gets a T x d matrix inside the kind's loss set (kept in `storage`), a required real key
/// gets 1.0.
template <class A>
KeyValues default_keys(std::vector<double>& storage) {
    KeyValues kv;
    int i = 0;
    for (const KeySpec& k : A::kKeys) {
        if (k.type == KeyType::Path) {
            storage.resize(kD * kT);
            // Entries in [0, 1] (simplex); signed and divided by d for the ball and cube sets, so that
            // ||l_t||_1 <= 1.
            const double scale = A::kGeometry == Geometry::Simplex ? 1.0 : 1.0 / kD;
            for (std::size_t j = 0; j < storage.size(); ++j)
                storage[j] = (A::kGeometry != Geometry::Simplex && j % 3 == 0 ? -1.0 : 1.0) * scale *
                             static_cast<double>(j * 7 % 11) / 10.0;
            kv.given[i] = true;
            kv.str[i] = "matrix.csv";
            kv.list[i] = storage.data();
            kv.list_size[i] = storage.size();
        } else if (k.default_text[0] == '\0') {
            kv.given[i] = true;
            kv.num[i] = 1.0;
        }
        ++i;
    }
    return kv;
}

bool bitwise_equal(const std::vector<double>& a, const std::vector<double>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

template <class F>
void for_all(F&& f) {
    for_each_type(AllAdversaries{}, f);
}

} // namespace

TEST(AdversaryRegistry, NamesKeysAndParamsAreWellFormed) {
    std::set<std::string> names;
    int simplex = 0, ball = 0, cube = 0, polytope = 0, shared_only = 0, linear_model = 0;
    for_all([&](auto tag) {
        using A = typename decltype(tag)::type;
        static_assert(std::is_trivially_copyable_v<typename A::Params>, "Params goes to the GPU by value");
        // d and T come from Dims: p.d and p.T are what fill() reads.
        static_assert(std::is_base_of_v<Dims, typename A::Params>, "adversary contract: struct Params : Dims");
        ASSERT_NE(A::kName, nullptr);
        EXPECT_TRUE(names.insert(A::kName).second) << "duplicate kind " << A::kName;
        simplex += A::kGeometry == Geometry::Simplex;
        ball += A::kGeometry == Geometry::Ball;
        cube += A::kGeometry == Geometry::Cube;
        polytope += A::kGeometry == Geometry::Polytope;
        shared_only += A::kSharedOnly;
        linear_model += LossFamilyOf<A>::value != LossFamily::Linear;
        std::set<std::string> keys;
        for (const KeySpec& k : A::kKeys) {
            ASSERT_NE(k.name, nullptr);
            const std::string name = k.name;
            EXPECT_FALSE(name.empty());
            EXPECT_TRUE(keys.insert(name).second) << A::kName << ": duplicate key " << name;
            EXPECT_TRUE(name != "d" && name != "per_instance" && name != "kind") << "common key " << name;
            EXPECT_TRUE(k.doc && k.doc[0]) << A::kName << "." << name << " has no doc";
            EXPECT_LE(k.min, k.max);
            const std::string def = k.default_text;
            if ((k.type == KeyType::Real || k.type == KeyType::Int) && !def.empty() && def != "auto") {
                char* end = nullptr;
                const double v = std::strtod(def.c_str(), &end);
                EXPECT_EQ(*end, '\0') << A::kName << "." << name << " default " << def;
                EXPECT_TRUE(v >= k.min && v <= k.max) << A::kName << "." << name << " default out of range";
            }
        }
    });
    EXPECT_EQ(names.size(), AllAdversaries::size);
    EXPECT_EQ(simplex, 6);
    EXPECT_EQ(ball, 5);
    EXPECT_EQ(cube, 3);
    EXPECT_EQ(polytope, 3); // bco-linear, bco-absolute, bco-distance
    EXPECT_EQ(shared_only, 3); // file, file-ball, file-cube
    EXPECT_EQ(linear_model, 5); // squared-/absolute-realizable, bco-linear (affine), bco-absolute, bco-distance
    EXPECT_EQ(names, (std::set<std::string>{"file", "bernoulli", "realizable", "halving", "lower-bound",
                                            "switching", "unit-vectors", "drifting", "file-ball",
                                            "squared-realizable", "absolute-realizable", "cube-coordinate",
                                            "cube-drift", "file-cube", "bco-linear", "bco-absolute",
                                            "bco-distance"}));
}

TEST(AdversaryRegistry, DefaultsPassCheck) {
    for_all([&](auto tag) {
        using A = typename decltype(tag)::type;
        std::vector<double> storage;
        Diagnostic diag;
        EXPECT_TRUE(A::check(default_keys<A>(storage), kProblem, diag)) << A::kName << ": " << diag.message;
        const typename A::Params p = A::resolve(default_keys<A>(storage), kProblem);
        EXPECT_EQ(p.d, kD);
        EXPECT_EQ(p.T, kT);
    });
}

TEST(AdversaryRegistry, FillIsAPureFunctionThatWritesExactlyItsRowWidth) {
    // Every round twice, in forward, reverse and strided order, gives bitwise-identical rows, and
    // out[W] (a canary past the row width W) is never written.
    for_all([&](auto tag) {
        using A = typename decltype(tag)::type;
        std::vector<double> storage;
        const auto p = A::resolve(default_keys<A>(storage), kProblem);
        const std::size_t W = advtest::width<A>(p);
        EXPECT_EQ(W, kD + (LossFamilyOf<A>::value == LossFamily::Linear ? 0u : 1u) + adversaries::row_extra<A>(p))
            << A::kName;
        for (const SequenceCtx c : {ctx(3), ctx(3, 0), ctx(3, 17, 2)}) {
            const auto forward = advtest::matrix<A>(p, c);
            std::vector<double> other(forward.size());
            std::vector<double> buf(W + 1);
            for (std::uint64_t k = 0; k < kT; ++k) {
                const std::uint64_t t = (k * 37) % kT + 1; // 37 is coprime to 64: a permutation of 1..T
                buf[W] = -12345.0;
                A::fill(p, c, t, buf.data());
                EXPECT_EQ(buf[W], -12345.0) << A::kName << " writes past its row width";
                std::memcpy(&other[(t - 1) * W], buf.data(), W * sizeof(double));
            }
            EXPECT_TRUE(bitwise_equal(forward, other)) << A::kName;
            for (std::uint64_t t = kT; t >= 1; --t) A::fill(p, c, t, &other[(t - 1) * W]);
            EXPECT_TRUE(bitwise_equal(forward, other)) << A::kName;
        }
    });
}

template <class A, class = void>
struct DeclaresRowEpoch : std::false_type {};
template <class A>
struct DeclaresRowEpoch<A, std::void_t<decltype(A::row_epoch(std::declval<const typename A::Params&>(), std::uint64_t{1}))>>
    : std::true_type {};

TEST(AdversaryRegistry, RowEpochsPromiseOnlyRowsThatAreReallyEqual) {
    // row_epoch (adversaries/common.hpp): rounds of equal epoch have bitwise-equal rows for every sequence, so the
    // runner may copy instead of fill. Checked on every pair of consecutive rounds, for several contexts; and the
    // adversaries that declare it do repeat (the shortcut is used).
    int declared = 0;
    for_all([&](auto tag) {
        using A = typename decltype(tag)::type;
        if constexpr (DeclaresRowEpoch<A>::value) {
            ++declared;
            std::vector<double> storage;
            const auto p = A::resolve(default_keys<A>(storage), kProblem);
            int repeats = 0;
            for (const SequenceCtx c : {ctx(3), ctx(3, 0), ctx(3, 17, 2), ctx(8, 5)}) {
                const auto m = advtest::matrix<A>(p, c);
                for (std::uint64_t t = 2; t <= kT; ++t)
                    if (A::row_epoch(p, t) == A::row_epoch(p, t - 1)) {
                        ++repeats;
                        EXPECT_EQ(0, std::memcmp(&m[(t - 1) * kD], &m[(t - 2) * kD], kD * sizeof(double)))
                            << A::kName << ": rounds " << t - 1 << " and " << t << " share an epoch but differ";
                    }
            }
            EXPECT_GT(repeats, 0) << A::kName;
        }
    });
    EXPECT_EQ(declared, 2); // halving, lower-bound
}

TEST(AdversaryRegistry, LossesLieInTheDeclaredLossSet) {
    for_all([&](auto tag) {
        using A = typename decltype(tag)::type;
        std::vector<double> storage;
        const auto p = A::resolve(default_keys<A>(storage), kProblem);
        const std::size_t W = advtest::width<A>(p);
        for (std::uint32_t seq : {kSharedSequence, 0u, 1u, 2u}) {
            const auto m = advtest::matrix<A>(p, ctx(4, seq));
            for (std::uint64_t t = 0; t < kT; ++t) {
                double l1 = 0, l2 = 0;
                if (W > kD) { // linear-model families: |b_t| <= 1 besides ||a_t||_2 <= 1 (checked below)
                    ASSERT_TRUE(std::isfinite(m[t * W + kD])) << A::kName;
                    EXPECT_LE(std::fabs(m[t * W + kD]), 1.0) << A::kName;
                }
                for (std::uint32_t i = 0; i < kD; ++i) {
                    const double x = m[t * W + i];
                    ASSERT_TRUE(std::isfinite(x)) << A::kName;
                    if (A::kGeometry == Geometry::Simplex) {
                        ASSERT_TRUE(x >= 0.0 && x <= 1.0) << A::kName << ": " << x;
                    }
                    l1 += std::fabs(x);
                    l2 += x * x;
                }
                if (A::kGeometry == Geometry::Ball) { // the unit l2 ball (unit-vectors and drifting
                    EXPECT_LE(std::sqrt(l2), 1.0 + 1e-12) << A::kName; // lie on its sphere: test_adv_olo)
                }
                if constexpr (LossFamilyOf<A>::value == LossFamily::Distance) { // c_t in D, one-hot centre counter
                    std::vector<double> x(kD);
                    ASSERT_TRUE(domains::project(p.domain, &m[t * W], x.data())) << A::kName;
                    for (std::uint32_t i = 0; i < kD; ++i) EXPECT_NEAR(x[i], m[t * W + i], 1e-12) << A::kName;
                    double ones = 0.0;
                    for (std::size_t j = kD + 1; j < W; ++j) {
                        EXPECT_TRUE(m[t * W + j] == 0.0 || m[t * W + j] == 1.0) << A::kName;
                        ones += m[t * W + j];
                    }
                    EXPECT_EQ(ones, 1.0) << A::kName;
                } else if (A::kGeometry == Geometry::Polytope) { // 1-Lipschitz affine losses (ENV21's L = 1)
                    EXPECT_LE(std::sqrt(l2), 1.0 + 1e-12) << A::kName;
                }
                if (A::kGeometry == Geometry::Cube) {
                    EXPECT_LE(l1, 1.0 + 1e-12) << A::kName;
                }
            }
        }
    });
}

TEST(AdversaryRegistry, SequenceDependsOnContext) {
    // Shared vs per-instance sequences, two instances, two seeds and two streams give different loss
    // sequences; the file adversary is the same matrix for every context.
    for_all([&](auto tag) {
        using A = typename decltype(tag)::type;
        std::vector<double> storage;
        const auto p = A::resolve(default_keys<A>(storage), kProblem);
        const auto shared = advtest::matrix<A>(p, ctx(5));
        const std::vector<std::vector<double>> others = {
            advtest::matrix<A>(p, ctx(5, 0)), advtest::matrix<A>(p, ctx(5, 1)), advtest::matrix<A>(p, ctx(6)),
            advtest::matrix<A>(p, ctx(5, kSharedSequence, 1))};
        for (std::size_t k = 0; k < others.size(); ++k) {
            if (A::kSharedOnly) {
                EXPECT_TRUE(bitwise_equal(shared, others[k])) << A::kName;
            } else {
                EXPECT_FALSE(bitwise_equal(shared, others[k])) << A::kName << ": context " << k;
            }
        }
        if (!A::kSharedOnly) {
            EXPECT_FALSE(bitwise_equal(others[0], others[1])) << A::kName << ": instances 0 and 1";
        }
    });
}
