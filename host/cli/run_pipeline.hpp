#pragma once
// The steps of `dpregret run` between a loaded config and the output files, as a library so that
// tests can drive them in-process (tests/cli/test_cli_fuzz.cpp) exactly as the command does:
//
//   config::Config cfg = config::load_config(path, sets, run_config_inputs());
//   std::vector<PointRecord> recs = resolve_points(cfg);       // UsageError: bad combinations
//   ...                                                          // memory check, output directory
//   simulate_points(cfg, recs, options);                         // NonFiniteResult: a NaN/inf result
//
// Everything here that rejects input throws UsageError (exit code 2) with a message that names the
// key and its valid range, before anything is simulated.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "host/config/config.hpp"
#include "host/engine/outputs.hpp"
#include "host/engine/point_runner.hpp"

namespace dpr::cli {

/// What load_config validates a run against: the registered learners and adversaries, and the loss
/// file hooks (host/engine/loss_file.hpp).
config::ConfigInputs run_config_inputs();

/// Instance ids first .. first + count - 1 are 32-bit RNG counter words (kernels/rng/stream.hpp), and
/// adversaries::kSharedSequence (0xFFFFFFFF) is the id of the loss sequence that all instances of a
/// point share, so an instance may never have that id: with per-instance sequences its sequence would
/// be the shared one, and in every mode it would not fit EngineShape's 32-bit instance count.
/// Throws UsageError naming [run] instances otherwise.
void check_instance_ids(std::uint64_t first, std::uint64_t count);

/// Resolves every point's learner and adversary and checks what spans components (decision set vs
/// loss set, the RNG counter layout, instance ids). Throws UsageError.
std::vector<PointRecord> resolve_points(const config::Config& cfg);

} // namespace dpr::cli
