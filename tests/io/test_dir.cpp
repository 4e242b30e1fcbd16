// host/io/dir.hpp and what is built on it (AtomicFile, DirectoryLock, OutputDirectory): a directory that
// someone else can write into (docs/OUTPUTS.md "Links and special files in an output directory"). Every name
// dpregret creates, opens, renames or removes there is refused -- never followed -- when it is a symbolic
// link (to a file or to a directory) or a special file, and the link's target is left exactly as it was.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <csignal>
#include <cstring>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host/io/atomic_file.hpp"
#include "host/io/dir.hpp"
#include "host/io/dir_lock.hpp"
#include "host/io/durable.hpp"
#include "host/io/npy.hpp"
#include "host/io/run_dir.hpp"

#include "cli/run_cli.hpp"

namespace fs = std::filesystem;
using namespace dpr::io;

using dpr::test::slurp;
using dpr::test::TempDir;

namespace {

void spit(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

std::vector<std::string> listing(const std::string& dir) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

/// A victim outside the directory: a file with known bytes and a directory with one known file. A link placed
/// in the shared directory points at one of them; afterwards both must be exactly as they were.
struct Victims {
    explicit Victims(const TempDir& t) : file(t.file("thesis.tex")), dir(t.file("home")) {
        spit(file, "my thesis\n");
        fs::create_directory(dir);
        spit(dir + "/notes.txt", "notes\n");
    }
    bool intact() const {
        return slurp(file) == "my thesis\n" && listing(dir) == std::vector<std::string>{"notes.txt"} &&
               slurp(dir + "/notes.txt") == "notes\n";
    }
    std::string file, dir;
};

template <class F>
std::string unsafe_error_of(F&& f) {
    try {
        f();
    } catch (const UnsafePathError& e) {
        return e.what();
    } catch (const std::exception& e) {
        return std::string("another error: ") + e.what();
    }
    return "no error";
}

} // namespace

// ---- Dir --------------------------------------------------------------------------------------------------

TEST(Dir, ReadsRefuseLinksAndSpecialFilesWithoutHangingOnAFifo) {
    TempDir t;
    const Victims v(t);
    fs::create_directory(t.file("out"));
    const Dir out = Dir::open(t.file("out"), "--out");
    for (const std::string& target : {v.file, v.dir}) {
        fs::remove(t.file("out/spec.json"));
        fs::create_symlink(target, t.file("out/spec.json"));
        const std::string m = unsafe_error_of([&] { (void)InFile::open(out, "spec.json"); });
        EXPECT_TRUE(contains(m, t.file("out/spec.json") + " is a symbolic link")) << m;
        EXPECT_EQ(out.kind("spec.json"), EntryKind::Link);
        EXPECT_TRUE(contains(unsafe_error_of([&] { (void)out.has_file("spec.json"); }), "symbolic link"));
    }
    ASSERT_EQ(::mkfifo(t.file("out/p0.npy").c_str(), 0644), 0);
    const auto t0 = std::chrono::steady_clock::now();
    const std::string m = unsafe_error_of([&] { (void)read_npy(out, "p0.npy"); });
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5)) << "a FIFO was waited on";
    EXPECT_TRUE(contains(m, "p0.npy is a FIFO")) << m;
    fs::create_directory(t.file("out/d.json"));
    EXPECT_TRUE(contains(unsafe_error_of([&] { (void)InFile::open(out, "d.json"); }), "is a directory"));
    EXPECT_TRUE(v.intact());
}

TEST(Dir, ASubdirectoryThatIsALinkIsRefusedAndRemoveTreeNeverFollowsLinks) {
    TempDir t;
    const Victims v(t);
    fs::create_directory(t.file("out"));
    const Dir out = Dir::open(t.file("out"), "--out");
    fs::create_symlink(v.dir, t.file("out/.progress"));
    EXPECT_TRUE(
        contains(unsafe_error_of([&] { (void)out.open_sub(".progress"); }), ".progress is a symbolic link"));
    EXPECT_TRUE(
        contains(unsafe_error_of([&] { (void)out.make_sub(".progress"); }), ".progress is a symbolic link"));
    // A tree of real directories with links inside, to the victim file and the victim directory.
    fs::create_directories(t.file("out/.progress.removed/sub"));
    fs::create_symlink(v.dir, t.file("out/.progress.removed/home"));
    fs::create_symlink(v.file, t.file("out/.progress.removed/sub/thesis"));
    spit(t.file("out/.progress.removed/sub/p0.b0.npy"), "x");
    out.remove_tree(".progress.removed");
    out.remove_tree(".progress"); // the link itself
    EXPECT_EQ(listing(t.file("out")), std::vector<std::string>{});
    EXPECT_TRUE(v.intact());
}

