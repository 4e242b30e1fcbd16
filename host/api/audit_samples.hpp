#pragma once
// The library API of `dpregret audit-samples` (docs/AUDITS.md "Audits of anyone's samples"): two samples of a
// statistic in, the verdict, the bound and the files `dpregret audit` writes out (audit.json, privacy_region.csv).
// The audit itself is host/audit/sample_audit.hpp; this layer reads the samples from .npy files and says what was
// found, for the command (host/cli/cmd_audit_samples.cpp) and the Python package (dpregret.audit_samples).
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "host/audit/sample_audit.hpp"
#include "host/results/memory_estimate.hpp"

namespace dpr::api {

/// The two samples and where they came from.
struct Samples {
    std::vector<double> a, b;
    std::string a_label, b_label; ///< "FILE" or "FILE row 0" (audit.json, messages)
};

/// Reads the samples of `paths`: two .npy files of one sample each (any shape with one axis longer than 1, read in
/// C order), or one .npy file of shape (2, n) whose rows are the samples (the statistic.npy that `dpregret audit
/// --save-statistic` writes: row 0 base, row 1 neighbour). UsageError naming the file for anything else.
/// Before reading, the memory the audit will take is checked against `memory_limit` (as --memory-limit: "auto", "none"
/// or a size; estimate_samples_memory): UsageError naming the files' sizes and what to do.
Samples read_samples(const std::vector<std::string>& paths, const std::string& memory_limit = "auto");

/// Peak memory of a samples audit of na + nb values: the values (8 bytes each), the selection shares copied and
/// sorted (2 x 8 x 0.2 of them at the default selection; the estimate takes `selection`), and the read buffer of the
/// larger file (its values widened to double before they are moved into place).
MemoryEstimate estimate_samples_memory(std::uint64_t na, std::uint64_t nb, double selection = 0.2);

/// audit.json's object for a samples audit: verdict, claimed, bound, epsilon_lb (and mu_lb), confidence, the event,
/// the samples (labels and sizes), the settings, timing and the build.
nlohmann::json samples_audit_json(const audit::AuditOutcome& o, const Samples& s, const std::string& started,
                                  double wall_seconds);

/// The command's closing line: the verdict, the bound against the claim, the event and its counts.
std::string samples_verdict_line(const audit::AuditOutcome& o);

} // namespace dpr::api
