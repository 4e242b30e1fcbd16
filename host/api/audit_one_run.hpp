#pragma once
// The library API of a one-run audit (`dpregret audit FILE --one-run`; host/audit/one_run.hpp, docs/AUDITS.md
// "One-run audits"): plan_audit (host/api/audit.hpp) with AuditSpec::one_run plans it and refuses bad input; then
//
//   execute_one_run()       runs the trials and the bound;
//   one_run_json()          audit.json's object;
//   write_one_run_files()   audit.json, complete or absent (there is no privacy region or statistic to write).
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "host/api/audit.hpp"
#include "host/audit/one_run.hpp"

namespace dpr::api {

/// UsageError for input only the run can refuse; std::runtime_error for a non-finite score. completed = false when
/// interrupted.
audit::OneRunOutcome execute_one_run(AuditPlan& plan, const AuditSpec& spec);

nlohmann::json one_run_json(const AuditPlan& plan, const audit::OneRunOutcome& o, const AuditSpec& spec,
                            const std::string& config_label, const std::string& started, double wall_seconds);

/// Writes audit.json into `dir` (held by descriptor, never through a link). Throws io::IoError, leaving nothing.
void write_one_run_files(const io::Dir& dir, const nlohmann::json& audit_json);

/// "VERDICT: eps_lb = ... at C% confidence, claimed eps = E, delta = D (one run, m canaries per trial: v of r guesses
/// right among m_e canaries; ...)".
std::string one_run_verdict_line(const audit::OneRunOutcome& o);

} // namespace dpr::api
