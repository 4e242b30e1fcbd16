#pragma once
// The learner's side of the noisy-prefix seam (kernels/mechanisms/noisy_prefix.hpp PrefixMechanism; docs/MECHANISMS.md
// §3.3): the key block every learner built on private prefix sums shares (mechanism, noise, node_scale,
// blt_buffers), its resolution into a PrefixMechanism, the privacy report and the audit suite's planted bugs. The
// guarantee is the mechanism's (with P~_T never released), whatever the learner does with the sums
// (post-processing). The learner keeps what is its own: the calibration of the scale from its (eps, delta) and its
// per-step sensitivity.

#include <algorithm>

#include "kernels/learners/common.hpp"
#include "kernels/mechanisms/calibration.hpp"
#include "kernels/mechanisms/noisy_prefix.hpp"
#include "kernels/mechanisms/norm_hold.hpp"
#include "kernels/mechanisms/tree_aggregation.hpp"

namespace dpr::learners {

/// The node laws a learner offers: Laplace and Gaussian (pure and approximate DP), or Gaussian only.
enum class PrefixLaws : std::uint8_t { LaplaceGaussian, Gaussian };

/// The key block of the noisy-prefix mechanism. A learner lists kMechanism, kNoise, kNodeScale and kBltBuffers in its
/// kKeys (where it likes); index_of<L>() finds them for resolve() and check(). `mechanism` was called `tree` until
/// BLT, which is not a tree, joined it: `tree` stays accepted as its alias (KeySpec::alias).
/// Lattice: the learner plays through PrefixMechanism::release and accumulate (its sums exact on the lattice), so
/// it offers noise = "discrete-laplace" (lattice noise, docs/spec/model.md §1.8), the default in float precision.
/// GaussianLattice: it also offers noise = "discrete-gaussian" (discrete Gaussian nodes, §1.11), for learners whose
/// per-step sensitivities (Delta_1, Delta_2, and at most twice the largest coordinate, max_abs of lattice_version) are
/// those of its loss-set norms as run; with the Gaussian law only (FTPL, dp-ftrl-smooth), that is the lattice noise and
/// the default in float precision.
template <PrefixLaws Laws, mech::TreeVariant DefaultTree = mech::TreeVariant::Padded, bool Lattice = false,
          bool GaussianLattice = false>
struct PrefixKeys {
    static constexpr bool kLaplace = Laws == PrefixLaws::LaplaceGaussian;
    static constexpr bool kLattice = Lattice && kLaplace;
    static constexpr bool kGaussianLattice = kLattice && GaussianLattice;
    static constexpr bool kGaussianOnlyLattice = !kLaplace && GaussianLattice;
    static constexpr KeySpec kMechanism{
        "mechanism", KeyType::Choice, DefaultTree == mech::TreeVariant::Padded ? "padded" : "binary", 0, 3,
        "padded|binary|honaker|blt",
        "the prefix-sum noise: padded = AS17 Alg. 2 (every prefix carries ceil(log2 T) iid node draws; "
        "docs/spec/model.md §1.5); binary = the standard tree of DNPR10 / CSS11 (§1.4); honaker = the binary tree "
        "with Honaker's estimator (every node re-estimated from its subtree: the same privacy, a prefix variance "
        "about 1/2 per level instead of 1; docs/MECHANISMS.md §3.4); blt = buffered-linear-Toeplitz noise "
        "(Dvijotham et al. 2024; Gaussian only: one draw per step, blt_buffers numbers of state, about 13x less "
        "variance than the tree at T = 2^16 for the same zCDP; docs/MECHANISMS.md §3.5)",
        false, false, "tree"};
    static constexpr KeySpec kBltBuffers{
        "blt_buffers", KeyType::Int, "auto", 1, mech::kMaxBltBuffers, "",
        "buffers of mechanism = \"blt\" (numbers of state per coordinate); auto = 4, 5 when T > 2^18 "
        "(docs/MECHANISMS.md §3.5)"};
    static constexpr KeySpec kNoise =
        kGaussianLattice
            ? KeySpec{"noise", KeyType::Choice, "laplace", 0, 4,
                      "laplace|gaussian|none|discrete-laplace|discrete-gaussian",
                      "node noise: Laplace (eps-DP) or Gaussian ((eps,delta)-DP); none = the non-private control; "
                      "discrete-laplace = lattice noise, discrete Laplace nodes and exact releases, private in "
                      "floating point (the default in float precision; docs/spec/model.md §1.8); discrete-gaussian = "
                      "the same with discrete Gaussian nodes ((eps,delta)-DP as run, §1.11)"}
        : kLattice ? KeySpec{"noise", KeyType::Choice, "laplace", 0, 3, "laplace|gaussian|none|discrete-laplace",
                           "node noise: Laplace (eps-DP) or Gaussian ((eps,delta)-DP); none = the non-private control; "
                           "discrete-laplace = lattice noise, discrete Laplace nodes and exact releases, private in "
                           "floating point (the default in float precision; docs/spec/model.md §1.8)"}
        : kLaplace ? KeySpec{"noise", KeyType::Choice, "laplace", 0, 2, "laplace|gaussian|none",
                           "node noise: Laplace (eps-DP) or Gaussian ((eps,delta)-DP); none = the non-private control"}
        : kGaussianOnlyLattice
            ? KeySpec{"noise", KeyType::Choice, "gaussian", 0, 2, "gaussian|none|discrete-gaussian",
                      "node noise N(0, sigma^2) ((eps,delta)-DP); none = the non-private control; discrete-gaussian = "
                      "lattice noise, discrete Gaussian nodes and exact releases, private in floating point (the "
                      "default in float precision; docs/spec/model.md §1.11)"}
            : KeySpec{"noise", KeyType::Choice, "gaussian", 0, 1, "gaussian|none",
                      "node noise N(0, sigma^2) ((eps,delta)-DP); none = the non-private control"};
    static constexpr KeySpec kNodeScale{"node_scale", KeyType::Real, "auto", 0.0, mech::kMaxNoiseScale, "",
                                        "override the node noise scale (Laplace b / Gaussian sigma); the reported eps "
                                        "is then computed from it",
                                        true};

