#pragma once
// Running the built `dpregret` binary (DPREGRET_BINARY) from tests, as a user would: in a fresh
// temporary directory, capturing stdout, stderr and the exit code.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <stdlib.h>
#include <sys/wait.h>

namespace dpr::test {

class TempDir {
public:
    TempDir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "dpregret_cli_XXXXXX").string();
        if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
        path_ = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }
    std::string file(const std::string& name) const { return (path_ / name).string(); }
    /// Names in the directory, sorted.
    std::vector<std::string> list() const {
        std::vector<std::string> names;
        for (const auto& e : std::filesystem::directory_iterator(path_)) names.push_back(e.path().filename().string());
        std::sort(names.begin(), names.end());
        return names;
    }
    void write(const std::string& name, const std::string& text) const { std::ofstream(file(name)) << text; }

private:
    std::filesystem::path path_;
};

inline std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

struct CliResult {
    int rc = -1;
    std::string out, err;
};

/// The binary under test: DPREGRET_BINARY (this build's), or the environment variable
/// DPREGRET_TEST_BINARY if set, so that a regression test can be run against another build (e.g. the
/// main branch's) to show that it fails there.
inline std::string binary() {
    const char* env = std::getenv("DPREGRET_TEST_BINARY");
    return env && *env ? env : DPREGRET_BINARY;
}

/// Runs `[prefix] dpregret <args>` with `dir` as the working directory; stdout/stderr are captured
/// in a separate directory so that `dir` holds only what the command wrote. `prefix` may be e.g.
/// "timeout -s INT 2" to interrupt the run.
inline CliResult run_cli(const TempDir& dir, const std::string& args, const std::string& prefix = "") {
    static TempDir capture;
    const std::string out = capture.file("stdout"), err = capture.file("stderr");
    const std::string cmd = "cd '" + dir.path().string() + "' && " + prefix + " '" + binary() + "' " + args +
                            " >'" + out + "' 2>'" + err + "'";
    const int status = std::system(cmd.c_str());
    CliResult r;
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
}

} // namespace dpr::test
