// The include arrows of CONTRIBUTING.md "The layout": they only go down. kernels/ is plain device-and-host C++
// that includes nothing of host/ or cuda/; the library (host/ outside host/cli/, and cuda/) includes nothing
// of the command line (host/cli/), so that a front end other than the CLI (the Python package, a test) can
// link it. Checked on the sources, the way a reviewer would grep them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

/// "file:line: #include ..." for every quoted include of `root` (recursively) that starts with one of `banned`.
std::vector<std::string> includes_of(const std::string& root, const std::vector<std::string>& banned,
                                     const std::vector<std::string>& exempt = {}) {
    std::vector<std::string> hits;
    const fs::path base = fs::path(DPREGRET_SOURCE_DIR);
    for (const auto& e : fs::recursive_directory_iterator(base / root)) {
        if (!e.is_regular_file()) continue;
        const std::string rel = fs::relative(e.path(), base).string();
        bool skip = false;
        for (const std::string& x : exempt) skip |= rel.rfind(x, 0) == 0;
        if (skip) continue;
        std::ifstream in(e.path());
        std::string line;
        for (int n = 1; std::getline(in, line); ++n) {
            const std::size_t at = line.find("#include \"");
            if (at == std::string::npos || line.find_first_not_of(" \t") != at) continue;
            const std::string target = line.substr(at + 10);
            for (const std::string& b : banned)
                if (target.rfind(b, 0) == 0) hits.push_back(rel + ":" + std::to_string(n) + ": " + line);
        }
    }
    return hits;
}

std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& x : v) s += "\n  " + x;
    return s;
}

TEST(Layering, KernelsIncludeNothingOfTheHostOrTheDevice) {
    const auto hits = includes_of("kernels", {"host/", "cuda/"});
    EXPECT_TRUE(hits.empty()) << joined(hits);
}

TEST(Layering, TheLibraryIncludesNothingOfTheCommandLine) {
    const auto host = includes_of("host", {"host/cli/"}, {"host/cli/", "host/main.cpp"});
    EXPECT_TRUE(host.empty()) << joined(host);
    const auto cuda = includes_of("cuda", {"host/cli/"});
    EXPECT_TRUE(cuda.empty()) << joined(cuda);
}

TEST(Layering, ThePythonModuleStandsOnTheLibraryNotOnTheCommandLine) {
    // python/src/module.cpp is a front end like host/cli/: it includes host/api/ (and what the library exports),
    // never the command line; and nothing of the library includes the package.
    const auto py = includes_of("python", {"host/cli/"});
    EXPECT_TRUE(py.empty()) << joined(py);
    const auto back = includes_of("host", {"python/"});
    EXPECT_TRUE(back.empty()) << joined(back);
}

TEST(Layering, TheExecutorFoldersIncludeNothingAboveThem) {
    // From the bottom up (CONTRIBUTING.md): host/backend, the interface both executors implement; host/cpu, the
    // CPU executor; host/engine, a point run on either; host/results, what a run keeps and writes; host/api.
    const std::vector<std::string> order = {"host/backend/", "host/cpu/", "host/engine/", "host/results/", "host/api/"};
    for (std::size_t i = 0; i + 1 < order.size(); ++i) {
        const std::vector<std::string> above(order.begin() + static_cast<std::ptrdiff_t>(i) + 1, order.end());
        const auto hits = includes_of(order[i].substr(0, order[i].size() - 1), above);
        EXPECT_TRUE(hits.empty()) << order[i] << " includes a folder above it:" << joined(hits);
    }
}

TEST(Layering, TheCheckSeesAnIncludeWhereOneIs) {
    // The scan itself must find what it looks for (else the tests above pass on a wrong path or pattern).
    EXPECT_FALSE(includes_of("host/cli", {"host/api/"}).empty());
    EXPECT_FALSE(includes_of("host", {"kernels/"}).empty());
    EXPECT_FALSE(includes_of("host/results", {"host/engine/"}).empty());
    EXPECT_FALSE(includes_of("python", {"host/api/"}).empty());
}

} // namespace
