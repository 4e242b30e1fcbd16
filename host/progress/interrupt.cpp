// SIGINT/SIGTERM -> an atomic flag; the second signal gets the default action (see interrupt.hpp).
#include "host/progress/interrupt.hpp"

#include <atomic>
#include <csignal>
#include <cstring>
#include <unistd.h>

namespace dpr {

namespace {

std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs a lock-free atomic");
std::atomic<const char*> g_message{nullptr};
static_assert(std::atomic<const char*>::is_always_lock_free, "the signal handler needs a lock-free atomic");

struct sigaction g_previous_int, g_previous_term;
bool g_installed = false;

extern "C" void on_signal(int sig) {
    // Only async-signal-safe calls here: sigaction, write, and lock-free atomics.
    g_signal.store(sig);
    struct sigaction dfl;
    std::memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGINT, &dfl, nullptr);
    sigaction(SIGTERM, &dfl, nullptr);
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

void uninstall_interrupt_handlers() {
    if (!g_installed) return;
    sigaction(SIGINT, &g_previous_int, nullptr);
    sigaction(SIGTERM, &g_previous_term, nullptr);
    g_installed = false;
}

} // namespace dpr