    /// The law the noise key chose (None for "none").
    static mech::NodeNoise law(const KeyValues& kv, int kNoise) {
        const int i = static_cast<int>(kv.get(kNoise, 0));
        if (kLaplace)
            return i == 0 || i == 3   ? mech::NodeNoise::Laplace
                   : i == 1 || i == 4 ? mech::NodeNoise::Gaussian
                                      : mech::NodeNoise::None;
        return i == 0 || i == 2 ? mech::NodeNoise::Gaussian : mech::NodeNoise::None;
    }

    /// Whether lattice noise was asked for: noise = "discrete-laplace" (or "discrete-gaussian").
    static bool lattice_asked(const KeyValues& kv, int kNoise) {
        const int i = static_cast<int>(kv.num[kNoise]);
        if (kGaussianOnlyLattice) return kv.given[kNoise] && i == 2;
        return kLattice && kv.given[kNoise] && (i == 3 || (kGaussianLattice && i == 4));
    }

    /// Where a learner lists the block in its kKeys.
    struct Index {
        int mechanism, noise, node_scale, blt_buffers;
    };
    template <class L>
    static constexpr Index index_of() {
        return Index{key_index(L::kKeys, "mechanism"), key_index(L::kKeys, "noise"), key_index(L::kKeys, "node_scale"),
                     key_index(L::kKeys, "blt_buffers")};
    }

    /// The choice of the mechanism key (0 padded, 1 binary, 2 honaker, 3 blt).
    static int choice(const KeyValues& kv, const Index& k) {
        if (kv.given[k.mechanism]) return static_cast<int>(kv.num[k.mechanism]);
        return DefaultTree == mech::TreeVariant::Padded ? 0 : 1;
    }

    /// blt_buffers, or its default: 4, 5 when the stream is longer than 2^18 steps.
    static std::uint32_t buffers(const KeyValues& kv, const Index& k, std::uint64_t T) {
        return kv.given[k.blt_buffers] ? static_cast<std::uint32_t>(kv.num[k.blt_buffers])
                                       : (T > (std::uint64_t{1} << 18) ? 5u : 4u);
    }

