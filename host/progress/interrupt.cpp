// SIGINT/SIGTERM -> an atomic flag; the second signal removes what set_interrupt_cleanup named and ends the process
// (see interrupt.hpp).
#include "host/progress/interrupt.hpp"

#include <atomic>
#include <csignal>
#include <cstring>
#include <string>
#include <unistd.h>

namespace dpr {

namespace {

std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs a lock-free atomic");
std::atomic<const char*> g_message{nullptr};
static_assert(std::atomic<const char*>::is_always_lock_free, "the signal handler needs a lock-free atomic");

struct sigaction g_previous_int, g_previous_term;
bool g_installed = false;

// What the second signal removes before the process ends (set_interrupt_cleanup): fixed buffers, filled outside
// the handler, read inside it.
char g_cleanup_file[4096] = {0}, g_cleanup_dir[4096] = {0};
std::atomic<bool> g_cleanup_set{false}, g_exit_code{false};

void set_disposition(void (*handler)(int)) {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
}

void clean_up() {
    if (g_cleanup_set.load()) {
        if (g_cleanup_file[0]) ::unlink(g_cleanup_file);
        if (g_cleanup_dir[0]) ::rmdir(g_cleanup_dir);
    }
}

extern "C" void on_second_signal(int sig) {
    // Only async-signal-safe calls: unlink, rmdir (of an empty directory only), sigaction, raise, _exit.
    clean_up();
    if (g_exit_code.load()) ::_exit(128 + sig);
    set_disposition(SIG_DFL);
    ::raise(sig);
}

extern "C" void on_signal(int sig) {
    // Only async-signal-safe calls here: sigaction, write, unlink, rmdir, _exit and lock-free atomics.
    g_signal.store(sig);
    if (g_exit_code.load()) { // an MPI rank: its launcher kills it soon after the signal, so stop now
        static const char note[] = "\ninterrupted: no results were written\n";
        const ssize_t ignored = ::write(STDERR_FILENO, note, sizeof note - 1);
        (void)ignored;
        clean_up();
        ::_exit(128 + sig);
    }
    set_disposition(on_second_signal);
    if (const char* msg = g_message.load()) {
        const ssize_t ignored = ::write(STDERR_FILENO, msg, std::strlen(msg));
        (void)ignored;
    }
}

} // namespace

void install_interrupt_handlers(const char* message) {
    g_message.store(message);
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART; // do not make blocking I/O in other code fail with EINTR
    if (!g_installed) {
        sigaction(SIGINT, &sa, &g_previous_int);
        sigaction(SIGTERM, &sa, &g_previous_term);
        g_installed = true;
    } else {
        sigaction(SIGINT, &sa, nullptr);
        sigaction(SIGTERM, &sa, nullptr);
    }
}

bool interrupted() {
    return g_signal.load(std::memory_order_relaxed) != 0;
}

int interrupt_signal() {
    return g_signal.load(std::memory_order_relaxed);
}

void clear_interrupted() {
    g_signal.store(0);
}

void set_interrupt_cleanup(const std::string& file, const std::string& dir, bool exit_with_code) {
    g_cleanup_set.store(false);
    const auto copy = [](char* to, const std::string& from) {
        if (from.size() >= 4096) {
            to[0] = 0;
            return;
        }
        std::memcpy(to, from.c_str(), from.size() + 1);
    };
    copy(g_cleanup_file, file);
    copy(g_cleanup_dir, dir);
    g_exit_code.store(exit_with_code);
    g_cleanup_set.store(true);
}

void uninstall_interrupt_handlers() {
    g_cleanup_set.store(false);
    g_exit_code.store(false);
    if (!g_installed) return;
    sigaction(SIGINT, &g_previous_int, nullptr);
    sigaction(SIGTERM, &g_previous_term, nullptr);
    g_installed = false;
}

} // namespace dpr
