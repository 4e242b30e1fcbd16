#pragma once
// Progress of a long run (docs/ARCHITECTURE.md §6). On a terminal (isatty(stderr)): one line redrawn in
// place with '\r' -- a bar, percent, done/total units, rate and ETA. Otherwise (a log file, a batch system): a plain
// line every `interval_s` seconds (default 10) with the same numbers, so logs stay readable.
//
//   ProgressReporter progress(total_instance_rounds, "instance-rounds", {.label = "run"});
//   ... from any thread: progress.advance(chunk_instance_rounds);
//   progress.finish();
//
// advance() is thread-safe and cheap: an atomic add and a clock read; whichever thread finds the redraw
// interval elapsed draws, the others never wait for it.
//
// Progress is a courtesy, never a reason to stop: a write that fails (stderr is a pipe whose reader exited, a
// closed terminal, a full disk under a log file) silences the reporter for good, and neither advance() nor
// finish() throws, whatever exceptions() the stream has. The stream's error state is cleared again, so that a
// later message (the command's closing line, an error) still gets its own chance to be written.
#include <atomic>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <mutex>
#include <string>
#include <utility>

namespace dpr {

class ProgressReporter {
  public:
    struct Options {
        std::string label = "progress"; ///< first word of every line
        double interval_s = 10.0;       ///< seconds between plain lines (not a terminal)
        double redraw_s = 0.2;          ///< seconds between redraws of the terminal bar
        int tty = -1;                   ///< 1: draw the bar, 0: plain lines, -1: isatty(stderr)
        std::ostream* out = nullptr;    ///< nullptr: std::cerr
        std::function<double()> clock;  ///< seconds on a monotonic clock; empty: std::chrono::steady_clock
    };

    ProgressReporter(std::uint64_t total, std::string unit, Options options);
    ProgressReporter(std::uint64_t total, std::string unit)
        : ProgressReporter(total, std::move(unit), Options{}) {}
    ProgressReporter(const ProgressReporter&) = delete;
    ProgressReporter& operator=(const ProgressReporter&) = delete;
    /// Calls finish() if it was not called.
    ~ProgressReporter();

    /// Records n more units done (thread-safe); redraws if the interval has elapsed.
    void advance(std::uint64_t n);
    /// Draws the final state ("done" if all units were done) and ends the line; later calls do nothing.
    void finish();

    std::uint64_t done() const { return done_.load(std::memory_order_relaxed); }
    std::uint64_t total() const { return total_; }
    bool is_tty() const { return tty_; }

    /// "1.23G", "456k", "789": a count with an SI suffix and 3 significant digits.
    static std::string si(double x);
    /// "12s", "4m05s", "2h03m", "3d04h"; "?" for a negative or non-finite time.
    static std::string duration(double seconds);

  private:
    double now() const;
    void draw(bool final);
    std::string line(std::uint64_t done, double elapsed, bool final) const;

    std::uint64_t total_;
    std::string unit_;
    Options options_;
    bool tty_;
    std::ostream* out_;
    double start_;
    std::atomic<std::uint64_t> done_{0};
    std::atomic<double> next_draw_;
    std::mutex draw_mutex_;
    bool finished_ = false;
    bool silenced_ = false; ///< a write failed: draw nothing more (guarded by draw_mutex_, as draw() is)
    std::size_t last_width_ = 0;
};

} // namespace dpr
