#pragma once
// Graceful interruption of long runs: the first SIGINT (Ctrl-C) or SIGTERM sets a flag that loops poll
// between chunks (interrupted()), so a run can stop cleanly -- e.g. leave no output that looks complete
// (docs/OUTPUTS.md "Signals"). A second signal terminates the process at once, after removing what
// set_interrupt_cleanup() named (an output directory's lock file, an empty directory the run created).
//
//   dpr::install_interrupt_handlers();
//   for (chunk : chunks) { if (dpr::interrupted()) break; run(chunk); }
//
// The flag is a lock-free std::atomic, which is what C++17 allows a signal handler to touch.

#include <string>

namespace dpr {

/// What the first signal prints. It says what a second signal would cost rather than suggesting one: a user who
/// is told to "send the signal again" does, and loses the clean stop (and an audit's or a run's unsaved work) to
/// save a few seconds.
inline constexpr const char* kInterruptMessage =
    "\ninterrupted: stopping after the current chunk; a second signal would end the process at once and lose "
    "the unfinished work\n";

/// Installs the SIGINT and SIGTERM handlers (idempotent; re-arms them after a signal was handled).
/// `message`, if not null, is written to stderr (with write(2)) when the first signal arrives; it must
/// outlive the handlers (a string literal).
void install_interrupt_handlers(const char* message = kInterruptMessage);
/// True once SIGINT or SIGTERM arrived after install_interrupt_handlers().
bool interrupted();
/// The signal that set the flag (SIGINT or SIGTERM), 0 if none.
int interrupt_signal();
/// Clears the flag (tests, or a process that runs several jobs); does not touch the handlers.
void clear_interrupted();
/// What a second signal (which ends the process at once) removes first: `file` (e.g. the output directory's lock
/// file) and then the directory `dir` if it is empty (one this process created); "" for none. With
/// `exit_with_code` (an MPI rank, which keeps no progress and which its launcher kills soon after forwarding the
/// signal) already the first signal removes them and exits with 128 + the signal. Cleared by
/// uninstall_interrupt_handlers().
void set_interrupt_cleanup(const std::string& file, const std::string& dir, bool exit_with_code = false);
/// Restores the signal dispositions that were in place before install_interrupt_handlers().
void uninstall_interrupt_handlers();

/// install_interrupt_handlers() for a scope (a whole command: installed before anything slow, so that an early
/// Ctrl-C also takes the clean path), uninstalled on every exit path.
struct InterruptScope {
    InterruptScope() { install_interrupt_handlers(); }
    ~InterruptScope() { uninstall_interrupt_handlers(); }
    InterruptScope(const InterruptScope&) = delete;
    InterruptScope& operator=(const InterruptScope&) = delete;
};

} // namespace dpr
