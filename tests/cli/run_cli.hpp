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

#include <chrono>
#include <thread>

#include <fcntl.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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
/// "timeout --foreground -s INT 2" to interrupt the run. (Without --foreground, GNU timeout signals the command and
/// then its whole process group, so the command may get the signal twice -- the second one stops it at once.)
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

/// In a forked child: replaces it with the binary under test, given `args` (exits 92 if that fails).
[[noreturn]] inline void exec_binary(std::vector<std::string> args) {
    const std::string bin = binary();
    args.insert(args.begin(), bin);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(bin.c_str(), argv.data());
    ::_exit(92);
}

/// A `dpregret run CONFIG --out OUT --quiet [extra...]` held inside its output writing: the test waits until its
/// summary.csv.tmp.<pid> exists and stops it there (SIGSTOP), so that it holds its lock and its .progress while the
/// test acts; SIGKILL ends it, SIGCONT lets it go on. (Tests used to plant a FIFO at that name for the run to block
/// in; dpregret now refuses a special file where it writes, docs/OUTPUTS.md "Links and special files".) The config
/// must make the output writing last long enough (a second) to be caught. pid < 0 if that state was not reached.
struct BlockedWriter {
    pid_t pid = -1;
    std::string temp; ///< the path of its summary.csv.tmp.<pid>
    std::string err;  ///< the file its stderr goes to
};

inline BlockedWriter run_blocked_in_output(const TempDir& dir, const std::string& config, const std::string& out_name,
                                           std::vector<std::string> extra = {}) {
    static TempDir capture;
    BlockedWriter w;
    std::filesystem::create_directories(dir.file(out_name));
    const std::string out = dir.file(out_name);
    w.err = capture.file("stderr." + out_name);
    const pid_t pid = ::fork();
    if (pid == 0) {
        if (::chdir(dir.path().c_str()) != 0) ::_exit(91);
        const int null = ::open("/dev/null", O_WRONLY);
        const int err = ::open(w.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(null, 1);
        ::dup2(err, 2);
        std::vector<std::string> words = {"run", config, "--out", out_name, "--quiet"};
        words.insert(words.end(), extra.begin(), extra.end());
        exec_binary(words);
    }
    w.pid = pid;
    w.temp = out + "/summary.csv.tmp." + std::to_string(pid);
    struct stat st {};
    bool seen = false;
    for (int i = 0; i < 600000 && !seen; ++i) { // up to a minute, in steps of 0.1 ms
        seen = ::stat(w.temp.c_str(), &st) == 0;
        if (!seen) {
            if (::waitpid(pid, nullptr, WNOHANG) == pid) break; // it ended without reaching its output
            std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
    }
    if (seen) ::kill(pid, SIGSTOP);
    // Stopped while still writing: its temporary file is there and run.json is not.
    const bool inside = seen && ::stat(w.temp.c_str(), &st) == 0 && ::stat((out + "/run.json").c_str(), &st) != 0;
    if (!inside) w.pid = -w.pid;
    return w;
}

} // namespace dpr::test