    /// The mechanism over a stream of T steps: mechanism and law from the keys; the law None when `off` (the learner's
    /// privacy switched off, e.g. epsilon = inf without node_scale); the scale node_scale when given, otherwise
    /// auto_scale(law), called only with the noise on: the tree's node scale at the learner's calibration. BLT then
    /// gets sigma x sqrt(sens^2 / h'), the same zCDP rho (and mu-GDP, and epsilon) as the tree would have
    /// (calibration.hpp gaussian_guarantee: the release's privacy depends on sigma^2 / sensitivity^2 only).
    template <class F>
    static mech::PrefixMechanism resolve(const KeyValues& kv, const Index& k, std::uint64_t T, bool off, F auto_scale) {
        mech::PrefixMechanism m;
        m.T = T;
        const int which = choice(kv, k);
        m.tree = which == 0 ? mech::TreeVariant::Padded : mech::TreeVariant::Binary;
        m.honaker = which == 2;
        m.blt = which == 3;
        m.noise = off ? mech::NodeNoise::None : law(kv, k.noise);
        if (m.blt) m.blt_noise = mech::blt_for_steps(buffers(kv, k, T), T - 1);
        if (!m.on()) return m;
        if (kv.given[k.node_scale]) {
            m.scale = kv.num[k.node_scale];
        } else {
            m.scale = auto_scale(m.noise);
            const double h = static_cast<double>(mech::levels_released(T, /*release_final=*/false));
            if (m.blt && h > 0.0) m.scale *= std::sqrt(m.sensitivity_squared() / h);
        }
        return m;
    }

    /// BLT needs the Gaussian law; blt_buffers without mechanism = "blt" is ignored (a warning: a sweep over mechanism
    /// may set it for every point).
    static bool check_mechanism(const KeyValues& kv, const Index& k, Diagnostic& diag) {
        const int which = choice(kv, k);
        if (which == 3 && law(kv, k.noise) == mech::NodeNoise::Laplace)
            return diag.fail("mechanism",
                             "mechanism = \"blt\" needs noise = \"gaussian\": under pure eps-DP (Laplace) BLT's l1 "
                             "column norm makes it about 80x worse than the tree at T = 2^16; mechanism = \"honaker\" "
                             "is the better tree for Laplace noise (docs/MECHANISMS.md §3.5)");
        if (kv.given[k.blt_buffers] && which != 3) {
            diag.fail("blt_buffers", "is a parameter of mechanism = \"blt\"; ignored with mechanism = \"%s\"",
                      which == 0 ? "padded" : which == 1 ? "binary" : "honaker");
            diag.warning_only = true;
        }
        return true;
    }