TEST(Dir, RenameRefusesADestinationThatIsALinkOrADirectory) {
    TempDir t;
    const Victims v(t);
    fs::create_directory(t.file("out"));
    const Dir out = Dir::open(t.file("out"), "--out");
    spit(t.file("out/a.tmp.1"), "new");
    fs::create_symlink(v.file, t.file("out/a"));
    EXPECT_TRUE(contains(unsafe_error_of([&] { out.rename("a.tmp.1", "a"); }), "/out/a is a symbolic link"));
    fs::remove(t.file("out/a"));
    fs::create_directory(t.file("out/a"));
    EXPECT_TRUE(contains(unsafe_error_of([&] { out.rename("a.tmp.1", "a"); }), "/out/a is a directory"));
    EXPECT_TRUE(v.intact());
    EXPECT_EQ(slurp(t.file("out/a.tmp.1")), "new");
}

// ---- AtomicFile -------------------------------------------------------------------------------------------

// The temporary name is predictable (<name>.tmp.<pid>): a link planted there used to be opened with O_TRUNC
// and written through.
TEST(AtomicFileLinks, ALinkAtTheTemporaryNameIsRefusedNotWrittenThrough) {
    TempDir t;
    const Victims v(t);
    fs::create_directory(t.file("out"));
    const Dir out = Dir::open(t.file("out"), "--out");
    const std::string temp = "summary.csv.tmp." + std::to_string(::getpid());
    for (const std::string& target : {v.file, v.dir}) {
        fs::remove(t.file("out/" + temp));
        fs::create_symlink(target, t.file("out/" + temp));
        const std::string m = unsafe_error_of([&] { AtomicFile f(out, "summary.csv"); });
        EXPECT_TRUE(contains(m, temp + " is a symbolic link")) << m;
        EXPECT_TRUE(v.intact());
    }
    // The path-based form (a file the user names) is as careful inside the directory it names.
    const std::string m = unsafe_error_of([&] { AtomicFile f(t.file("out/summary.csv")); });
    EXPECT_TRUE(contains(m, temp + " is a symbolic link")) << m;
    EXPECT_FALSE(fs::exists(t.file("out/summary.csv")));
    EXPECT_TRUE(v.intact());
}

TEST(AtomicFileLinks, ADestinationSwappedForALinkBeforeTheCommitIsRefused) {
    TempDir t;
    const Victims v(t);
    fs::create_directory(t.file("out"));
    const Dir out = Dir::open(t.file("out"), "--out");
    for (const std::string& target : {v.file, v.dir}) {
        fs::remove(t.file("out/run.json")); // the previous iteration's link
        AtomicFile f(out, "run.json");
        f.stream() << "{}\n";
        fs::create_symlink(target, t.file("out/run.json")); // after the constructor looked
        const std::string m = unsafe_error_of([&] { f.commit(); });
        EXPECT_TRUE(contains(m, "run.json is a symbolic link")) << m;
        EXPECT_EQ(listing(t.file("out")), std::vector<std::string>{"run.json"})
            << "the temporary file is removed";
        EXPECT_TRUE(v.intact());
    }
}

TEST(AtomicFileLinks, AStaleRegularTemporaryFileOfThisPidIsReplaced) {
    TempDir t;
    fs::create_directory(t.file("out"));
    const Dir out = Dir::open(t.file("out"), "--out");
    spit(t.file("out/x.csv.tmp." + std::to_string(::getpid())), "left by a killed process with this pid");
    AtomicFile f(out, "x.csv");
    f.stream() << "new";
    f.commit();
    EXPECT_EQ(slurp(t.file("out/x.csv")), "new");
    EXPECT_EQ(listing(t.file("out")), std::vector<std::string>{"x.csv"});
}

