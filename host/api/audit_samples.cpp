#include "host/api/audit_samples.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "host/api/audit.hpp"
#include "host/api/errors.hpp"
#include "host/api/pipeline.hpp"
#include "host/io/error.hpp"
#include "host/io/npy.hpp"
#include "host/version.hpp"

namespace dpr::api {
namespace {

io::NpyArray read_one(const std::string& path) {
    try {
        return io::read_npy(path);
    } catch (const io::IoError& e) {
        throw UsageError(std::string(e.what()) + " (audit-samples reads .npy files: numpy.save(FILE, array))");
    }
}

} // namespace

MemoryEstimate estimate_samples_memory(std::uint64_t na, std::uint64_t nb, double selection) {
    MemoryEstimate e;
    const std::uint64_t values = sat_mul(8, sat_add(na, nb));
    const double share = std::min(1.0, std::max(0.0, selection));
    const std::uint64_t shares = static_cast<std::uint64_t>(2.0 * share * static_cast<double>(values)) + 1;
    const std::uint64_t buffer = sat_mul(8, std::max(na, nb));
    const std::uint64_t resident = resident_memory_bytes();
    e.terms.push_back({"the two samples: " + std::to_string(na) + " + " + std::to_string(nb) + " values x 8 bytes", values});
    e.terms.push_back({"the selection shares, copied and sorted (--selection of each sample)", shares});
    e.terms.push_back({"the read buffer of the larger file", buffer});
    e.terms.push_back({"held already", resident});
    e.host_bytes = sat_add(sat_add(sat_add(values, shares), buffer), resident);
    std::stable_sort(e.terms.begin(), e.terms.end(), [](const MemoryTerm& x, const MemoryTerm& y) { return x.bytes > y.bytes; });
    return e;
}

Samples read_samples(const std::vector<std::string>& paths, const std::string& memory_limit) {
    {
        std::uint64_t n[2] = {0, 0};
        for (std::size_t i = 0; i < paths.size() && i < 2; ++i) {
            try {
                n[i] = io::shape_size(io::read_npy_header(paths[i]).shape);
            } catch (const io::IoError& e) {
                throw UsageError(std::string(e.what()) + " (audit-samples reads .npy files: numpy.save(FILE, array))");
            }
        }
        if (paths.size() == 1) n[1] = n[0] / 2, n[0] -= n[1];
        check_memory(estimate_samples_memory(n[0], n[1]), parse_memory_limit(memory_limit), 0,
                     "Audit fewer values (the first n of each sample are as good a sample as any), or lift the limit "
                     "with --memory-limit none.",
                     "samples audit");
    }
    Samples s;
    if (paths.size() == 1) {
        io::NpyArray x = read_one(paths[0]);
        if (x.shape.size() != 2 || x.shape[0] != 2)
            throw UsageError(paths[0] + " has shape " + io::shape_string(x.shape) +
                             ": one file must hold both samples as the rows of a (2, n) array (row 0: A, on D; row "
                             "1: B, on D'), as `dpregret audit --save-statistic` writes statistic.npy; or give two "
                             "files, A and B");
        const std::size_t n = static_cast<std::size_t>(x.shape[1]);
        s.a.assign(x.values.begin(), x.values.begin() + static_cast<std::ptrdiff_t>(n));
        s.b.assign(x.values.begin() + static_cast<std::ptrdiff_t>(n), x.values.end());
        s.a_label = paths[0] + " row 0";
        s.b_label = paths[0] + " row 1";
        return s;
    }
    if (paths.size() != 2)
        throw UsageError("audit-samples takes two .npy files (A on D, B on D') or one of shape (2, n); got " +
                         std::to_string(paths.size()));
    for (int i = 0; i < 2; ++i) {
        io::NpyArray x = read_one(paths[i]);
        int long_axes = 0;
        for (std::uint64_t e : x.shape) long_axes += e > 1;
        if (long_axes > 1)
            throw UsageError(paths[i] + " has shape " + io::shape_string(x.shape) +
                             ": a sample is one axis of values (shape (n,), (n, 1) or (1, n))");
        (i == 0 ? s.a : s.b) = std::move(x.values);
        (i == 0 ? s.a_label : s.b_label) = paths[i];
    }
    return s;
}

nlohmann::json samples_audit_json(const audit::AuditOutcome& o, const Samples& s, const std::string& started,
                                  double wall) {
    const audit::AuditBound& b = o.bound;
    const bool gdp = b.kind == audit::BoundKind::Gdp;
    nlohmann::json j;
    j["verdict"] = audit::verdict(o);
    j["claimed"] = {{"epsilon", number_json(o.learner.privacy.epsilon)},
                    {"delta", o.learner.privacy.delta},
                    {"gdp_mu", gdp ? nlohmann::json(o.learner.privacy.gdp_mu) : nlohmann::json(nullptr)},
                    {"accountant", o.learner.privacy.accountant}};
    j["bound"] = {{"kind", audit::bound_kind_name(b.kind)},
                  {"compared", gdp ? "mu_lb against claimed.gdp_mu" : "epsilon_lb against claimed.epsilon"}};
    j["epsilon_lb"] = number_json(b.epsilon_lb);
    if (gdp) j["mu_lb"] = b.mu_lb;
    j["confidence"] = 1.0 - b.alpha;
    const std::uint64_t mb = audit::selection_size(o.settings.selection, s.b.size());
    j["event"] = event_json(b, "A", "B",
                            "values [0, " + std::to_string(o.selection_trials) + ") of A and [0, " + std::to_string(mb) +
                                ") of B",
                            "values [" + std::to_string(o.selection_trials) + ", " + std::to_string(s.a.size()) +
                                ") of A and [" + std::to_string(mb) + ", " + std::to_string(s.b.size()) + ") of B");
    j["curve"] = curve_json(o.curve);
    j["fdp"] = fdp_json(o.fdp);
    j["samples"] = {{"a", {{"source", s.a_label}, {"values", s.a.size()}, {"input", "D"}}},
                    {"b", {{"source", s.b_label}, {"values", s.b.size()}, {"input", "D' (a neighbour of D)"}}}};
    j["settings"] = {{"alpha", o.settings.alpha},
                     {"candidates", o.settings.candidates},
                     {"selection", o.settings.selection}};
    j["timing"] = {{"started_at", started}, {"wall_seconds", wall}};
    const BuildInfo& bi = build_info();
    j["dpregret"] = {{"version", bi.version}, {"git_commit", bi.git_commit}, {"command", "audit-samples"}};
    return j;
}

std::string samples_verdict_line(const audit::AuditOutcome& o) { return verdict_line(o, "", ""); }

} // namespace dpr::api
