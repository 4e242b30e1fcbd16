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
#include <sys/ioctl.h>
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

/// A `dpregret run CONFIG --out OUT --quiet [extra...]` blocked inside its output writing: its summary.csv.tmp.<pid> is a
/// FIFO (made by the child before it execs, so the pid is the run's) that the test holds open and does not read,
/// so the run fills the pipe and waits there. pid < 0 if that state was not reached.
struct BlockedWriter {
    pid_t pid = -1;
    int fd = -1;       ///< the test's (read) end of the FIFO
    std::string fifo;  ///< its path
};

inline BlockedWriter run_blocked_in_output(const TempDir& dir, const std::string& config, const std::string& out_name,
                                           std::vector<std::string> extra = {}) {
    BlockedWriter w;
    std::filesystem::create_directories(dir.file(out_name));
    const std::string out = dir.file(out_name);
    const pid_t pid = ::fork();
    if (pid == 0) {
        const std::string fifo = out + "/summary.csv.tmp." + std::to_string(::getpid());
        if (::mkfifo(fifo.c_str(), 0644) != 0) ::_exit(90);
        if (::chdir(dir.path().c_str()) != 0) ::_exit(91);
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, 1);
        ::dup2(null, 2);
        const std::string bin = binary();
        std::vector<std::string> words = {bin, "run", config, "--out", out_name, "--quiet"};
        words.insert(words.end(), extra.begin(), extra.end());
        std::vector<char*> argv;
        for (std::string& w : words) argv.push_back(w.data());
        argv.push_back(nullptr);
        ::execv(bin.c_str(), argv.data());
        ::_exit(92);
    }
    w.pid = pid;
    w.fifo = out + "/summary.csv.tmp." + std::to_string(pid);
    for (int i = 0; i < 3000 && w.fd < 0; ++i) { // the FIFO appears at once; open our end without blocking
        w.fd = ::open(w.fifo.c_str(), O_RDONLY | O_NONBLOCK);
        if (w.fd < 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (w.fd < 0) return w;
    // Wait until the run has filled the pipe (tens of KiB that stop growing): it is then blocked writing.
    int queued = 0, last = -1, still = 0;
    for (int i = 0; i < 6000 && !(queued >= 16384 && still >= 30); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        ::ioctl(w.fd, FIONREAD, &queued);
        still = queued == last ? still + 1 : 0;
        last = queued;
    }
    if (queued < 16384) w.pid = -w.pid;
    return w;
}

} // namespace dpr::test
