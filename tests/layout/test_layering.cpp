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

// CONTRIBUTING.md's layout table is the rule: for every row whose "may include" column names what it may include
// (backticked folders or files, "nothing", "the kernels above", "everything above", "the layers above them in this
// table"), every quoted include of the row's sources must be its own folder's or one of those. A row that says
// "never" or "and what it includes" (python/), and tests/ and experiments/, are checked elsewhere or not at all.
struct Row {
    std::vector<std::string> paths;   ///< the row's folders ("kernels/core/") or files ("host/version.hpp")
    std::vector<std::string> allowed; ///< what they may include, resolved
    std::string text;                 ///< the row, for messages
};

std::vector<std::string> backticked(const std::string& cell) {
    std::vector<std::string> out;
    for (std::size_t a = cell.find('`'); a != std::string::npos; a = cell.find('`', a)) {
        const std::size_t b = cell.find('`', a + 1);
        if (b == std::string::npos) break;
        out.push_back(cell.substr(a + 1, b - a - 1));
        a = b + 1;
    }
    return out;
}

std::vector<Row> layout_rows() {
    std::ifstream in(std::string(DPREGRET_SOURCE_DIR) + "/CONTRIBUTING.md");
    std::string line;
    bool in_table = false;
    std::vector<Row> rows;
    std::vector<std::string> above, kernels_above;
    while (std::getline(in, line)) {
        if (line.rfind("| folder | holds | may include |", 0) == 0) in_table = true;
        if (!in_table) continue;
        if (line.empty()) break;
        if (line.rfind("| `", 0) != 0) continue;
        std::vector<std::string> cells;
        for (std::size_t a = 0, b; (b = line.find('|', a + 1)) != std::string::npos; a = b) cells.push_back(line.substr(a + 1, b - a - 1));
        if (cells.size() < 3) continue;
        Row r;
        r.paths = backticked(cells[0]);
        r.text = line;
        std::string may = cells.back();
        for (const char* stop : {" but ", "never"}) {
            const std::size_t at = may.find(stop);
            if (at != std::string::npos) may = may.substr(0, at);
        }
        const bool skip = r.paths.empty() || r.paths[0] == "tests/<area>/" || r.paths[0] == "experiments/" ||
                          may.find("what it includes") != std::string::npos;
        if (!skip) {
            for (std::string t : backticked(may)) r.allowed.push_back(t.find('/') == std::string::npos ? "kernels/" + t : t);
            if (may.find("everything above") != std::string::npos || may.find("the layers above") != std::string::npos)
                r.allowed.insert(r.allowed.end(), above.begin(), above.end());
            if (may.find("the kernels above") != std::string::npos)
                r.allowed.insert(r.allowed.end(), kernels_above.begin(), kernels_above.end());
            r.allowed.insert(r.allowed.end(), r.paths.begin(), r.paths.end()); // a row's folders are one layer
            rows.push_back(r);
        }
        for (const std::string& p : r.paths) {
            above.push_back(p);
            if (p.rfind("kernels/", 0) == 0) kernels_above.push_back(p);
        }
    }
    return rows;
}

/// `target` (an include path) is `token` or inside it (a folder token ends in '/', or names a folder without it).
bool within(const std::string& target, const std::string& token) {
    if (target == token) return true;
    const std::string folder = token.back() == '/' ? token : token + "/";
    return target.rfind(folder, 0) == 0;
}

TEST(Layering, EveryIncludeIsOneTheLayoutTableAllows) {
    const std::vector<Row> rows = layout_rows();
    ASSERT_GE(rows.size(), 14u) << "the table of CONTRIBUTING.md \"The layout\" was not found or not parsed";
    const fs::path base = fs::path(DPREGRET_SOURCE_DIR);
    std::vector<std::string> bad;
    std::size_t checked = 0;
    for (const Row& r : rows)
        for (const std::string& p : r.paths) {
            std::vector<fs::path> files;
            if (fs::is_directory(base / p)) {
                for (const auto& e : fs::recursive_directory_iterator(base / p))
                    if (e.is_regular_file()) files.push_back(e.path());
            } else if (fs::is_regular_file(base / p)) {
                files.push_back(base / p);
            } else {
                bad.push_back("CONTRIBUTING.md names " + p + ", which does not exist");
            }
            for (const fs::path& f : files) {
                std::ifstream in(f);
                std::string line;
                for (int n = 1; std::getline(in, line); ++n) {
                    const std::size_t at = line.find("#include \"");
                    if (at == std::string::npos || line.find_first_not_of(" \t") != at) continue;
                    const std::string target = line.substr(at + 10, line.find('"', at + 10) - at - 10);
                    if (target.find('/') == std::string::npos) continue; // a generated file beside it
                    ++checked;
                    bool ok = false;
                    for (const std::string& t : r.allowed) ok |= within(target, t);
                    if (!ok)
                        bad.push_back(fs::relative(f, base).string() + ":" + std::to_string(n) + ": " + target +
                                      " (not in the row of " + p + ")");
                }
            }
        }
    EXPECT_GT(checked, 500u);
    EXPECT_TRUE(bad.empty()) << "includes the table of CONTRIBUTING.md does not allow:" << joined(bad);
}

TEST(Layering, TheTableCheckRefusesAnArrowTheTableDoesNotName) {
    // The parse must give each row what it says, no more: kernels/core may include nothing, kernels/rng only
    // kernels/core, cuda/ not host/engine.
    const std::vector<Row> rows = layout_rows();
    const auto row_of = [&](const std::string& p) -> const Row* {
        for (const Row& r : rows)
            for (const std::string& q : r.paths)
                if (q == p) return &r;
        return nullptr;
    };
    const auto allows = [](const Row* r, const std::string& target) {
        bool ok = false;
        for (const std::string& t : r->allowed) ok |= within(target, t);
        return ok;
    };
    const Row* core = row_of("kernels/core/");
    const Row* rng = row_of("kernels/rng/");
    const Row* cuda = row_of("cuda/");
    ASSERT_TRUE(core && rng && cuda);
    EXPECT_FALSE(allows(core, "kernels/rng/philox.hpp"));
    EXPECT_TRUE(allows(rng, "kernels/core/hd.hpp"));
    EXPECT_FALSE(allows(rng, "kernels/mechanisms/blt.hpp"));
    EXPECT_FALSE(allows(cuda, "host/engine/point_runner.hpp"));
    EXPECT_TRUE(allows(cuda, "host/cpu/parallel.hpp"));
    EXPECT_FALSE(allows(cuda, "host/cpu/cpu_engine_impl.hpp"));
}

TEST(Layering, TheCheckSeesAnIncludeWhereOneIs) {
    // The scan itself must find what it looks for (else the tests above pass on a wrong path or pattern).
    EXPECT_FALSE(includes_of("host/cli", {"host/api/"}).empty());
    EXPECT_FALSE(includes_of("host", {"kernels/"}).empty());
    EXPECT_FALSE(includes_of("host/results", {"host/engine/"}).empty());
    EXPECT_FALSE(includes_of("python", {"host/api/"}).empty());
}

} // namespace
