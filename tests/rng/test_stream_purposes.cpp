// Learner and adversary streams never share counters (docs/RANDOMNESS.md §2). A draw's Philox
// counter carries its purpose in the top byte of word 3 (kernels/rng/stream.hpp make_counter), so two draws of
// different purposes never share a counter, whatever their other fields. What keeps learners and adversaries
// apart is therefore which purposes each side uses: the adversaries (kernels/adversaries/) draw only under
// Purpose::Adversary, and nothing else in kernels/ or host/ draws under it. This test reads the sources and holds
// them to that, and no code may make a Purpose from a number (which would escape the check).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "kernels/rng/stream.hpp"

namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// Every source file under DPREGRET_SOURCE_DIR/<dir>, with the Purpose names it mentions.
std::map<std::string, std::set<std::string>> purposes_under(const std::string& dir) {
    static const std::regex name(R"(Purpose::([A-Za-z]+))");
    std::map<std::string, std::set<std::string>> out;
    for (const auto& e : fs::recursive_directory_iterator(fs::path(DPREGRET_SOURCE_DIR) / dir)) {
        const std::string ext = e.path().extension().string();
        if (!e.is_regular_file() || (ext != ".hpp" && ext != ".cpp" && ext != ".cu" && ext != ".cuh")) continue;
        const std::string text = read(e.path());
        std::set<std::string>& used = out[fs::relative(e.path(), DPREGRET_SOURCE_DIR).string()];
        for (std::sregex_iterator it(text.begin(), text.end(), name), end; it != end; ++it) used.insert((*it)[1]);
    }
    return out;
}

} // namespace

TEST(StreamPurposes, DifferentPurposesNeverShareACounter) {
    dpr::rng::StreamId a, b;
    a.purpose = dpr::rng::Purpose::Adversary;
    for (const auto p : {dpr::rng::Purpose::Sampling, dpr::rng::Purpose::SparseVector, dpr::rng::Purpose::Exploration,
                         dpr::rng::Purpose::FeedbackNoise, dpr::rng::Purpose::Exponential, dpr::rng::Purpose::Inspect,
                         dpr::rng::Purpose::TreeStream}) {
        b.purpose = p;
        for (std::uint32_t block : {0u, 1u, 255u})
            EXPECT_NE(dpr::rng::make_counter(a, block).v[3], dpr::rng::make_counter(b, block).v[3])
                << static_cast<int>(p);
    }
}

TEST(StreamPurposes, OnlyTheAdversariesDrawUnderTheAdversaryPurposeAndTheyUseNoOther) {
    std::size_t adversary_files = 0, learner_side_files = 0;
    for (const char* dir : {"kernels", "host", "cuda"})
        for (const auto& [file, used] : purposes_under(dir)) {
            if (file == "kernels/rng/stream.hpp") continue; // the enum itself
            const bool adversary_side = file.rfind("kernels/adversaries/", 0) == 0;
            if (adversary_side) {
                adversary_files += !used.empty();
                for (const std::string& p : used)
                    EXPECT_EQ(p, "Adversary") << file << " draws a loss sequence under Purpose::" << p
                                              << ", a learner's purpose: its counters could meet a learner's";
            } else {
                learner_side_files += !used.empty();
                EXPECT_EQ(used.count("Adversary"), 0u)
                    << file << " draws under Purpose::Adversary: its counters could meet the loss sequence's";
            }
        }
    EXPECT_GE(adversary_files, 1u);      // the check saw the adversaries' stream builder
    EXPECT_GE(learner_side_files, 5u);   // ... and the learners' and mechanisms' draws
}

TEST(StreamPurposes, NoPurposeIsMadeFromANumber) {
    // static_cast<Purpose>(n), reinterpret_cast<Purpose&>(x), Purpose(n), Purpose{n}, (Purpose)n, Purpose p{n}
    static const std::regex cast(R"(Purpose\s*&?\s*>\s*\(|Purpose\s*\(|Purpose\s*\{|\(\s*(rng::)?Purpose\s*\)|)"
                                 R"(Purpose\s+\w+\s*[{(]\s*[0-9])");
    for (const char* dir : {"kernels", "host", "cuda"})
        for (const auto& e : fs::recursive_directory_iterator(fs::path(DPREGRET_SOURCE_DIR) / dir)) {
            if (!e.is_regular_file() || fs::relative(e.path(), DPREGRET_SOURCE_DIR) == fs::path("kernels/rng/stream.hpp"))
                continue;
            const std::string text = read(e.path());
            EXPECT_FALSE(std::regex_search(text, cast)) << e.path() << " makes a Purpose from a number";
        }
}
