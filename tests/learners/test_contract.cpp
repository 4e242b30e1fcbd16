// The compile-time learner contract (kernels/learners/contract.hpp): every registered learner satisfies it
// (registry.hpp static_asserts that; here it is restated member by member so a failure names the member), and
// each member check rejects a learner that gets that member wrong -- a checker that accepted anything would
// pass the first half and fail the second.
#include <array>
#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "host/config/component_info.hpp"
#include "host/engine/registry.hpp"
#include "kernels/learners/contract.hpp"
#include "kernels/learners/registry.hpp"

namespace dpr::learners {
namespace {

namespace c = contract;

template <class L>
void expect_conforms() {
    EXPECT_TRUE(c::Declares<L>::name) << L::kName;
    EXPECT_TRUE(c::Declares<L>::geometry) << L::kName;
    EXPECT_TRUE(c::Declares<L>::keys) << L::kName;
    EXPECT_TRUE(c::Declares<L>::lane_flag) << L::kName;
    EXPECT_TRUE(c::Declares<L>::params) << L::kName;
    EXPECT_TRUE(c::Declares<L>::resolve) << L::kName;
    EXPECT_TRUE(c::Declares<L>::check) << L::kName;
    EXPECT_TRUE(c::Declares<L>::privacy) << L::kName;
    EXPECT_TRUE(c::Declares<L>::workspace) << L::kName;
    EXPECT_TRUE(c::Declares<L>::init) << L::kName;
    EXPECT_TRUE(c::Declares<L>::template round<double>) << L::kName;
    EXPECT_TRUE(c::Declares<L>::template round<float>) << L::kName;
    EXPECT_TRUE(c::Declares<L>::diagnostics) << L::kName;
}

TEST(LearnerContract, EveryRegisteredLearnerSatisfiesEveryMember) {
    int n = 0;
    for_each_type(AllLearners{}, [&](auto tag) {
        expect_conforms<typename decltype(tag)::type>();
        ++n;
    });
    EXPECT_EQ(n, static_cast<int>(AllLearners::size));
}

// Mutants of a correct learner (Hedge), each shadowing one member with a wrong declaration.
struct WrongName : Hedge {
    static constexpr int kName = 3;
};
struct WrongGeometry : Hedge {
    static constexpr int kGeometry = 0;
};
struct WrongKeys : Hedge {
    static constexpr std::array<const char*, 1> kKeys = {"eta"};
};
struct WrongLaneFlag : Hedge {
    static constexpr int kInstanceLanes = 1;
};
struct WrongPrivacy : Hedge {
    static double privacy(const Params&) { return 1.0; }
};
struct WrongCheck : Hedge {
    static bool check(const KeyValues&, const Problem&) { return true; } // no Diagnostic to explain a refusal
};
struct WrongWorkspace : Hedge {
    static std::uint64_t workspace(const Params&) { return 0; }
};
struct NonTrivialParams : Hedge {
    struct Params {
        std::string label; // not trivially copyable: cannot be copied to the GPU as bytes
    };
};
struct WrongRound : Hedge {
    template <class Team, class WS, class Row>
    static double round(const Params&, const Team&, const WS&, std::uint64_t, const Row&) { return 0.0; }
};
struct DiagnosticsWithoutReader : Hedge {
    static constexpr std::array<const char*, 1> kDiagnostics = {"max_noise_inf"};
};

// The host's dispatch from a name or a registry index to the type (kernels/core/type_list.hpp): every learner is
// found at its own position, both ways, and a name or index outside the registry reaches no learner.
TEST(LearnerRegistry, NameAndIndexDispatchReachExactlyTheLearnerAtThatPosition) {
    std::size_t position = 0;
    for_each_type(AllLearners{}, [&](auto tag) {
        using L = typename decltype(tag)::type;
        EXPECT_EQ(index_named(AllLearners{}, L::kName), position) << L::kName;
        std::string reached;
        int calls = 0;
        EXPECT_TRUE(with_type_at(AllLearners{}, position, [&](auto t) {
            reached = decltype(t)::type::kName;
            ++calls;
        }));
        EXPECT_EQ(reached, L::kName);
        EXPECT_EQ(calls, 1) << L::kName;
        ++position;
    });
    EXPECT_EQ(index_named(AllLearners{}, "no-such-learner"), AllLearners::size);
    EXPECT_EQ(index_named(AllLearners{}, ""), AllLearners::size);
    int calls = 0;
    EXPECT_FALSE(with_type_at(AllLearners{}, AllLearners::size, [&](auto) { ++calls; }));
    EXPECT_EQ(calls, 0);
}

TEST(LearnerContract, EachMemberCheckRejectsALearnerThatGetsItWrong) {
    EXPECT_TRUE(c::Declares<Hedge>::name);
    EXPECT_FALSE(c::Declares<WrongName>::name);
    EXPECT_FALSE(c::Declares<WrongGeometry>::geometry);
    EXPECT_FALSE(c::Declares<WrongKeys>::keys);
    EXPECT_FALSE(c::Declares<WrongLaneFlag>::lane_flag);
    EXPECT_FALSE(c::Declares<WrongPrivacy>::privacy);
    EXPECT_FALSE(c::Declares<WrongCheck>::check);
    EXPECT_FALSE(c::Declares<WrongWorkspace>::workspace);
    EXPECT_FALSE(c::Declares<NonTrivialParams>::resolve); // resolve() still returns Hedge::Params
    EXPECT_FALSE(std::is_trivially_copyable<NonTrivialParams::Params>::value);
    EXPECT_FALSE(c::Declares<WrongRound>::round<double>);
    EXPECT_TRUE(c::Declares<WrongRound>::init); // only the member that is wrong is flagged
    EXPECT_FALSE(c::Declares<DiagnosticsWithoutReader>::diagnostics);
    EXPECT_TRUE(c::Declares<Hedge>::diagnostics); // no kDiagnostics: nothing to read
    EXPECT_TRUE(c::Declares<DpFtrlSphere>::diagnostics_list);
    EXPECT_TRUE(c::Declares<DpFtrlSphere>::diagnostics); // kDiagnostics and its reader
}

// The optional members (kernels/core/detect.hpp): absent, the default; present, the declared value; and a
// member function with the right name but without Params to return is not a resolve().
struct NoMembers {};
struct ResolveWithoutParams {
    static void resolve(const KeyValues&, const Problem&) {}
};
struct FlagsSet : Hedge {
    static constexpr bool kReadsCumulative = true;
    static constexpr bool kSerialRound = true;
    static constexpr bool kRowInRegisters = false;
};

TEST(LearnerContract, OptionalMembersTakeTheirDefaultOnlyWhenAbsent) {
    EXPECT_FALSE(ReadsCumulative<Hedge>::value);
    EXPECT_TRUE(ReadsCumulative<SvtExperts>::value);
    EXPECT_TRUE(ReadsCumulative<FlagsSet>::value);
    EXPECT_TRUE(SerialRound<FlagsSet>::value);
    EXPECT_FALSE(SerialRound<Hedge>::value);
    EXPECT_FALSE(RowInRegisters<FlagsSet>::value);
    EXPECT_TRUE(RowInRegisters<Hedge>::value);
    EXPECT_EQ(DiagnosticCount<Hedge>::value, 0u);
    EXPECT_EQ(DiagnosticCount<SvtExperts>::value, SvtExperts::kDiagnostics.size());
    EXPECT_EQ(LossFamiliesOf<Hedge>::value, loss_bit(LossFamily::Linear));
    EXPECT_FALSE(HasPlant<Hedge>::value);
    EXPECT_TRUE(HasPlant<DpFtrlExperts>::value);
    EXPECT_FALSE(c::Declares<NoMembers>::name);
    EXPECT_FALSE(c::Declares<NoMembers>::params);
    EXPECT_FALSE(c::Declares<NoMembers>::resolve);
    EXPECT_FALSE(c::Declares<ResolveWithoutParams>::resolve);
}

// Every learner's workspace() was computed in 32 bits and wrapped (scrible-cube at
// d = 858993460 asked for 6 MB and segfaulted). The per-instance state of every learner, resolved at the
// largest d values, must hold at least its d-sized array (d - 1 for the simplex's n = d - 1) and grow with d.
TEST(LearnerWorkspace, StateSizesAre64BitForEveryLearnerUpToTheLargestD) {
    const auto linfo = config::describe_all<AllLearners>("learner");
    for (const config::ComponentInfo& c : linfo) {
        KeyValues kv;
        for (const auto& [key, value] : {std::pair{"epsilon", 1.0}, std::pair{"delta", 1e-6}}) {
            const int i = c.key_index(key);
            if (i < 0) continue;
            kv.num[i] = value;
            kv.given[i] = true;
        }
        std::uint64_t previous = 0;
        for (const std::uint32_t d : {1000u, 858993460u, 1u << 30, 2147483647u, 4294967295u}) {
            Problem pb;
            pb.d = d;
            pb.T = 2;
            pb.seed = 1;
            const LearnerRuntime lr = resolve_learner(c.name, kv, pb);
            if (c.name == "tree-experts") {
                // L_{t-1} from the engine, but its own state is the union of its earlier sets: an excluded flag per
                // expert (d doubles) plus the B <= ceil(log2(2d))^2 <= 33^2 members of the live set and their base.
                EXPECT_GE(lr.state_bytes, std::uint64_t{d} * sizeof(double)) << c.name << " d = " << d;
                EXPECT_LE(lr.state_bytes, (std::uint64_t{d} + 2 * 33 * 33 + 64) * sizeof(double) + 1024) << c.name << " d = " << d;
                continue;
            }
            if (lr.reads_cumulative) {
                // L_{t-1} comes from the engine (kReadsCumulative): the learner's own state must not grow with d
                // (O(1) per instance at d = 2^20).
                if (previous > 0) EXPECT_EQ(lr.state_bytes, previous) << c.name << " d = " << d;
                EXPECT_LE(lr.state_bytes, 1024u) << c.name << " d = " << d;
                previous = lr.state_bytes;
                continue;
            }
            EXPECT_GE(lr.state_bytes, (std::uint64_t{d} - 1) * sizeof(double)) << c.name << " d = " << d;
            EXPECT_LT(lr.state_bytes, std::numeric_limits<std::uint64_t>::max()) << c.name << " d = " << d;
            EXPECT_GE(lr.state_bytes, previous) << c.name << ": the state shrank as d grew to " << d;
            previous = lr.state_bytes;
        }
    }
}

} // namespace
} // namespace dpr::learners