    /// check_mechanism, and the Gaussian law needs delta in (0, 1) unless its scale is given or the noise is off
    /// (`off` as resolve()).
    static bool check(const KeyValues& kv, const Index& k, int kDelta, bool off, Diagnostic& diag) {
        if (!check_mechanism(kv, k, diag)) return false;
        if (off || kv.given[k.node_scale] || law(kv, k.noise) != mech::NodeNoise::Gaussian) return true;
        if (kv.get(kDelta, 0.0) > 0.0) return true;
        return diag.fail("delta", "noise = \"%s\" needs delta in (0, 1) (got %g)",
                         lattice_asked(kv, k.noise) ? "discrete-gaussian" : "gaussian", kv.get(kDelta, 0.0));
    }
};

/// AS17's two calibrations of the node scale, the choice "paper|strict" (calibration.hpp).
/// The calibration key's choice (index 0 paper, 1 strict); `fallback` when the key is not given (the learner's default:
/// the calibration that delivers at most the requested eps and delta, docs/spec/model.md §1.5).
inline mech::Calibration calibration_of(const KeyValues& kv, int kCalibration,
                                        mech::Calibration fallback = mech::Calibration::Paper) {
    const double dflt = fallback == mech::Calibration::Paper ? 0.0 : 1.0;
    return static_cast<int>(kv.get(kCalibration, dflt)) == 0 ? mech::Calibration::Paper : mech::Calibration::Strict;
}
inline const char* calibration_name(mech::Calibration c) { return c == mech::Calibration::Paper ? "paper" : "strict"; }

/// The sensitivities the discrete Gaussian's accounting reads (docs/spec/model.md §1.11): the loss set's Delta_1 and
/// Delta_2 over the lattice version's coordinates, and its coord_change (Delta_inf).
inline mech::LatticeSens lattice_sens(const mech::PrefixMechanism& m, const mech::LossSetNorms& norms) {
    return mech::LatticeSens{norms.delta1, norms.delta2, m.coord_change, m.coords};
}

/// Why the lattice version `m` of a mechanism cannot be used (nullptr: it can), for steps whose coordinates have
/// |l_c| <= max_abs (1 for the loss sets of AS17's learners): the trees whose node estimates are weighted sums
/// (Honaker, BLT) have no exact release; then the lattice's own limits (mech::lattice_limit for Laplace nodes,
/// mech::lattice_gaussian_limit at `delta` for Gaussian nodes).
inline const char* lattice_obstacle(const mech::PrefixMechanism& m, const mech::LossSetNorms& norms,
                                    double max_abs = 1.0, double delta = 0.0) {
    if (m.honaker || m.blt)
        return "needs mechanism = \"padded\" or \"binary\": Honaker's estimator and BLT release weighted sums of "
               "nodes, which are not exact on the lattice";
    const std::uint32_t hp = mech::levels_released(m.T, /*release_final=*/false);
    if (m.noise == mech::NodeNoise::Gaussian)
        return mech::lattice_gaussian_limit(m.dlap, mech::dgauss_law(m.dlap, m.dgauss), hp, lattice_sens(m, norms), delta,
                                            max_abs);
    if (m.noise != mech::NodeNoise::Laplace) return "is a Laplace or Gaussian law";
    return mech::lattice_limit(m.dlap, hp, norms.delta1, m.coords, max_abs);
}

/// The lattice version of the mechanism m (docs/spec/model.md §1.8, §1.11), for steps whose coordinates have |l_c| <=
/// max_abs: the node scale raised to the smallest whose lattice epsilon is at most the continuous one (a given
/// node_scale is kept; for Gaussian nodes at `delta`), its tables.
inline mech::PrefixMechanism lattice_version(mech::PrefixMechanism m, bool scale_given, const mech::LossSetNorms& norms,
                                             std::uint32_t d, double delta = 0.0, double max_abs = 1.0) {
    m.lattice = true;
    m.coords = d;
    m.coord_change = std::min({norms.delta1, norms.delta2, 2.0 * max_abs});
    const std::uint32_t hp = mech::levels_released(m.T, /*release_final=*/false);
    if (!scale_given && m.noise == mech::NodeNoise::Gaussian) {
        const double target = mech::tree_guarantee(m.noise, m.scale, delta, norms, m.T, /*release_final=*/false).epsilon;
        m.scale = mech::lattice_gaussian_scale_for(m.scale, target, hp, lattice_sens(m, norms), delta);
    } else if (!scale_given) {
        m.scale = mech::lattice_scale_for(m.scale, hp, norms.delta1, d);
    }
    m.dlap = mech::dlap_table(m.scale);
    if (m.noise == mech::NodeNoise::Gaussian) m.dgauss = mech::dgauss_table(m.dlap);
    return m;
}

/// The lattice version of the continuous mechanism `m` (lattice_version) and why it cannot be used (nullptr: it can):
/// lattice_obstacle's reasons, and for Gaussian nodes at the calibration's scale (not `scale_given`) a report above
/// the continuous one's that no larger sigma lowers (mech::lattice_gaussian_scale_for: the accounting's floor, reached
/// when the calibration's epsilon is far below about 1e-3).
struct LatticeAttempt {
    mech::PrefixMechanism lat;
    const char* why;
};
inline LatticeAttempt lattice_attempt(const mech::PrefixMechanism& m, bool scale_given, const mech::LossSetNorms& norms,
                                      std::uint32_t coords, double delta, double max_abs) {
    LatticeAttempt a{lattice_version(m, scale_given, norms, coords, delta, max_abs), nullptr};
    a.why = lattice_obstacle(a.lat, norms, max_abs, delta);
    if (a.why || scale_given || m.noise != mech::NodeNoise::Gaussian) return a;
    const double target = mech::tree_guarantee(m.noise, m.scale, delta, norms, m.T, /*release_final=*/false).epsilon;
    if (a.lat.guarantee(delta, norms).epsilon > target * (1.0 + 1e-9))
        a.why = "cannot report the calibration's epsilon: the discrete Gaussian's accounting has a floor (about 6e-4 "
                "at delta = 1e-5) that more noise does not lower, and this calibration's epsilon is below it";
    return a;
}

/// `m` in lattice form when the learner's key block offers lattice noise and it is wanted: asked for, or by default in
/// float precision (docs/spec/model.md §1.8); kept continuous where the lattice does not apply (the float default then
/// warns; an explicit request is refused by check_lattice_applies with lattice_attempt's reason). `coords`: the
/// coordinates of one step's vector; `max_abs`: the most one of them can be, as run (1 for AS17's loss sets).
template <class Prefix>
mech::PrefixMechanism lattice_if_wanted(const mech::PrefixMechanism& m, const KeyValues& kv,
                                        const typename Prefix::Index& idx, const mech::LossSetNorms& norms,
                                        bool float_precision, std::uint32_t coords, double delta, double max_abs = 1.0) {
    if (!(Prefix::kLattice || Prefix::kGaussianOnlyLattice) || !m.on()) return m;
    if (!mech::lattice_wanted(Prefix::lattice_asked(kv, idx.noise), kv.given[idx.noise], float_precision)) return m;
    const LatticeAttempt a = lattice_attempt(m, kv.given[idx.node_scale], norms, coords, delta, max_abs);
    return a.why == nullptr ? a.lat : m;
}

/// The check of lattice_if_wanted's learners: noise = "discrete-laplace" or "discrete-gaussian" asked for where the
/// lattice does not apply (`m`, the resolved mechanism, stayed continuous) is an error on `noise` naming the reason.
template <class Prefix>
bool check_lattice_applies(const KeyValues& kv, const typename Prefix::Index& idx, const mech::PrefixMechanism& m,
                           const mech::LossSetNorms& norms, std::uint32_t coords, double delta, double max_abs,
                           Diagnostic& diag) {
    if (!Prefix::lattice_asked(kv, idx.noise) || !m.on() || m.lattice) return true;
    // A given node_scale waives delta for the continuous Gaussian (PrefixKeys::check), not for the discrete one.
    if (m.noise == mech::NodeNoise::Gaussian && !(delta > 0.0))
        return diag.fail("delta", "noise = \"discrete-gaussian\" needs delta in (0, 1) (got %g), also with node_scale "
                                  "given: its report is an (eps, delta) statement (docs/spec/model.md §1.11)",
                         delta);
    const char* why = lattice_attempt(m, kv.given[idx.node_scale], norms, coords, delta, max_abs).why;
    return diag.fail("noise", "lattice noise %s (docs/spec/model.md %s)", why ? why : "does not apply",
                     m.noise == mech::NodeNoise::Gaussian ? "§1.11" : "§1.8");
}

/// The prefix mechanism of AS17's learners (dp-ftrl-experts, -sphere, -cube): L's key block, the node scale of
/// calibration.hpp for calibration `cal` and the learner's loss-set norms (only P~_0 .. P~_{T-1} released);
/// epsilon = inf without node_scale turns the noise off (the learner is then its non-private twin);
/// in float, or when asked for, its lattice version where that applies.
template <class L>
mech::PrefixMechanism as17_prefix(const KeyValues& kv, mech::Calibration cal, double eps, double delta,
                                  const mech::LossSetNorms& norms, const Problem& pb) {
    const auto idx = L::Prefix::template index_of<L>();
    const std::uint64_t T = pb.T;
    const mech::PrefixMechanism m =
        L::Prefix::resolve(kv, idx, T, std::isinf(eps) && !kv.given[L::kNodeScale], [&](mech::NodeNoise law) {
            return mech::node_scale(law, cal, eps, delta, norms, T, /*release_final=*/false);
        });
    return lattice_if_wanted<typename L::Prefix>(m, kv, idx, norms, pb.float_precision, pb.d, delta);
}

/// init() of a learner whose state is one exact double row of d (ws.dbl[0], a running sum), the mechanism's rows
/// (ws.real[row]) and `scalars` diagnostics: all zero.
template <class Team, class WS>
DPR_HD void init_sum_and_prefix(const mech::PrefixMechanism& m, std::uint32_t d, const Team& team, const WS& ws,
                                std::uint32_t row, std::uint32_t scalars) {
    using D = typename Team::template lanes<double>;
    team.for_each(d, [&](auto i) { team.store(ws.dbl[0], i, D(0.0)); });
    m.init(team, ws.real[row], d);
    if (team.rank() == 0)
        for (std::uint32_t k = 0; k < scalars; ++k) team.put(ws.scalars, k, typename Team::template uni<double>(0.0));
    team.sync();
}

/// workspace() and init() of a learner whose state is one exact running sum (ws.dbl[0], d doubles), the
/// prefix mechanism's rows (ws.real[0]; none with the noise off) and NScalars diagnostics, all zero at the
/// start. The learner derives from it; its Params has d and prefix.
template <int NScalars>
struct SumAndPrefixState {
    template <class P>
    DPR_HD static WorkspaceSpec workspace(const P& p) {
        return WorkspaceSpec{}.add_double(1, p.d).add_real(p.prefix.rows(), p.d).scalars(NScalars);
    }
    template <class P, class Team, class WS>
    DPR_HD static void init(const P& p, const Team& team, const WS& ws) {
        init_sum_and_prefix(p.prefix, p.d, team, ws, 0, NScalars);
    }
};

/// Refuses a node scale above mech::kMaxNoiseScale (its noise could not be computed in float, and it would make
/// every play random): p.scale of L's resolved Params. `key` is the key that set it (epsilon, delta or
/// node_scale; for FTPL possibly reg_constant), `how` says how it follows from the key.
inline bool check_node_scale(double scale, const char* key, const char* how, Diagnostic& diag) {
    if (scale <= mech::kMaxNoiseScale) return true;
    return diag.fail(key,
                     "gives a node noise scale of %g (%s), above %g, the largest the engine computes with: its draws "
                     "would overflow float arithmetic and every play would be random",
                     scale, how, mech::kMaxNoiseScale);
}

/// The privacy report of a learner whose only noise is `m`, for one step's sensitivities `y`. `calibration` names
/// the learner's calibration; `mechanism` describes the noise for run.json (nullptr: the mechanism's name).
inline PrivacyReport prefix_privacy_report(const mech::PrefixMechanism& m, double delta, const mech::LossSetNorms& y,
                                           const char* calibration, const char* mechanism = nullptr) {
    PrivacyReport r;
    r.calibration = calibration;
    if (m.sensitivity_squared() == 0.0) {
        // T = 1: the learner releases P~_0 alone (P~_T is never released), which holds no loss and no node (k = ceil(log2
        // 1) = 0 levels; BLT: no step enters a released prefix): AS17 Alg. 2, docs/spec/model.md §1.5 "T = 1". Nothing
        // released depends on the losses, so it is (0, 0)-DP whatever its noise, as mech::tree_guarantee says for h' = 0.
        // Checked before the noise: a learner whose scale is 0 there turns the noise off (dp-ftpl-*: sigma_reg = 0 and
        // the paper's sigma_priv = 0 at k = 0), and "off" must not read as "no privacy" (it reported eps = inf).
        r.epsilon = 0.0;
        r.delta = 0.0;
        r.mechanism = "none: nothing released depends on the losses (T = 1)";
        r.noise_scale = m.on() ? m.scale : 0.0;
        return r;
    }
    if (!m.on()) {
        r.mechanism = "none (noise off)";
        return r;
    }
    const mech::Guarantee g = m.guarantee(delta, y);
    r.set(g);
    // A learner's own description names its trees; BLT is not a tree, so the seam names it.
    r.mechanism = mechanism && !m.blt ? mechanism : m.name();
    r.noise_scale = m.scale;
    r.sensitivity_squared = m.sensitivity_squared();
    if (m.blt) r.blt = m.blt_noise;
    return r;
}

/// What AS17's DP-FTRL learners (dp-ftrl-experts, dp-ftrl-sphere, dp-ftrl-cube: Alg. 1 with the tree of Alg.
/// 2, docs/spec/as17.md §A1) share besides their keys and their round: the parameters; their resolution from
/// the keys (eta, epsilon, delta, the calibration, and the prefix mechanism for L's loss-set norms,
/// as17_prefix); the checks of the noise keys and of the node scale; the privacy report. L derives from
/// As17Ftrl<L>, lists its keys in the order below (epsilon, delta, eta, mechanism, noise, calibration,
/// node_scale, blt_buffers; checked at compile time in resolve()) and declares norms(d), default_eta(d, T) and
/// kDefaultCalibration (the calibration when the key is not given: one that delivers at most the request).
template <class L>
struct As17Ftrl {
    static constexpr int kEpsilon = 0, kDelta = 1, kEta = 2, kCalibration = 5, kNodeScale = 6;
    struct Params : Dims {
        double eta;
        double epsilon, delta;
        mech::Calibration calibration;
        mech::PrefixMechanism prefix; ///< the noise of L~
    };

