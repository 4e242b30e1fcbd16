// A progress write that fails (stderr is a pipe whose reader exited, a closed terminal) must not end the job:
// the reporter stops printing for good, never throws into the simulation's threads, and leaves the stream usable
// for the command's own closing line or error message (host/progress/progress.hpp, issue 47).
#include <functional>
#include <ostream>
#include <streambuf>
#include <string>

#include <gtest/gtest.h>

#include "host/progress/progress.hpp"

using namespace dpr;

namespace {

/// A stream buffer whose writes fail while `broken` (as write(2) does with EPIPE) and are kept otherwise; counts
/// every write that reaches it.
class BreakableBuf : public std::streambuf {
  public:
    bool broken = true;
    int attempts = 0;
    std::string kept;

  protected:
    int_type overflow(int_type c) override {
        ++attempts;
        if (broken) return traits_type::eof();
        if (c != traits_type::eof()) kept.push_back(static_cast<char>(c));
        return traits_type::not_eof(c);
    }
    std::streamsize xsputn(const char* s, std::streamsize n) override {
        ++attempts;
        if (broken) return 0;
        kept.append(s, static_cast<std::size_t>(n));
        return n;
    }
};

struct FakeClock {
    double t = 100.0;
    std::function<double()> fn() {
        return [this] { return t; };
    }
};

ProgressReporter::Options options(std::ostream& out, FakeClock& clock, int tty) {
    ProgressReporter::Options o;
    o.label = "audit";
    o.tty = tty;
    o.interval_s = 10;
    o.redraw_s = 0.2;
    o.out = &out;
    o.clock = clock.fn();
    return o;
}

} // namespace

// Before the fix a stream with exceptions() set threw out of advance() (a worker thread) and the state stayed bad,
// silencing the command's own messages too.
TEST(ProgressWriteFailure, AFailedWriteSilencesTheReporterWithoutThrowingAndLeavesTheStreamUsable) {
    for (int tty : {0, 1}) {
        BreakableBuf buf;
        std::ostream out(&buf);
        out.exceptions(std::ios::badbit | std::ios::failbit);
        FakeClock clock;
        ProgressReporter p(1000, "instance-rounds", options(out, clock, tty));
        clock.t += 11;
        EXPECT_NO_THROW(p.advance(100)) << "tty " << tty;
        EXPECT_TRUE(out.good()) << "the next writer (an error message) gets its own chance; tty " << tty;
        const int after_failure = buf.attempts;
        EXPECT_GT(after_failure, 0);
        // The reader is back (or it was a transient failure): the reporter still prints nothing more, neither
        // progress nor the final line, while others' writes go through.
        buf.broken = false;
        clock.t += 11;
        EXPECT_NO_THROW(p.advance(100));
        EXPECT_NO_THROW(p.finish());
        EXPECT_EQ(buf.attempts, after_failure) << "tty " << tty;
        EXPECT_EQ(buf.kept, "") << "tty " << tty;
        out << "verdict\n";
        EXPECT_EQ(buf.kept, "verdict\n");
    }
}

TEST(ProgressWriteFailure, AFailingFinalLineDoesNotThrowFromFinishOrTheDestructor) {
    BreakableBuf buf;
    std::ostream out(&buf);
    out.exceptions(std::ios::badbit);
    FakeClock clock;
    {
        ProgressReporter p(10, "trials", options(out, clock, 0));
        p.advance(10);
        EXPECT_NO_THROW(p.finish());
    }
    EXPECT_TRUE(out.good());
}

// A stream that works is unaffected: every line is written and the reporter never silences itself.
TEST(ProgressWriteFailure, AWorkingStreamKeepsEveryLine) {
    BreakableBuf buf;
    buf.broken = false;
    std::ostream out(&buf);
    FakeClock clock;
    ProgressReporter p(1000, "instance-rounds", options(out, clock, 0));
    clock.t += 11;
    p.advance(500);
    clock.t += 11;
    p.advance(500);
    p.finish();
    EXPECT_NE(buf.kept.find("audit: 50.0%"), std::string::npos) << buf.kept;
    EXPECT_NE(buf.kept.find("audit: done"), std::string::npos) << buf.kept;
}
