// tree-experts with the exact samplers (noise = "discrete-laplace", the float default; docs/spec/afkt23.md §C3 "Exact
// samplers", docs/spec/model.md §1.8, §1.9; kernels/learners/tree_experts.hpp): which runs use them and what they
// report (each part at most its continuous counterpart, so never more than the continuous report, and never more than
// asked), the refusal where they cannot apply, the same bits in float and double and against the serial oracle, the
// round's recipe (the lattice sums and lattice nodes of the documented streams, the kept prefix node sums, the B
// exact draws without replacement), and the regret law against the continuous double run (KS, statistical).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "kernels/adversaries/realizable.hpp"
#include "kernels/learners/tree_experts.hpp"
#include "learners/phase_recipe.hpp"
#include "learners/simulate.hpp"
#include "learners/solo.hpp"

namespace {

using namespace dpr;
using learners::TreeExperts;
using test::in;
using test::SimResult;
using test::simulate;

constexpr double kExact = 1; // noise = "discrete-laplace"

TreeExperts::Params resolved(test::KeyList keys, bool float_precision, std::uint32_t d, std::uint64_t T) {
    return test::resolved<TreeExperts>(keys, float_precision, d, T);
}

TEST(TreeExpertsExact, FloatDefaultsToTheExactSamplersAndNeverReportsMoreThanAsked) {
    for (double eps : {0.1, 1.0, 10.0})
        for (std::uint32_t d : {4u, 300u})
            for (std::uint64_t T : {64u, 4096u}) {
                SCOPED_TRACE(testing::Message() << "eps " << eps << " d " << d << " T " << T);
                const TreeExperts::Params f = resolved({{"epsilon", eps}}, true, d, T);
                ASSERT_TRUE(f.lattice);
                const learners::PrivacyReport rf = TreeExperts::privacy(f);
                EXPECT_TRUE(rf.as_run) << rf.accountant;
                EXPECT_LE(rf.epsilon, eps);
                EXPECT_LT(rf.delta, 1e-13);
                const TreeExperts::Params dbl = resolved({{"epsilon", eps}}, false, d, T);
                EXPECT_FALSE(dbl.lattice) << "double keeps the continuous samplers";
                EXPECT_EQ(dbl.B, f.B);
                EXPECT_EQ(dbl.K, f.K);
                // Each part at most its continuous counterpart: the trees eps/2 (h B / b at the continuous b), each
                // of the K B draws eps_sel.
                const mech::Guarantee g = mech::lattice_guarantee(f.dlap, f.h, f.B, f.B);
                EXPECT_LE(g.epsilon, eps / 2);
                EXPECT_LE(f.xexp.epsilon, f.eps_sel);
                EXPECT_GE(f.b, dbl.b) << "the lattice raises the node scale, never lowers it";
                EXPECT_LT(f.b, 1.02 * dbl.b) << "by at most h/(2t) + the rounding of t";
                EXPECT_EQ(f.tau, f.h * f.b * std::log(2.0 * f.B * static_cast<double>(T) / 0.05)) << "tau follows b";
                const learners::PrivacyReport rd = TreeExperts::privacy(dbl);
                EXPECT_FALSE(rd.as_run);
                EXPECT_LE(rf.epsilon, rd.epsilon);
                EXPECT_GT(rf.epsilon, 0.99 * rd.epsilon);
                const TreeExperts::Params asked = resolved({{"epsilon", eps}, {"noise", kExact}}, false, d, T);
                ASSERT_TRUE(asked.lattice) << "asked for in double";
                EXPECT_EQ(TreeExperts::privacy(asked).epsilon, rf.epsilon);
                EXPECT_EQ(asked.b, f.b);
                // noise = "laplace" in float: the continuous samplers, with run.json's float warning.
                EXPECT_FALSE(resolved({{"epsilon", eps}, {"noise", 0.0}}, true, d, T).lattice);
            }
}

TEST(TreeExpertsExact, AskedForWhereItCannotApplyIsAnErrorNamingTheKey) {
    static const auto infos = config::describe_all<learners::AllLearners>("learner");
    Problem pb;
    pb.d = 8;
    pb.T = 64;
    // eps = 1e9: node scale 2 B h / eps ~ 1e-7, below the lattice's 2^-10 per unit of loss.
    Diagnostic diag;
    const KeyValues kv = test::key_values(infos, TreeExperts::kName, {{"epsilon", 1e9}, {"noise", kExact}});
    EXPECT_FALSE(TreeExperts::check(kv, pb, diag));
    EXPECT_STREQ(diag.key, "noise");
    EXPECT_NE(std::string(diag.message).find("docs/spec/model.md"), std::string::npos) << diag.message;
    EXPECT_NE(std::string(diag.message).find("lattice noise on the count trees needs a noise scale above 2^-10"),
              std::string::npos)
        << diag.message;
    // Not asked for (the float default): the continuous samplers, with run.json's float warning.
    EXPECT_FALSE(resolved({{"epsilon", 1e9}}, true, 8, 64).lattice);
    EXPECT_FALSE(TreeExperts::privacy(resolved({{"epsilon", 1e9}}, true, 8, 64)).as_run);
    // Where it applies, asking is no error.
    Diagnostic ok;
    EXPECT_TRUE(TreeExperts::check(test::key_values(infos, TreeExperts::kName, {{"epsilon", 1.0}, {"noise", kExact}}), pb, ok))
        << ok.message;
}

/// Keys at which sets are abandoned and redrawn within T = 300 on realizable losses (a set without x* is left once its
/// members' counts pass 6; the set holding x* is kept, so an instance draws one or two sets). eps = 400: node scale
/// 72 / 400 (h = 9, B = 4), within the lattice's limits (its truncation delta would pass 1e-15 near eps = 600).
const test::KeyList kSwitching = {{"epsilon", 400.0}, {"set_size", 4.0}, {"max_sets", 8.0}, {"threshold", 6.0}};
const test::KeyList kSwitchingExact = {{"epsilon", 400.0}, {"set_size", 4.0}, {"max_sets", 8.0}, {"threshold", 6.0},
                                       {"noise", kExact}};

adversaries::Realizable::Params realizable(std::uint32_t d, std::uint64_t T) {
    KeyValues akv;
    akv.num[adversaries::Realizable::kP] = 0.3;
    akv.given[adversaries::Realizable::kP] = true;
    Problem pb;
    pb.d = d;
    pb.T = T;
    return adversaries::Realizable::resolve(akv, pb);
}

TEST(TreeExpertsExact, FloatAndDoubleAndTheSerialOracleGiveTheSameBits) {
    const std::uint64_t T = 300;
    for (bool per_instance : {false, true})
        for (std::uint32_t d : {24u, 300u}) {
            SCOPED_TRACE(testing::Message() << "d " << d << " per_instance " << per_instance);
            const SimResult ref = simulate("tree-experts", kSwitching, "realizable", {{"p", 0.3}}, d, T, 12, 1, 4,
                                           per_instance, 4, 0, in(Precision::Float));
            ASSERT_TRUE(ref.privacy.as_run);
            double sets = 0;
            for (std::uint32_t k = 0; k < ref.instances; ++k) sets += ref.diagnostic("sets", k);
            EXPECT_GT(sets, 1.5 * ref.instances) << "sets are redrawn: the exact draws are exercised";
            for (Precision prec : {Precision::Float, Precision::Double}) {
                const SimResult r = simulate("tree-experts", kSwitchingExact, "realizable", {{"p", 0.3}}, d, T, 12, 2, 4,
                                             per_instance, 4, 0, in(prec));
                EXPECT_EQ(r.final_regret, ref.final_regret) << r.policy;
                EXPECT_EQ(r.diagnostics, ref.diagnostics) << r.policy;
            }
            // The continuous samplers give other bits (the test would see a run that ignored the key).
            const SimResult cont = simulate("tree-experts", kSwitching, "realizable", {{"p", 0.3}}, d, T, 12, 2, 4,
                                            per_instance, 4, 0, in(Precision::Double));
            EXPECT_NE(cont.final_regret, ref.final_regret);
            const auto ap = realizable(d, T);
            const TreeExperts::Params p = resolved(kSwitching, true, d, T);
            for (std::uint32_t k = 0; k < ref.instances; k += 5) {
                const adversaries::SequenceCtx ctx{4, 0, per_instance ? k : adversaries::kSharedSequence};
                test::Solo<TreeExperts> solo(p, 4, k);
                const double total =
                    solo.run(T, [&](std::uint64_t t, double* r) { adversaries::Realizable::fill(ap, ctx, t, r); });
                EXPECT_EQ(total, ref.final_realized[k]) << "instance " << k;
                EXPECT_EQ(solo.diagnostics()[0], ref.diagnostic("sets", k)) << "instance " << k;
            }
        }
}

TEST(TreeExpertsExact, ARoundFollowsTheRecipe) {
    // One instance through the serial oracle, every round recomputed from the documented streams: each member's
    // lattice sum (its losses rounded with the word of (Lattice, sub 1, round t - 1, element b)), its lattice tree
    // (tree_part with lattice nodes from (Lattice, sub 0, ...)), the play argmin chat (ties: the earlier member), and
    // each new set as B exact draws over the experts not yet drawn, draw b from (Exponential, sub 0, round t,
    // element b). The losses are realizable rows times fractions, so that the random rounding matters.
    using P = TreeExperts;
    const std::uint32_t d = 40, B = 4;
    const std::uint64_t T = 300;
    const P::Params p = resolved(kSwitching, true, d, T);
    ASSERT_TRUE(p.lattice);
    ASSERT_EQ(p.B, B);
    const auto ap = realizable(d, T);
    const adversaries::SequenceCtx ctx{6, 0, adversaries::kSharedSequence};
    test::Solo<P> solo(p, 6, 13);
    const SerialTeam<double>& team = solo.team();
    mech::TreeNoise tn;
    tn.variant = mech::TreeVariant::Binary;
    tn.noise = mech::NodeNoise::Laplace;
    tn.scale = p.b;
    tn.T = T;
    tn.seed = 6;
    tn.stream = 0;
    tn.instance = 13;
    tn.lattice = true;
    tn.dlap = p.dlap;
    std::vector<double> row(d), L(d, 0.0), S(B, 0.0);
    std::vector<std::uint32_t> members;
    std::set<std::uint32_t> drawn;
    std::uint64_t start = 0;
    double sets = 0, paid = 0;
    int rounded_up = 0, rounded_down = 0;
    for (std::uint64_t t = 1; t <= T; ++t) {
        adversaries::Realizable::fill(ap, ctx, t, row.data());
        for (std::uint32_t i = 0; i < d; ++i) row[i] *= 0.3 + 0.6 * static_cast<double>((7 * i + 3 * t) % 11) / 11.0;
        double best = std::numeric_limits<double>::infinity();
        std::uint32_t x = 0;
        for (std::uint32_t b = 0; b < members.size(); ++b) {
            const double chat = S[b] + mech::tree_part<double>(tn, t - start, b, start - 1);
            ASSERT_EQ(std::fmod(chat, p.dlap.gamma), 0.0) << "an exact lattice value, round " << t;
            if (chat < best) best = chat, x = members[b];
        }
        if ((members.empty() || best > p.tau) && sets < p.K) {
            members.clear();
            for (std::uint32_t b = 0; b < B; ++b) {
                rng::StreamId id;
                id.seed = 6;
                id.instance = 13;
                id.purpose = rng::Purpose::Exponential;
                id.round = static_cast<std::uint32_t>(t);
                id.element = b;
                const std::uint32_t y = mech::exact_exp_draw(p.xexp, d, [&](std::uint32_t i) {
                    return drawn.count(i) ? std::numeric_limits<double>::infinity() : L[i];
                }, id);
                ASSERT_TRUE(drawn.insert(y).second) << "drawn twice: " << y;
                members.push_back(y);
            }
            S.assign(B, 0.0);
            start = t;
            sets += 1;
            x = members[0];
        }
        paid += solo.round(t, row.data()).realized;
        ASSERT_EQ(solo.scalar(P::kX), x) << "round " << t;
        ASSERT_EQ(solo.scalar(P::kSets), sets) << "round " << t;
        for (std::uint32_t b = 0; b < B; ++b) {
            ASSERT_EQ(solo.dbl(P::kMembers)[b], members[b]) << "round " << t;
            const std::uint32_t w = rng::instance_stream(team, rng::Purpose::Lattice, 1u, t - 1, b).block(0).w[0];
            const double r = noise::lattice_round(row[members[b]], p.dlap.gamma, w);
            ASSERT_LE(std::fabs(r - row[members[b]]), p.dlap.gamma);
            rounded_up += r > row[members[b]];
            rounded_down += r < row[members[b]];
            S[b] += r;
            ASSERT_EQ(solo.dbl(P::kBase)[b], S[b]) << "member " << b << " round " << t;
            // The kept node sum is the next round's prefix's, as tree_part sums it.
            ASSERT_EQ(solo.dbl(P::kPrefixNoise)[b], mech::tree_part<double>(tn, t + 1 - start, b, start - 1))
                << "member " << b << " round " << t;
        }
        for (std::uint32_t i = 0; i < d; ++i) L[i] += row[i];
    }
    EXPECT_GE(sets, 2.0) << "a set was abandoned and another drawn";
    EXPECT_GT(paid, 0.0);
    EXPECT_GT(rounded_up, 100) << "the rounding is exercised";
    EXPECT_GT(rounded_down, 100) << "the rounding is exercised";
}

TEST(TreeExpertsExact_Stat, TheRegretLawIsTheContinuousDoubleLaw) {
    // Disjoint instances (ids 0 and 3000) over the same realizable sequence: the float run with the exact samplers
    // against the double run with the continuous ones, at a node scale of about 1 (h = 9, B = 4: b = 72 / eps). The
    // final regret and the round of the last set (when the first set was left: its crossing of tau = 6 is where the
    // node noise shows).
    const test::KeyList keys = {{"epsilon", 72.0}, {"set_size", 4.0}, {"max_sets", 8.0}, {"threshold", 6.0}};
    const SimResult f = simulate("tree-experts", keys, "realizable", {{"p", 0.3}}, 64, 400, 3000, 2, 11, false, 4, 0,
                                 in(Precision::Float));
    const SimResult d = simulate("tree-experts", keys, "realizable", {{"p", 0.3}}, 64, 400, 3000, 2, 11, false, 4, 3000,
                                 in(Precision::Double));
    // Power: the continuous run at eps = 36 (twice the node noise) is another law.
    const SimResult e = simulate("tree-experts", {{"epsilon", 36.0}, {"set_size", 4.0}, {"max_sets", 8.0}, {"threshold", 6.0}},
                                 "realizable", {{"p", 0.3}}, 64, 400, 3000, 2, 11, false, 4, 6000, in(Precision::Double));
    test::expect_exact_law_is_continuous(f, d, e, "last_set_round", "eps 36 against 72");
}

} // namespace