    static Params resolve(const KeyValues& kv, const Problem& pb) {
        static_assert(key_index(L::kKeys, "epsilon") == kEpsilon && key_index(L::kKeys, "delta") == kDelta &&
                          key_index(L::kKeys, "eta") == kEta &&
                          key_index(L::kKeys, "calibration") == kCalibration &&
                          key_index(L::kKeys, "node_scale") == kNodeScale,
                      "an As17Ftrl learner lists its keys in As17Ftrl's order");
        Params p{};
        static_cast<Dims&>(p) = dims(pb);
        p.eta = kv.get(L::kEta, L::default_eta(pb.d, pb.T));
        p.epsilon = kv.num[L::kEpsilon];
        p.delta = kv.get(L::kDelta, 0.0);
        p.calibration = calibration_of(kv, L::kCalibration, L::kDefaultCalibration);
        p.prefix = as17_prefix<L>(kv, p.calibration, p.epsilon, p.delta, L::norms(p.d), pb);
        return p;
    }

    /// The mechanism's keys (PrefixKeys::check).
    static bool check_noise_keys(const KeyValues& kv, Diagnostic& diag) {
        return L::Prefix::check(kv, L::Prefix::template index_of<L>(), L::kDelta, std::isinf(kv.num[L::kEpsilon]), diag);
    }
    /// A node scale the engine computes with (check_node_scale).
    static bool check_scale(const KeyValues& kv, const Problem& pb, Diagnostic& diag) {
        return check_node_scale(resolve(kv, pb).prefix.scale, kv.given[L::kNodeScale] ? "node_scale" : "epsilon",
                                "lambda = ||Y||_1 ceil(log2 T) / eps, or the Gaussian calibration", diag);
    }
    /// noise = "discrete-laplace" (or "discrete-gaussian") where the lattice applies (check_lattice_applies).
    static bool check_lattice(const KeyValues& kv, const Problem& pb, Diagnostic& diag) {
        if (!L::Prefix::lattice_asked(kv, L::Prefix::template index_of<L>().noise)) return true;
        const Params p = resolve(kv, pb);
        return check_lattice_applies<typename L::Prefix>(kv, L::Prefix::template index_of<L>(), p.prefix, L::norms(pb.d),
                                                         pb.d, p.delta, 1.0, diag);
    }
    static bool check(const KeyValues& kv, const Problem& pb, Diagnostic& diag) {
        return check_noise_keys(kv, diag) && check_scale(kv, pb, diag) && check_lattice(kv, pb, diag);
    }

