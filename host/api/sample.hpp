#pragma once
// The library API of `dpregret sample` (docs/CLI.md "dpregret sample"): draws of the samplers, of the prefix-sum
// mechanisms and of the exponential mechanism, exactly as the learners make them, for inspection. The command
// (host/cli/cmd_sample.cpp) and the Python package's dpregret.sample are front ends over it:
//
//   const api::Sampler s = api::make_sampler({"laplace", {{"--n", "1000"}, {"--scale", "1"}}});  // every check
//   std::vector<double> v(s.n * s.cols);
//   api::draw_samples(s, v.data());                            // or write_samples(s, "x.npy"), streaming
//
// A request names the form (laplace, gaussian, exponential, gumbel, gamma, tree, prefix, expmech) and gives its flags
// as text, as the command receives them (absent = not given; --out is the command's). make_sampler checks them in the
// command's order and throws UsageError with its messages; the draws are a pure function of (seed, row, column),
// whatever the thread count.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "host/api/values.hpp"

namespace dpr::api {

struct SampleRequest {
    std::string form;                           ///< laplace, gaussian, exponential, gumbel, gamma, tree, prefix, expmech
    std::map<std::string, std::string> flags;   ///< "--scale" -> "1.5", ...: the flags given, as text
};

/// fill(row, c0, c1, dst) writes the values of columns [c0, c1) of row `row` to dst[0 .. c1 - c0); a pure function
/// of (row, column).
using RowFill = std::function<void(std::uint32_t row, std::uint64_t c0, std::uint64_t c1, double* dst)>;

/// What a checked request draws: an n x cols matrix (a length-n vector when `vector`).
struct Sampler {
    std::string form;
    std::uint64_t n = 0, cols = 1;
    bool vector = true;
    std::uint32_t seed = 0;
    std::function<std::string(std::uint64_t)> column_name; ///< CSV header field of column c
    RowFill fill;
    std::uint64_t value_cost = 1;  ///< work units of one value (an exponential-mechanism draw: its d candidates)
    std::uint64_t batch_values = 1u << 20; ///< values held at once when streaming to a file
    /// `prefix` with --meta: the mechanism's parameters and the exact Var(Z_t) (docs/CLI.md); else empty.
    std::function<nlohmann::json()> meta;
};

/// The forms, in the command's order.
const std::vector<std::string>& sample_forms();

/// The flags of `form` (the command's, without --out), in the command's order; empty for an unknown form.
const std::vector<std::string>& sample_flags(const std::string& form);

/// Checks the request (UsageError, the command's messages; a flag that is not one of sample_flags(form) is
/// refused naming it) and returns its sampler.
Sampler make_sampler(const SampleRequest& request);

/// Every value into out[0 .. n * cols), row-major, on every core.
void draw_samples(const Sampler& s, double* out);

/// Streams the values into `path` (.npy float64 or .csv with a header, by `format`), holding at most
/// s.batch_values at once, after checking that the file fits (free space, ulimit -f); every value is checked to be
/// finite. The file appears complete or not at all (io::AtomicFile).
void write_samples(const Sampler& s, const std::string& path, OutputFormat format);

} // namespace dpr::api
