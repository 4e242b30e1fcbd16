#pragma once
// Test helper: `dpregret audit a.toml --out o --quiet ARGS` for each (ARGS, NEEDLE) case in `dir`; each must exit 2,
// name NEEDLE on stderr and leave no directory o (the audit tests' refusals of bad input).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli/run_cli.hpp"

namespace dpr::test {

template <class Cases>
void expect_audit_refusals(const TempDir& dir, const Cases& cases) {
    for (const auto& [args, needle] : cases) {
        const CliResult r = run_cli(dir, std::string("audit a.toml --out o --quiet ") + args);
        EXPECT_EQ(r.rc, 2) << args << ": " << r.err;
        EXPECT_NE(r.err.find(needle), std::string::npos) << args << ": " << r.err;
        EXPECT_FALSE(std::filesystem::exists(dir.file("o"))) << args;
    }
}

} // namespace dpr::test