    static PrivacyReport privacy(const Params& p) {
        PrivacyReport r = prefix_privacy_report(p.prefix, p.delta, L::norms(p.d), calibration_name(p.calibration));
        r.nodes_hold_losses = true; // the tree is over the loss vectors
        return r;
    }

    /// The planted bugs of the audit suite (common.hpp Planted; docs/AUDITS.md) that act on the mechanism.
    static bool plant(Params& p, Planted bug) { return plant_prefix(p.prefix, bug); }
};

/// The planted bugs of the audit suite (common.hpp Planted; docs/AUDITS.md) that act on the mechanism: the node
/// scale halved or times 0.9, the leaves without noise, every round's draws from round 1's counter, BLT's sigma
/// calibrated with its sensitivity one column short (BLT with T >= 3 only), lattice noise replaced by the continuous
/// sampler (lattice noise only). False with the noise off.
inline bool plant_prefix(mech::PrefixMechanism& m, Planted bug) {
    if (!m.on()) return false;
    switch (bug) {
    case Planted::HalfNoise: m.scale /= 2.0; return true;
    case Planted::NineTenthsNoise: m.scale *= 0.9; return true;
    case Planted::LeafWithoutNoise: m.planted = mech::kPlantLeafWithoutNoise; return true;
    case Planted::ReusedNoise: m.planted = mech::kPlantReusedNoise; return true;
    case Planted::FloatLattice:
        if (!m.lattice) return false;
        m.lattice = false;
        return true;
    case Planted::BltShortSensitivity: {
        // BLT's sigma is proportional to sqrt(sens^2) at a given privacy (resolve()); the bug computes sens^2 with
        // the sum stopping one column short, sum_{k<n-1} c_k^2 for the n = T - 1 released steps.
        const std::uint64_t n = m.T - 1;
        if (!m.blt || n < 2) return false;
        m.scale *= std::sqrt(mech::blt_sensitivity_squared(m.blt_noise, n - 1) / m.sensitivity_squared());
        return true;
    }
    default: return false;
    }
}

} // namespace dpr::learners
