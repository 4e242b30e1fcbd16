// `dpregret audit-samples A.npy B.npy --epsilon E`: the auditor on anyone's statistic (docs/AUDITS.md "Audits of
// anyone's samples"). The work is host/api/audit_samples.hpp; this file is its flags and its output directory.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>
#include <memory>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "host/api/audit.hpp"
#include "host/api/audit_samples.hpp"
#include "host/cli/args.hpp"
#include "host/cli/errors.hpp"
#include "host/io/error.hpp"
#include "host/io/run_dir.hpp"

namespace dpr::cli {
namespace {

struct SamplesOptions {
    std::vector<std::string> files;
    std::string out, memory_limit = "auto";
    double epsilon = std::numeric_limits<double>::quiet_NaN(), delta = std::numeric_limits<double>::quiet_NaN();
    double mu = 0.0, alpha = 0.05, selection = 0.2;
    int candidates = 64;
    bool quiet = false;
};

constexpr const char* kAbout =
    "Empirical DP audit of anyone's mechanism from two samples of its statistic: A (one value per trial on an\n"
    "input D) and B (on a neighbouring input D'), each trial with its own randomness. The auditor of\n"
    "`dpregret audit` without the simulation: an event (a threshold or a set of values) chosen on the first\n"
    "--selection share of each sample, counted on the rest, Clopper-Pearson limits at confidence 1 - alpha,\n"
    "and a lower bound eps_lb (or mu_lb of Gaussian DP with --mu) compared with the claim. VIOLATION when the\n"
    "bound exceeds the claim, else consistent; exit code 0 either way.";

void samples_command(const SamplesOptions& o) {
    const auto t_start = std::chrono::steady_clock::now();
    const std::string started = utc_now("%Y-%m-%dT%H:%M:%SZ");
    if (std::isnan(o.epsilon) && !(o.mu > 0))
        throw UsageError("audit-samples needs the claim: --epsilon E [--delta D], or --mu M (Gaussian DP)");
    audit::SampleClaim claim;
    if (!std::isnan(o.epsilon)) {
        if (!(o.epsilon > 0)) throw UsageError("--epsilon must be > 0 (got " + std::to_string(o.epsilon) + ")");
        claim.epsilon = o.epsilon;
    }
    claim.mu = o.mu;
    claim.delta = std::isnan(o.delta) ? (o.mu > 0 ? 1e-5 : 0.0) : o.delta;
    if (!(claim.delta >= 0 && claim.delta < 1) || (o.mu > 0 && !(claim.delta > 0)))
        throw UsageError("--delta must be in " + std::string(o.mu > 0 ? "(0, 1) with --mu" : "[0, 1)") + " (got " +
                         std::to_string(claim.delta) + ")");
    audit::SampleAuditSettings st;
    st.alpha = o.alpha;
    st.selection = o.selection;
    st.candidates = o.candidates;
    const api::Samples s = api::read_samples(o.files, o.memory_limit);
    audit::AuditOutcome a;
    try {
        a = audit::audit_two_samples(s.a, s.b, claim, st);
    } catch (const std::invalid_argument& e) { // every refusal of the input names the flag or the sample's position
        throw UsageError(std::string("audit-samples: ") + e.what());
    }
    io::OutputDirectory out;
    try {
        out = o.out.empty() ? io::OutputDirectory::create_unique("runs", "audit-samples-" + utc_now("%Y%m%d-%H%M%S"))
                            : io::OutputDirectory::open(o.out, io::OutputKind::Audit);
    } catch (const io::IoError& e) {
        throw UsageError(e.what());
    }
    try {
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
        api::write_audit_files(out.dir(), a, api::samples_audit_json(a, s, started, wall));
        std::cout << api::samples_verdict_line(a) << "\n";
        if (!o.quiet) std::cout << "dpregret: audit in " << out.path() << "/ (audit.json, privacy_region.csv)\n";
    } catch (...) {
        out.remove_created();
        throw;
    }
}

} // namespace

void add_audit_samples_command(CLI::App& app) {
    auto opts = std::make_shared<SamplesOptions>();
    CLI::App* cmd = app.add_subcommand("audit-samples", kAbout);
    cmd->add_option("files", opts->files,
                    "A.npy B.npy (one sample each, in trial order), or one .npy of shape (2, n): rows A and B (the "
                    "statistic.npy of dpregret audit --save-statistic)")
        ->required()
        ->expected(1, 2);
    cmd->add_option("--epsilon", opts->epsilon, "the claimed eps (> 0) of the mechanism on neighbouring D, D'");
    cmd->add_option("--delta", opts->delta, "the claimed delta in [0, 1) (default 0; 1e-5 with --mu)");
    cmd->add_option("--mu", opts->mu,
                    "a Gaussian-DP claim mu > 0: the bound is on mu (mu_lb), and eps_lb is the eps of mu_lb-GDP at "
                    "--delta");
    cmd->add_option("--alpha", opts->alpha, "1 - confidence of the bound, in (0, 1) (default 0.05)");
    cmd->add_option("--selection", opts->selection,
                    "share of each sample (its first values) that chooses the event, in (0, 1) (default 0.2)");
    cmd->add_option("--candidates", opts->candidates, "threshold events tried, >= 1 (default 64, as [audit] candidates)");
    cmd->add_option("--out", opts->out, "output directory (default runs/audit-samples-<UTC timestamp>[-N]/)");
    cmd->add_flag("--quiet", opts->quiet, "only the verdict line");
    add_memory_limit_option(cmd, opts->memory_limit, "a samples audit");
    cmd->footer(
        "\nThe values of each sample must be independent trials in an order that does not depend on them (in a\n"
        "sorted file the shares are the sample's tails and the bound means nothing), and the statistic the same\n"
        "function of the mechanism's output on both sides. Outputs (in --out): audit.json (verdict, claim, eps_lb\n"
        "or mu_lb, the event and its counts, the (eps, delta) curve, the f-DP test against G_mu or f_(eps, delta)),\n"
        "privacy_region.csv (each sample's tail frequencies and the claimed curve at each). Plot:\n"
        "/usr/bin/python3 experiments/scripts/plot_audit.py DIR.\n\n"
        "Examples:\n"
        "  dpregret audit-samples on_d.npy on_d_prime.npy --epsilon 1 --out runs/mine\n"
        "  dpregret audit-samples runs/audit1/statistic.npy --epsilon 1   (the audit's own numbers again)\n");
    cmd->callback([opts] { samples_command(*opts); });
}

} // namespace dpr::cli
