// Progress reporting (terminal bar and plain periodic lines) and the SIGINT/SIGTERM interrupt flag.
#include <cmath>
#include <csignal>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "host/progress/interrupt.hpp"
#include "host/progress/progress.hpp"

using namespace dpr;

namespace {
/// A clock the test moves by hand.
struct FakeClock {
    double t = 100.0;
    std::function<double()> fn() {
        return [this] { return t; };
    }
};

std::vector<std::string> lines_of(const std::string& s) {
    std::vector<std::string> out;
    std::istringstream is(s);
    for (std::string l; std::getline(is, l);) out.push_back(l);
    return out;
}
} // namespace

TEST(Progress, Formatting) {
    EXPECT_EQ(ProgressReporter::si(0), "0");
    EXPECT_EQ(ProgressReporter::si(999), "999");
    EXPECT_EQ(ProgressReporter::si(1000), "1k");
    EXPECT_EQ(ProgressReporter::si(1234567), "1.23M");
    EXPECT_EQ(ProgressReporter::si(4.5e12), "4.5T");
    EXPECT_EQ(ProgressReporter::si(12.5), "12.5");
    EXPECT_EQ(ProgressReporter::si(NAN), "?");
    EXPECT_EQ(ProgressReporter::duration(5.4), "5s");
    EXPECT_EQ(ProgressReporter::duration(65), "1m05s");
    EXPECT_EQ(ProgressReporter::duration(3 * 3600 + 7 * 60 + 59), "3h07m");
    EXPECT_EQ(ProgressReporter::duration(2 * 86400 + 5 * 3600), "2d05h");
    EXPECT_EQ(ProgressReporter::duration(-1), "?");
    EXPECT_EQ(ProgressReporter::duration(NAN), "?");
}

TEST(Progress, PlainLinesEveryInterval) {
    FakeClock clock;
    std::ostringstream out;
    ProgressReporter::Options o;
    o.label = "run";
    o.tty = 0;
    o.interval_s = 10;
    o.out = &out;
    o.clock = clock.fn();
    ProgressReporter p(1000, "instance-rounds", o);
    EXPECT_FALSE(p.is_tty());
    clock.t += 5;
    p.advance(100); // before the first interval: nothing
    EXPECT_EQ(out.str(), "");
    clock.t += 5;
    p.advance(150); // 250 done in 10 s: 25/s, 750 left -> 30 s
    clock.t += 1;
    p.advance(10); // within the next interval: nothing
    clock.t += 9;
    p.advance(240); // 500 in 20 s
    clock.t += 20;
    p.advance(500);
    p.finish();
    p.finish(); // idempotent
    const auto lines = lines_of(out.str());
    ASSERT_EQ(lines.size(), 4u) << out.str();
    EXPECT_EQ(lines[0], "run: 25.0% (250/1k instance-rounds), 25/s, elapsed 10s, ETA 30s");
    EXPECT_EQ(lines[1], "run: 50.0% (500/1k instance-rounds), 25/s, elapsed 20s, ETA 20s");
    EXPECT_EQ(lines[2], "run: 100.0% (1k/1k instance-rounds), 25/s, elapsed 40s, ETA 0s");
    EXPECT_EQ(lines[3], "run: done, 1k instance-rounds in 40s (25/s)");
}

TEST(Progress, TerminalBarIsRedrawnInPlace) {
    FakeClock clock;
    std::ostringstream out;
    ProgressReporter::Options o;
    o.label = "run";
    o.tty = 1;
    o.redraw_s = 0.5;
    o.out = &out;
    o.clock = clock.fn();
    {
        ProgressReporter p(200, "rounds", o);
        clock.t += 1;
        p.advance(50);
        clock.t += 1;
        p.advance(50);
        clock.t += 1;
        p.advance(10);
        // the destructor finishes: "stopped" since not all was done
    }
    const std::string s = out.str();
    EXPECT_EQ(s.find('\n'), s.size() - 1) << s; // one line, ended only at the end
    const std::string first = "\rrun [######------------------] 25.0%  50/200 rounds  50/s  ETA 3s";
    EXPECT_EQ(s.rfind(first, 0), 0u) << s;
    EXPECT_NE(s.find("\rrun [############------------] 50.0%  100/200 rounds  50/s  ETA 2s"),
              std::string::npos)
        << s;
    EXPECT_NE(s.find("\rrun: stopped at 55.0% (110/200 rounds) after 3s (36.7/s)"), std::string::npos) << s;
}

TEST(Progress, AdvanceIsThreadSafe) {
    std::ostringstream out;
    ProgressReporter::Options o;
    o.tty = 0;
    o.interval_s = 0; // draw as often as possible, to exercise the drawing path concurrently
    o.out = &out;
    ProgressReporter p(8 * 10000, "units", o);
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < 10000; ++i) p.advance(1);
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(p.done(), 80000u);
    p.finish();
    const auto lines = lines_of(out.str());
    ASSERT_FALSE(lines.empty());
    EXPECT_EQ(lines.back().rfind("progress: done, 80k units in ", 0), 0u) << lines.back();
}

TEST(Interrupt, FirstSignalSetsTheFlag) {
    clear_interrupted();
    install_interrupt_handlers(nullptr);
    EXPECT_FALSE(interrupted());
    std::raise(SIGINT);
    EXPECT_TRUE(interrupted());
    EXPECT_EQ(interrupt_signal(), SIGINT);
    clear_interrupted();
    EXPECT_FALSE(interrupted());
    install_interrupt_handlers(nullptr); // re-arm
    std::raise(SIGTERM);
    EXPECT_EQ(interrupt_signal(), SIGTERM);
    uninstall_interrupt_handlers();
    clear_interrupted();
}

TEST(InterruptDeathTest, SecondSignalTerminates) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            install_interrupt_handlers(nullptr);
            std::raise(SIGINT);
            if (!interrupted()) std::_Exit(3);
            std::raise(SIGINT);
            std::_Exit(4); // not reached
        },
        ::testing::KilledBySignal(SIGINT), "");
}
