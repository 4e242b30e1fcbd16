// Progress bar on a terminal, periodic plain lines otherwise (docs/ARCHITECTURE.md §6).
#include "host/progress/progress.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <unistd.h>

namespace dpr {

ProgressReporter::ProgressReporter(std::uint64_t total, std::string unit, Options options)
    : total_(total), unit_(std::move(unit)), options_(std::move(options)) {
    tty_ = options_.tty < 0 ? ::isatty(STDERR_FILENO) == 1 : options_.tty != 0;
    out_ = options_.out ? options_.out : &std::cerr;
    start_ = now();
    next_draw_.store(start_ + (tty_ ? options_.redraw_s : options_.interval_s));
}

ProgressReporter::~ProgressReporter() {
    try {
        finish();
    } catch (...) { // a destructor must not throw (e.g. a failing stream)
    }
}

double ProgressReporter::now() const {
    if (options_.clock) return options_.clock();
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void ProgressReporter::advance(std::uint64_t n) {
    done_.fetch_add(n, std::memory_order_relaxed);
    const double t = now();
    if (t < next_draw_.load(std::memory_order_relaxed)) return;
    std::unique_lock<std::mutex> lock(draw_mutex_, std::try_to_lock);
    if (!lock.owns_lock() || finished_ || t < next_draw_.load(std::memory_order_relaxed)) return;
    next_draw_.store(t + (tty_ ? options_.redraw_s : options_.interval_s), std::memory_order_relaxed);
    draw(false);
}

void ProgressReporter::finish() {
    std::lock_guard<std::mutex> lock(draw_mutex_);
    if (finished_) return;
    finished_ = true;
    draw(true);
}

std::string ProgressReporter::si(double x) {
    static const char* const suffix[] = {"", "k", "M", "G", "T", "P", "E"};
    if (!std::isfinite(x)) return "?";
    int k = 0;
    while (std::fabs(x) >= 999.5 && k < 6) x /= 1000.0, ++k;
    char buf[32];
    if (k == 0 && x == std::floor(x))
        std::snprintf(buf, sizeof buf, "%.0f", x);
    else
        std::snprintf(buf, sizeof buf, "%.3g%s", x, suffix[k]);
    return buf;
}

std::string ProgressReporter::duration(double seconds) {
    if (!std::isfinite(seconds) || seconds < 0) return "?";
    const auto s = static_cast<std::uint64_t>(std::llround(seconds));
    char buf[48];
    if (s < 60)
        std::snprintf(buf, sizeof buf, "%llus", static_cast<unsigned long long>(s));
    else if (s < 3600)
        std::snprintf(buf, sizeof buf, "%llum%02llus", static_cast<unsigned long long>(s / 60),
                      static_cast<unsigned long long>(s % 60));
    else if (s < 86400)
        std::snprintf(buf, sizeof buf, "%lluh%02llum", static_cast<unsigned long long>(s / 3600),
                      static_cast<unsigned long long>(s / 60 % 60));
    else
        std::snprintf(buf, sizeof buf, "%llud%02lluh", static_cast<unsigned long long>(s / 86400),
                      static_cast<unsigned long long>(s / 3600 % 24));
    return buf;
}

std::string ProgressReporter::line(std::uint64_t done, double elapsed, bool final) const {
    const double fraction =
        total_ == 0 ? 1.0 : std::min(1.0, static_cast<double>(done) / static_cast<double>(total_));
    const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : NAN;
    const double remaining = done >= total_ ? 0.0 : static_cast<double>(total_ - done);
    const double eta = done == 0 || !(rate > 0) ? NAN : remaining / rate;
    char pct[16];
    std::snprintf(pct, sizeof pct, "%.1f%%", 100.0 * fraction);
    const std::string counts =
        si(static_cast<double>(done)) + "/" + si(static_cast<double>(total_)) + " " + unit_;
    const std::string speed = si(rate) + "/s";

    if (final) {
        if (done >= total_)
            return options_.label + ": done, " + si(static_cast<double>(done)) + " " + unit_ + " in " +
                   duration(elapsed) + " (" + speed + ")";
        return options_.label + ": stopped at " + pct + " (" + counts + ") after " + duration(elapsed) +
               " (" + speed + ")";
    }
    if (tty_) {
        constexpr int kWidth = 24;
        const int filled = static_cast<int>(fraction * kWidth);
        return options_.label + " [" + std::string(filled, '#') + std::string(kWidth - filled, '-') + "] " +
               pct + "  " + counts + "  " + speed + "  ETA " + duration(eta);
    }
    return options_.label + ": " + pct + " (" + counts + "), " + speed + ", elapsed " + duration(elapsed) +
           ", ETA " + duration(eta);
}

void ProgressReporter::draw(bool final) {
    if (silenced_) return;
    const std::string text = line(done_.load(std::memory_order_relaxed), now() - start_, final);
    bool failed = false;
    try {
        if (tty_) {
            // Redraw in place; pad with spaces to erase the rest of a longer previous line.
            std::string padded = text;
            if (padded.size() < last_width_) padded.append(last_width_ - padded.size(), ' ');
            last_width_ = text.size();
            *out_ << '\r' << padded << (final ? "\n" : "") << std::flush;
        } else {
            *out_ << text << '\n' << std::flush;
        }
        failed = !*out_;
    } catch (...) { // a stream with exceptions() set: the failure must not reach the simulation's threads
        failed = true;
    }
    if (failed) {
        // The reader is gone (EPIPE once SIGPIPE is ignored, host/main.cpp) or the device is full: stop printing
        // rather than fail every chunk, and leave the stream usable for whoever writes next.
        silenced_ = true;
        try {
            out_->clear();
        } catch (...) {
        }
    }
}

} // namespace dpr