// A write that the system refuses (here EFBIG, from a file-size limit, as a full disk gives ENOSPC) is
// reported with the system's reason, not "unknown error", and leaves nothing. Run in a child, whose limit
// does not touch the test runner.
TEST(AtomicFileErrors, AFailedWriteNamesTheSystemsReason) {
    TempDir t;
    fs::create_directory(t.file("out"));
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        std::signal(SIGXFSZ, SIG_IGN);
        rlimit lim{4096, 4096};
        if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) ::_exit(3);
        try {
            const Dir out = Dir::open(t.file("out"), "--out");
            AtomicFile f(out, "summary.csv");
            f.stream() << std::string(1 << 20, 'x');
            f.commit();
        } catch (const IoError& e) {
            const std::string m = e.what();
            ::_exit(contains(m, "summary.csv' failed: " + std::string(std::strerror(EFBIG))) ? 0 : 4);
        }
        ::_exit(5);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "3: setrlimit failed, 4: the message lacks the reason, 5: no error";
    EXPECT_EQ(listing(t.file("out")), std::vector<std::string>{});
}

// ---- DirectoryLock ----------------------------------------------------------------------------------------

TEST(DirectoryLockLinks, ALockFileThatIsALinkOrSpecialIsRefusedAndItsTargetUntouched) {
    TempDir t;
    const Victims v(t);
    fs::create_directory(t.file("out"));
    const Dir out = Dir::open(t.file("out"), "--out");
    for (const std::string& target : {v.file, v.dir}) {
        fs::remove(t.file("out/.lock"));
        fs::create_symlink(target, t.file("out/.lock"));
        const std::string m = unsafe_error_of([&] { (void)DirectoryLock::acquire(out, "--out"); });
        EXPECT_TRUE(contains(m, "out/.lock is a symbolic link")) << m;
        EXPECT_TRUE(v.intact());
    }
    fs::remove(t.file("out/.lock"));
    ASSERT_EQ(::mkfifo(t.file("out/.lock").c_str(), 0644), 0);
    EXPECT_TRUE(
        contains(unsafe_error_of([&] { (void)DirectoryLock::acquire(out, "--out"); }), ".lock is a FIFO"));
    fs::remove(t.file("out/.lock"));
    fs::create_directory(t.file("out/.lock"));
    EXPECT_TRUE(contains(unsafe_error_of([&] { (void)DirectoryLock::acquire(out, "--out"); }),
                         ".lock is a directory"));
}

// dpregret writes its holder line only into a .lock it created: a stale .lock that is a hard link to
// someone's file (or any file of someone else's) is removed and created anew, never truncated.
TEST(DirectoryLockLinks, AStaleLockIsReplacedNotWrittenInto) {
    TempDir t;
    const Victims v(t);
    fs::create_directory(t.file("out"));
    ASSERT_EQ(::link(v.file.c_str(), t.file("out/.lock").c_str()), 0);
    const Dir out = Dir::open(t.file("out"), "--out");
    {
        DirectoryLock lock = DirectoryLock::acquire(out, "--out");
        EXPECT_TRUE(lock.held());
        EXPECT_TRUE(contains(slurp(t.file("out/.lock")), "pid " + std::to_string(::getpid()) + " on host "));
        EXPECT_TRUE(v.intact()) << "the hard-linked file was written into";
    }
    EXPECT_FALSE(fs::exists(t.file("out/.lock"))) << "released: removed";
    EXPECT_TRUE(v.intact());
}

// A lock held by another process is refused naming its holder, even when its file is not writable by us:
// flock needs only a read-only descriptor.
TEST(DirectoryLockLinks, AHeldLockIsNamedThroughAReadOnlyDescriptor) {
    TempDir t;
    fs::create_directory(t.file("out"));
    const Dir out = Dir::open(t.file("out"), "--out");
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t child = ::fork();
    if (child == 0) {
        try {
            DirectoryLock lock = DirectoryLock::acquire(out, "--out");
            ::chmod(lock.path().c_str(), 0444);
            if (::write(ready[1], "x", 1) != 1) ::_exit(1);
            ::pause();
        } catch (...) {
            ::_exit(2);
        }
        ::_exit(0);
    }
    char c = 0;
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    std::string m;
    try {
        (void)DirectoryLock::acquire(out, "--out");
    } catch (const IoError& e) {
        m = e.what();
    }
    EXPECT_TRUE(contains(m, "in use by another dpregret process (pid " + std::to_string(child) + " on host "))
        << m;
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    ::close(ready[0]);
    ::close(ready[1]);
    // The holder died: its lock is stale and taken over.
    DirectoryLock lock = DirectoryLock::acquire(out, "--out");
    EXPECT_TRUE(lock.held());
}

// ---- OutputDirectory --------------------------------------------------------------------------------------

