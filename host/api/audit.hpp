#pragma once
// The library API of an audit (docs/AUDITS.md): an audit file in, the verdict, the bound and its event out, and
// the files `dpregret audit` writes. The layer under the command (host/cli/cmd_audit.cpp) and the Python
// package's dpregret.audit, as host/api/run.hpp is for a run:
//
//   plan_audit()     loads the file (its [audit] section too), resolves its single point, chooses the backend,
//                    reads [audit] and checks the memory: everything that can refuse the input (UsageError, the
//                    command's exit code 2), before anything is simulated;
//   check_audit_disk() once the output directory exists: refuses (UsageError) files that would not fit its free
//                    space (estimate_audit_disk), still before anything is simulated;
//   execute_audit()  runs both sides and the bound (host/audit/learner_audit.hpp);
//   audit_json()     audit.json's object; write_audit_files() writes statistic.npy (when kept),
//                    privacy_region.csv and audit.json last, each complete or absent.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "host/api/config_source.hpp"
#include "host/audit/learner_audit.hpp"
#include "host/audit/one_run.hpp"
#include "host/config/config.hpp"
#include "host/engine/loss_file.hpp"
#include "host/engine/point_runner.hpp"
#include "host/io/dir.hpp"
#include "host/results/outputs.hpp"

namespace dpr::api {

/// An audit (a ConfigSource: an audit file, docs/AUDITS.md, or its text) and how to run it.
struct AuditSpec : ConfigSource {
    Backend backend = Backend::Auto;
    std::string backend_requested = "auto"; ///< as given, for audit.json
    unsigned threads = 0;               ///< 0: every core
    std::string memory_limit = "auto";  ///< as --memory-limit (host/api/pipeline.hpp parse_memory_limit)
    bool allow_planted = false;         ///< --allow-planted: [audit] planted may name a bug
    bool keep_statistic = false;        ///< --save-statistic: keep every trial's statistic (2 x trials doubles)
    bool search = false;                ///< --search: pair.toml and audit.json's "search" are written (disk estimate)
    /// --one-run (host/api/audit_one_run.hpp): m canary rounds in one sequence per trial instead of two sides.
    bool one_run = false;
    audit::OneRunRequest one_run_request; ///< --canaries, --window, --score
    std::function<void(std::uint64_t instance_rounds)> on_progress;
    std::function<bool()> interrupted;  ///< polled between chunks; true stops the audit (completed false)
};

/// What plan_audit resolved. Move-only: the job points into `config`.
struct AuditPlan {
    config::Config config;
    std::vector<PointRecord> records;   ///< exactly one
    audit::AuditJob job;
    unsigned threads = 1;
    std::string device;                 ///< "cpu: N threads" or the GPU's name
    std::vector<std::string> warnings;  ///< the point's warnings, and a learner that claims no privacy
    std::uint64_t work = 0;             ///< instance-rounds of both sides (a progress bar's total)
    audit::CanaryPlan canaries;         ///< --one-run: where the canaries are (check_one_run)

