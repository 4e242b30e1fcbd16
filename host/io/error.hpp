#pragma once
// The one exception type of host/io: a file could not be read, written or parsed. what() always names
// the file, and for parse errors the position in it ("losses.csv:3:7: ..."), so callers can print it
// as is. Commands decide the exit code: bad input the user can fix (e.g. a malformed loss file) is a
// usage error (exit 2), a failure while writing results is not (exit 1).
#include <stdexcept>

namespace dpr::io {

struct IoError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

} // namespace dpr::io