// Every name dpregret writes in an output directory, as a link to a file and to a directory: refused when the
// directory is opened (before anything is simulated), naming it; nothing of the victims changes.
TEST(OutputDirectoryLinks, ALinkAtAnyNameDpregretWritesIsRefusedWhenTheDirectoryIsOpened) {
    const std::vector<std::string> names = {"summary.csv",
                                            "final_regret.csv",
                                            "points.jsonl",
                                            "run.json",
                                            "statistic.npy",
                                            "privacy_region.csv",
                                            "shard.json",
                                            "p0.regret.npy",
                                            "p12.diagnostics.npy",
                                            ".progress",
                                            ".progress.removed",
                                            "run.json.tmp.99999999",
                                            "p3.nonfinite.npy.tmp.1",
                                            "audit.json.tmp.123",
                                            ".dpregret-probe.77"};
    for (const std::string& name : names)
        for (const bool to_dir : {false, true}) {
            TempDir t;
            const Victims v(t);
            fs::create_directory(t.file("out"));
            fs::create_symlink(to_dir ? v.dir : v.file, t.file("out/" + name));
            for (const OutputKind kind : {OutputKind::Run, OutputKind::Shard, OutputKind::Audit}) {
                const std::string m =
                    unsafe_error_of([&] { (void)OutputDirectory::open(t.file("out"), kind); });
                EXPECT_TRUE(contains(m, "out/" + name + " is a symbolic link")) << name << ": " << m;
            }
            EXPECT_EQ(listing(t.file("out")), std::vector<std::string>{name})
                << name << ": no .lock or probe left";
            EXPECT_TRUE(v.intact()) << name;
        }
}

TEST(OutputDirectoryLinks, ANameOfTheUsersOwnIsLeftAlone) {
    TempDir t;
    const Victims v(t);
    fs::create_directory(t.file("out"));
    fs::create_symlink(v.dir, t.file("out/data"));
    fs::create_symlink(v.file, t.file("out/losses.npy"));
    OutputDirectory out = OutputDirectory::open(t.file("out"), OutputKind::Run);
    EXPECT_EQ(out.dir().kind("data"), EntryKind::Link);
    out.remove_created();
}

// Results of different kinds never mix: a run, a shard or an audit refuses a directory that holds any
// complete result or an unfinished run, naming it.
TEST(OutputDirectoryKinds, ADirectoryWithResultsOfAnyKindIsRefusedNamingThem) {
    const std::vector<std::pair<std::string, std::string>> there = {
        {"run.json", "a complete run (run.json)"},
        {"audit.json", "a complete audit (audit.json)"},
        {"shard.json", "a complete shard (shard.json)"}};
    for (const auto& [file, what] : there)
        for (const OutputKind kind : {OutputKind::Run, OutputKind::Shard, OutputKind::Audit}) {
            TempDir t;
            fs::create_directory(t.file("out"));
            spit(t.file("out/" + file), "{}\n");
            std::string m;
            try {
                (void)OutputDirectory::open(t.file("out"), kind);
            } catch (const IoError& e) {
                m = e.what();
            }
            EXPECT_TRUE(contains(m, "already holds " + what)) << file << ": " << m;
            EXPECT_EQ(listing(t.file("out")), std::vector<std::string>{file});
        }
    TempDir t;
    fs::create_directories(t.file("out/.progress"));
    std::string m;
    try {
        (void)OutputDirectory::open(t.file("out"), OutputKind::Audit);
    } catch (const IoError& e) {
        m = e.what();
    }
    EXPECT_TRUE(contains(m, "holds an unfinished run (.progress/)")) << m;
}

// --out given as a link is followed when it is the user's own; one that belongs to another user is refused
// (it could send every file into a directory of that user's choosing). Changing a link's owner needs root:
// skipped otherwise.
TEST(OutputDirectoryLinks, AnOutThatIsAnotherUsersLinkIsRefused) {
    TempDir t;
    const Victims v(t);
    fs::create_symlink(v.dir, t.file("out"));
    {
        OutputDirectory out = OutputDirectory::open(t.file("out"), OutputKind::Run);
        EXPECT_TRUE(fs::exists(v.dir + "/.lock")) << "the user's own link is followed";
        out.remove_created();
    }
    if (::lchown(t.file("out").c_str(), 12345, 12345) != 0)
        GTEST_SKIP() << "cannot change a link's owner (not root)";
    const std::string m =
        unsafe_error_of([&] { (void)OutputDirectory::open(t.file("out"), OutputKind::Run); });
    EXPECT_TRUE(contains(m, "is a symbolic link that belongs to another user (uid 12345)")) << m;
    EXPECT_TRUE(v.intact());
}