    AuditPlan() = default;
    AuditPlan(AuditPlan&&) = default;
    AuditPlan& operator=(AuditPlan&&) = default;
    AuditPlan(const AuditPlan&) = delete;
    AuditPlan& operator=(const AuditPlan&) = delete;
};

/// The config inputs of an audit: a run's, and the [audit] section.
config::ConfigInputs audit_config_inputs(const LossArrays& arrays = {});

/// The first half (see the header). Throws UsageError.
AuditPlan plan_audit(const AuditSpec& spec);

/// What an audit writes into its output directory (write_audit_files), estimated from the plan so that a disk too
/// small is found before anything is simulated. Each part is at least what is written, in whole 4 KiB blocks.
struct AuditDiskEstimate {
    std::uint64_t statistic = 0; ///< statistic.npy (keep_statistic only): its header and 2 x trials x 8 bytes
    std::uint64_t region = 0;    ///< privacy_region.csv: a header and at most 200 rows of 5 numbers
    std::uint64_t json = 0;      ///< audit.json: a bounded skeleton and its texts (resolved TOML, settings, paths)
    std::uint64_t pair = 0;      ///< pair.toml (--search only): the resolved TOML with absolute paths
    std::uint64_t total() const { return statistic + region + json + pair; }
};
AuditDiskEstimate estimate_audit_disk(const AuditPlan& plan, const AuditSpec& spec);

/// Refuses (UsageError, the command's exit code 2) an audit whose files (estimate_audit_disk) do not fit the space
/// free in `dir`, naming each file's size and, when statistic.npy is kept, --save-statistic. Call it once `dir`
/// exists and before execute_audit; an unknown free space passes (every write still checks its errors).
void check_audit_disk(const AuditPlan& plan, const AuditSpec& spec, const std::string& dir);

/// Runs the plan with spec's progress and interrupt callbacks. UsageError for input only the run can refuse (a
/// neighbour file); std::runtime_error for a non-finite statistic. completed = false when interrupted.
audit::AuditOutcome execute_audit(AuditPlan& plan, const AuditSpec& spec);

/// audit.json's object. `config_label`: the file's path (or the source name of a text); `started`: ISO 8601 UTC;
/// `wall_seconds`: the whole audit.
nlohmann::json audit_json(const AuditPlan& plan, const audit::AuditOutcome& a, const AuditSpec& spec,
                          const std::string& config_label, const std::string& started, double wall_seconds);

/// audit.json's "settings" (every resolved key), "config" (the file, the overrides, the resolved TOML) and "backend"
/// objects, written alike by every kind of audit of a learner.
void add_audit_context(nlohmann::json& j, const AuditPlan& plan, const AuditSpec& spec, const std::string& config_label,
                       const std::string& backend_used, const std::string& launch_policy);

/// A number for audit.json: +-inf as the text "inf"/"-inf", NaN as null.
nlohmann::json number_json(double v);

/// audit.json's "event" object: the event, which side is the numerator (`first` when the event puts the first
/// sample's probability on top, else `second`), its evaluation counts and where it was chosen and counted.
nlohmann::json event_json(const audit::AuditBound& b, const std::string& first, const std::string& second,
                          const std::string& chosen_on, const std::string& counted_on);

/// audit.json's "curve" object (host/audit/curve.hpp): its verdict, the claim, the confidence, and per delta the bound,
/// the claim's eps, the event and its counts.
nlohmann::json curve_json(const audit::AuditCurve& c);
/// "" when the curve stays within the claim; else "; the (eps, delta) curve exceeds the claim at delta = ...", for
/// the verdict lines.
std::string curve_note(const audit::AuditCurve& c);
/// audit.json's "fdp" object (host/audit/tradeoff.hpp): the test of the privacy region against the claimed
/// trade-off curve, its verdict, the curve, the DKW bands and the row and test with the largest margin.
nlohmann::json fdp_json(const audit::FdpTest& t);
/// "" when the region stays above the claimed curve; else "; the privacy region falls below the claimed trade-off
/// curve at ...", for the verdict lines.
std::string fdp_note(const audit::FdpTest& t);

/// Writes statistic.npy (when the outcome kept it: 2 x trials, base row then neighbour row), privacy_region.csv,
/// pair.toml (when `pair_toml` is not empty: --search, host/api/audit_search.hpp) and audit.json last into `dir`
/// (the output directory held by descriptor: io::OutputDirectory::dir(), never written through a link). Throws
/// io::IoError, leaving none of them.
void write_audit_files(const io::Dir& dir, const audit::AuditOutcome& a, const nlohmann::json& audit_json,
                       const std::string& pair_toml = "");

/// The command's closing line: the verdict, the bound against the claim, the event and its counts.
std::string audit_verdict_line(const audit::AuditOutcome& a);
/// The verdict line of any audit: "VERDICT: [mu_lb ... i.e. ]eps_lb = ... at C% confidence, claimed eps = E, delta = D
/// (CONTEXTevent ...: k1/n1 vs k0/n0TAIL)" and the curve's note.
std::string verdict_line(const audit::AuditOutcome& a, const std::string& context, const std::string& tail);

} // namespace dpr::api
