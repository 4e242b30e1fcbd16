#include "host/api/sample.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>

#include <sys/resource.h>

#include <nlohmann/json.hpp>

#include "host/api/errors.hpp"
#include "host/cpu/cpu_isa.hpp"
#include "host/io/atomic_file.hpp"
#include "host/io/csv.hpp"
#include "host/io/error.hpp"
#include "host/io/npy.hpp"
#include "host/results/mechanism_json.hpp"
#include "host/results/memory_estimate.hpp"
#include "kernels/core/team.hpp"
#include "kernels/mechanisms/noisy_prefix.hpp"
#include "kernels/mechanisms/tree_aggregation.hpp"
#include "kernels/noise/samplers.hpp"
#include "kernels/rng/stream.hpp"
#include "kernels/rng/uniform.hpp"

namespace dpr::api {
namespace {

// ---- limits (kernels/rng/stream.hpp counter layout) ----------------------------------------------
constexpr std::uint64_t kMaxRows = rng::kMaxInstances; // row i is RNG instance i (never the reserved id)
constexpr std::uint64_t kMaxT = rng::kMaxRound - 1;       // node indices and prefixes t < 2^32
constexpr std::uint64_t kMaxSeed = 0xffffffffull;         // the seed is key word k0
constexpr std::uint64_t kBatchValues = 1u << 20;          // 8 MiB of doubles held at once
const std::string kRowsRange = "an integer in [1, 4294967295]";
const std::string kRowsWhy =
    "row i is drawn from RNG instance i, a 32-bit counter word (kernels/rng/stream.hpp)";

/// The request's flags: given or not, their text, the command's "missing" message.
struct Flags {
    const std::map<std::string, std::string>& m;
    bool given(const std::string& k) const { return m.count(k) > 0; }
    std::string get(const std::string& k, const std::string& fallback = "") const {
        const auto it = m.find(k);
        return it == m.end() ? fallback : it->second;
    }
    void require(const std::string& k, const std::string& range) const {
        if (!given(k)) throw UsageError("missing " + k + ": must be " + range);
    }
};

/// --n and --seed, checked after a form's own flags (the command's order).
void parse_common(const Flags& f, Sampler& s) {
    f.require("--n", kRowsRange);
    s.n = parse_integer("--n", f.get("--n"), 1, kMaxRows, kRowsWhy);
    s.seed = static_cast<std::uint32_t>(parse_integer("--seed", f.get("--seed", "0"), 0, kMaxSeed));
}

rng::StreamId inspect_stream(std::uint32_t seed, std::uint32_t row) {
    rng::StreamId id;
    id.seed = seed;
    id.stream = 0;
    id.instance = row;
    id.purpose = rng::Purpose::Inspect;
    return id;
}

// ---- parameters whose draws would not fit in a double --------------------------------------------------
// docs/CLI.md promises finite values for finite parameters. The largest |draw| per unit of scale follows
// from the extreme open uniforms u in [2^-53, 1 - 2^-53] (kernels/rng/uniform.hpp) through the transforms
// of kernels/noise/samplers.hpp; a parameter whose largest draw would overflow is refused (exit 2).

const double kMaxNegLogU = -std::log(rng::kU53Min);           // 36.74: -ln u (exponential, Gumbel)
const double kMaxLaplaceUnit = -std::log(2.0 * rng::kU53Min); // 36.04: |ln 2u| (Laplace)
const double kMaxNormalUnit = std::sqrt(2.0 * kMaxNegLogU);   // 8.57: Box-Muller's sqrt(-2 ln u1)

/// ln of the largest Gamma(k, 1) draw (Marsaglia-Tsang): d v boost with d = k' - 1/3, k' = k (k >= 1)
/// or k + 1 (boost = U^(1/k) <= 1), v = (1 + c x)^3 <= (1 + kMaxNormalUnit / (3 sqrt d))^3.
double log_gamma_unit_bound(double k) {
    const double kp = k < 1.0 ? k + 1.0 : k;
    const double d = kp - 1.0 / 3.0;
    return std::log(d) + 3.0 * std::log1p(kMaxNormalUnit / (3.0 * std::sqrt(d)));
}

/// ln of the largest |Z_t| / scale of `sample tree` over every T < 2^32: at most k = ceil(log2 T) <= 32
/// node draws plus the padding of r <= k draws (kernels/noise/lane_noise.hpp): for Laplace, r <= 3 is
/// ln(product of r uniforms / product of r uniforms), at most r (-ln u_min); r >= 4 is 2 sqrt(G E) cos(2 pi u)
/// with G <= r (-ln u_min) and E <= -ln u_min, at most 2 sqrt(r) (-ln u_min) -- the larger, at r = 32; for
/// Gaussian nodes the padding is one normal of sd sqrt(r).
double log_tree_unit_bound(bool laplace) {
    const double k = 32.0;
    if (!laplace) return std::log(k * kMaxNormalUnit + std::sqrt(k) * kMaxNormalUnit);
    const double padding = std::max(3.0 * kMaxNegLogU, 2.0 * std::sqrt(k) * kMaxNegLogU);
    return std::log(k * kMaxLaplaceUnit + padding);
}

/// x > 0 rounded DOWN to 4 significant digits, as "4.987e306" (%.4g without the exponent's '+' and
/// leading zeros): a limit that reads back as at most x.
std::string short_number(double x) {
    const int e10 = static_cast<int>(std::floor(std::log10(x))) - 3;
    const double m = std::floor(x / std::pow(10.0, e10) * (1 - 1e-12)); // 1000 .. 9999
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0fe%d", m, e10);
    const double down = std::strtod(buf, nullptr);
    std::snprintf(buf, sizeof buf, "%.4g", down);
    std::string s = buf;
    const std::size_t e = s.find("e+");
    if (e != std::string::npos) {
        std::size_t d = e + 2;
        while (d + 1 < s.size() && s[d] == '0') ++d;
        s = s.substr(0, e + 1) + s.substr(d);
    }
    return s;
}

/// Refuses `value` (of `flag`, > 0) when value x exp(log_factor) would exceed the largest double.
void check_draws_fit(const std::string& flag, const std::string& text, double value, double log_factor,
                     const std::string& what) {
    static const double log_max = std::log(std::numeric_limits<double>::max());
    if (std::log(value) + log_factor <= log_max - 1e-9) return;
    const std::string limit = short_number(std::exp(log_max - log_factor) * (1 - 1e-9));
    throw UsageError(flag + " must be a finite number in (0, " + limit + "] for " + what + " (got " + text +
                     "): larger values give draws beyond the largest double (1.797e308)");
}

/// Fills rows [first, first + count) (row-major, `cols` values each) into buf. The count * cols values
/// are split into contiguous ranges, one per thread, so that a few long tree rows are shared out as
/// well as many short ones; a thread gets at least 4096 units of work, a value costing `value_cost` units (an
/// exponential-mechanism draw costs its d candidates). Results do not depend on the split.
void fill_rows(std::uint64_t first, std::uint64_t count, std::uint64_t cols, const RowFill& fill,
               double* buf, std::uint64_t value_cost = 1) {
    const std::uint64_t work = count * cols;
    const auto run = [&](std::uint64_t lo, std::uint64_t hi) { // flat value indices [lo, hi)
        while (lo < hi) {
            const std::uint64_t r = lo / cols, c0 = lo % cols;
            const std::uint64_t c1 = std::min(cols, c0 + (hi - lo));
            fill(static_cast<std::uint32_t>(first + r), c0, c1, buf + lo);
            lo += c1 - c0;
        }
    };
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    const std::uint64_t threads = std::min<std::uint64_t>({hw, work, std::max<std::uint64_t>(1, work * value_cost / 4096)});
    if (threads <= 1) {
        run(0, work);
        return;
    }
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (std::uint64_t k = 0; k < threads; ++k)
        pool.emplace_back(run, work * k / threads, work * (k + 1) / threads);
    for (std::thread& t : pool) t.join();
}

/// Fills columns [c0, c1) of one row into buf, split over threads like fill_rows.
void fill_columns(std::uint64_t row, std::uint64_t c0, std::uint64_t c1, const RowFill& fill, double* buf) {
    const std::uint64_t work = c1 - c0;
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    const std::uint64_t threads = std::min<std::uint64_t>(hw, std::max<std::uint64_t>(1, work / 4096));
    const auto run = [&](std::uint64_t lo, std::uint64_t hi) {
        if (lo < hi) fill(static_cast<std::uint32_t>(row), c0 + lo, c0 + hi, buf + lo);
    };
    if (threads <= 1) {
        run(0, work);
        return;
    }
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (std::uint64_t k = 0; k < threads; ++k) pool.emplace_back(run, work * k / threads, work * (k + 1) / threads);
    for (std::thread& t : pool) t.join();
}

/// Bytes the output will take at least: exact for .npy, a lower bound for CSV (one digit and a separator
/// per value).
std::uint64_t min_output_bytes(const Sampler& s, OutputFormat format) {
    const std::uint64_t values = s.n * s.cols; // n, cols < 2^32: no overflow
    if (format == OutputFormat::Npy)
        return io::npy_header_f8(s.vector ? io::Shape{s.n} : io::Shape{s.n, s.cols}).size() + 8 * values;
    return 2 * values;
}

/// Refuses an output that cannot fit before drawing anything: the free space of the destination's file
/// system, and the file size limit of this process (ulimit -f).
void check_output_fits(const Sampler& s, const std::string& out, OutputFormat format) {
    const std::uint64_t need = min_output_bytes(s, format);
    const std::string what = format == OutputFormat::Npy ? "" : "at least ";
    rlimit lim{};
    if (::getrlimit(RLIMIT_FSIZE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY && need > lim.rlim_cur)
        throw UsageError("--out " + out + ": the file would take " + what + std::to_string(need) + " bytes (" +
                         human_bytes(need) + "), above this process's file size limit of " +
                         std::to_string(static_cast<std::uint64_t>(lim.rlim_cur)) +
                         " bytes (ulimit -f); reduce --n or --T");
    std::string dir = std::filesystem::path(out).parent_path().string();
    if (dir.empty()) dir = ".";
    const std::optional<std::uint64_t> avail = available_disk_bytes(dir);
    if (!fits_on_disk(need, avail))
        throw UsageError("--out " + out + ": the file would take " + what + std::to_string(need) + " bytes (" +
                         human_bytes(need) + "), but only " + std::to_string(*avail) + " bytes (" +
                         human_bytes(*avail) + ") are free there; reduce --n or --T");
}

// ---- the forms ----------------------------------------------------------------------------------------

/// A distribution with a scale and optionally a shape or a location: `draw(src, scale, extra)` draws one value
/// (extra is --shape or --loc); `fits(scale, extra, scale_text, extra_text)` throws UsageError when the largest draw
/// would overflow.
enum class Extra { None, Shape, Loc };
struct Distribution {
    const char* name;
    Extra extra;
    double (*draw)(rng::WordStream&, double scale, double extra);
    void (*fits)(double scale, double extra, const std::string& scale_text, const std::string& extra_text);
};

const std::vector<Distribution>& distributions() {
    static const std::vector<Distribution> all = {
        {"laplace", Extra::None, [](rng::WordStream& s, double b, double) { return noise::laplace(s, b); },
         [](double b, double, const std::string& text, const std::string&) {
             check_draws_fit("--scale", text, b, std::log(kMaxLaplaceUnit), "laplace");
         }},
        {"gaussian", Extra::None, [](rng::WordStream& s, double sigma, double) { return noise::gaussian(s, sigma); },
         [](double sigma, double, const std::string& text, const std::string&) {
             check_draws_fit("--scale", text, sigma, std::log(kMaxNormalUnit), "gaussian");
         }},
        {"exponential", Extra::None, [](rng::WordStream& s, double mean, double) { return noise::exponential(s, mean); },
         [](double mean, double, const std::string& text, const std::string&) {
             check_draws_fit("--scale", text, mean, std::log(kMaxNegLogU), "exponential");
         }},
        {"gumbel", Extra::Loc, [](rng::WordStream& s, double beta, double mu) { return noise::gumbel(s, mu, beta); },
         [](double beta, double mu, const std::string& text, const std::string& loc_text) {
             // x in [mu - 3.6 beta, mu + 36.74 beta]: |x| <= |mu| + 36.74 beta.
             const double room = std::numeric_limits<double>::max() - std::fabs(mu);
             if (beta * kMaxNegLogU * (1 + 1e-9) <= room) return;
             throw UsageError("--scale must be a finite number in (0, " + short_number(room / kMaxNegLogU / (1 + 1e-9)) +
                              "] for gumbel with --loc " + loc_text + " (got " + text +
                              "): draws reach |loc| + 36.74 scale, beyond the largest double (1.797e308)");
         }},
        {"gamma", Extra::Shape, [](rng::WordStream& s, double theta, double k) { return noise::gamma(s, k, theta); },
         [](double theta, double k, const std::string& text, const std::string& shape_text) {
             check_draws_fit("--scale", text, theta, log_gamma_unit_bound(k), "gamma with --shape " + shape_text);
         }},
    };
    return all;
}

Sampler distribution_sampler(const Flags& f, const Distribution& d) {
    double extra = 0.0;
    const std::string extra_text = f.get(d.extra == Extra::Shape ? "--shape" : "--loc", "0");
    if (d.extra == Extra::Shape) {
        f.require("--shape", "a finite number > 0");
        extra = parse_positive_finite("--shape", extra_text);
    } else if (d.extra == Extra::Loc) {
        extra = parse_finite("--loc", extra_text);
    }
    f.require("--scale", "a finite number > 0");
    const std::string scale_text = f.get("--scale");
    const double scale = parse_positive_finite("--scale", scale_text);
    d.fits(scale, extra, scale_text, extra_text);
    Sampler s;
    s.form = d.name;
    parse_common(f, s);
    const std::string name = d.name;
    s.column_name = [name](std::uint64_t) { return name; };
    const auto draw = d.draw;
    const std::uint32_t seed = s.seed;
    s.fill = [draw, seed, scale, extra](std::uint32_t row, std::uint64_t, std::uint64_t, double* dst) {
        rng::WordStream src(inspect_stream(seed, row));
        *dst = draw(src, scale, extra);
    };
    return s;
}

/// `tree --variant V` and `prefix --mechanism M` (the same matrix; `prefix` names the seam's mechanism and can give
/// its parameters with --meta).
Sampler tree_sampler(const Flags& f, bool prefix_form) {
    const std::string flag = prefix_form ? "--mechanism" : "--variant";
    const std::vector<std::string> mechanisms = prefix_form
                                                    ? std::vector<std::string>{"padded", "binary", "honaker", "blt"}
                                                    : std::vector<std::string>{"padded", "binary", "honaker"};
    const std::size_t variant = parse_choice(flag, f.get(flag, "padded"), mechanisms);
    const std::size_t noise = parse_choice("--noise", f.get("--noise", "laplace"), {"laplace", "gaussian"});
    if (variant == 3 && noise == 0)
        throw UsageError("--mechanism blt needs --noise gaussian: under pure eps-DP (Laplace) BLT's l1 column norm "
                         "makes it far worse than the tree; --mechanism honaker is the better tree for Laplace noise "
                         "(docs/MECHANISMS.md §3.5)");
    const std::string buffers_text = f.get("--buffers");
    if (!buffers_text.empty() && variant != 3) throw UsageError("--buffers is a parameter of --mechanism blt");
    f.require("--scale", "a finite number > 0");
    const std::string scale_text = f.get("--scale");
    const double scale = parse_positive_finite("--scale", scale_text);
    f.require("--T", "an integer in [1, 4294967295]");
    const std::string T_text = f.get("--T");
    const std::uint64_t T = parse_integer("--T", T_text, 1, kMaxT,
                                          "prefixes and node indices are 32-bit RNG counter words "
                                          "(kernels/rng/stream.hpp)");
    // Honaker's estimates weigh each node draw by at most 2 in total: one more factor 2 on the bound; a BLT
    // prefix weighs each of its (at most T) draws by |e_k| <= 1.
    check_draws_fit("--scale", scale_text, scale,
                    log_tree_unit_bound(noise == 0) + (variant == 2   ? std::log(2.0)
                                                       : variant == 3 ? std::log(static_cast<double>(T))
                                                                      : 0.0),
                    std::string("sample ") + (prefix_form ? "prefix" : "tree") + " --noise " +
                        (noise == 0 ? "laplace" : "gaussian"));
    const std::uint32_t buffers =
        buffers_text.empty() ? (T > (std::uint64_t{1} << 18) ? 5u : 4u)
                             : static_cast<std::uint32_t>(parse_integer("--buffers", buffers_text, 1,
                                                                        mech::kMaxBltBuffers,
                                                                        "the fitted BLT table's range"));
    if (variant >= 2 && T > kBatchValues)
        throw UsageError("--T must be at most " + std::to_string(kBatchValues) + " with " + flag + " " +
                         mechanisms[variant] + " (got " + T_text + "): its rows are streamed prefix after prefix, "
                         "and a longer row would be cut into pieces that each restart from prefix 0");
    const std::string meta_path = f.get("--meta");
    if (!meta_path.empty() && T > kBatchValues)
        throw UsageError("--T must be at most " + std::to_string(kBatchValues) + " with --meta (got " + T_text +
                         "): the file lists Var(Z_t) for every t");
    if (!meta_path.empty() && std::filesystem::path(meta_path).extension() != ".json")
        throw UsageError("--meta " + meta_path + ": must name a .json file");
    Sampler s;
    s.form = prefix_form ? "prefix" : "tree";
    parse_common(f, s);
    if (rng::check_layout(s.seed, s.n, T, 1) != rng::LayoutError::Ok) // guaranteed by the ranges above
        throw UsageError("--n/--T do not fit the RNG counter layout (kernels/rng/stream.hpp)");
    s.cols = T;
    s.vector = false;
    s.column_name = [](std::uint64_t t) { return "t" + std::to_string(t); };

    mech::TreeNoise base;
    base.variant = variant == 0 ? mech::TreeVariant::Padded : mech::TreeVariant::Binary;
    base.noise = noise == 0 ? mech::NodeNoise::Laplace : mech::NodeNoise::Gaussian;
    base.scale = scale;
    base.T = T;
    base.seed = s.seed;
    base.stream = 0;
    auto described = std::make_shared<mech::PrefixMechanism>();
    described->tree = variant == 0 ? mech::TreeVariant::Padded : mech::TreeVariant::Binary;
    described->honaker = variant == 2;
    described->blt = variant == 3;
    if (described->blt) described->blt_noise = mech::blt_for_steps(buffers, T - 1);
    described->noise = base.noise;
    described->scale = scale;
    described->T = T;
    if (!meta_path.empty()) {
        const std::string name = mechanisms[variant];
        s.meta = [described, name, noise, scale, T] {
            const mech::PrefixMechanism& m = *described;
            nlohmann::json j;
            j["mechanism"] = name;
            j["name"] = m.name();
            j["noise"] = noise == 0 ? "laplace" : "gaussian";
            j["scale"] = scale;
            j["T"] = T;
            j["node_variance"] = noise == 0 ? 2.0 * scale * scale : scale * scale;
            put_blt_json(j, m.blt ? m.blt_noise : mech::BltNoise{}); // null for the trees
            // Squared l2 sensitivity of everything released for a unit per-step sensitivity: the tree's h' levels
            // (one node each; only Z_0 .. Z_{T-1} are released), BLT's sum_{k<T-1} c_k^2.
            j["sensitivity_squared"] = m.sensitivity_squared();
            std::vector<double> v(T);
            for (std::uint64_t t = 0; t < T; ++t) v[t] = m.unit_variance(t);
            j["variance"] = v; // Var(Z_t) / node_variance, t = 0 .. T-1
            return j;
        };
    }
    const std::uint32_t seed = s.seed;
    if (variant >= 2) {
        // Honaker's estimates and BLT noise are streamed as a learner streams them (the definition costs O(t) per Z_t):
        // the seam's state for one coordinate, rounds 1 .. t1 (Z_{t-1} in round t), columns [t0, t1) kept.
        s.fill = [described, seed](std::uint32_t row, std::uint64_t t0, std::uint64_t t1, double* dst) {
            const mech::PrefixMechanism& m = *described;
            std::vector<double> state(m.rows());
            SerialTeam<double> team;
            team.rng = RngKey{seed, 0};
            team.id = row;
            const StridedView<double> S{state.data(), 1, 1};
            m.init(team, S, 1);
            for (std::uint64_t t = 1; t <= t1; ++t) {
                const double z = m.next(team, m.step(t), S, 0u);
                if (t - 1 >= t0) dst[t - 1 - t0] = z;
            }
        };
        return s;
    }
    s.fill = [base](std::uint32_t row, std::uint64_t t0, std::uint64_t t1, double* dst) {
        mech::TreeNoise tn = base;
        tn.instance = row;
        for (std::uint64_t t = t0; t < t1; ++t) dst[t - t0] = mech::prefix_noise(tn, t, 0);
    };
    return s;
}

Sampler expmech_sampler(const Flags& f) {
    f.require("--c", "a number >= 0 or inf");
    const std::string c_text = f.get("--c");
    double c = 0.0;
    std::string lower = c_text;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
    if (lower == "inf" || lower == "+inf" || lower == "infinity" || lower == "+infinity") {
        c = std::numeric_limits<double>::infinity();
    } else {
        c = parse_finite("--c", c_text);
        if (c < 0) throw UsageError("--c must be a number >= 0 or inf (got " + c_text + ")");
    }
    const bool by_d = f.given("--d"), by_file = f.given("--scores");
    if (by_d == by_file)
        throw UsageError(std::string(by_d ? "both --d and --scores given" : "missing --d or --scores") +
                         ": give exactly one (--d D for the scores 0 .. D-1, --scores FILE for your own)");
    auto scores = std::make_shared<std::vector<double>>();
    std::uint64_t d = 0;
    if (by_d) {
        d = parse_integer("--d", f.get("--d"), 1, 0x7fffffffull, "the engine's candidate loops use 32-bit indices");
    } else {
        const std::string path = f.get("--scores");
        std::size_t rows = 0, cols = 0;
        try {
            if (output_format("--scores", path) == OutputFormat::Npy) {
                io::NpyArray a = io::read_npy(path); // a vector, or a one-row / one-column matrix
                rows = a.shape.empty() ? 1 : a.shape[0];
                cols = a.shape.size() == 2 ? a.shape[1] : 1;
                if (a.shape.size() > 2)
                    throw UsageError("--scores " + path + ": expected a vector, one column or one row of "
                                     "scores (got an array of " + std::to_string(a.shape.size()) + " dimensions)");
                *scores = std::move(a.values);
            } else {
                io::Matrix m = io::read_csv_matrix(path);
                rows = m.rows;
                cols = m.cols;
                *scores = std::move(m.values);
            }
        } catch (const io::IoError& e) {
            throw UsageError("--scores: " + std::string(e.what()));
        }
        if (rows != 1 && cols != 1)
            throw UsageError("--scores " + path + ": expected a vector, one column or one row of scores (got " +
                             std::to_string(rows) + " x " + std::to_string(cols) + ")");
        d = scores->size();
        if (d == 0) throw UsageError("--scores " + path + ": no scores");
        if (d > 0x7fffffffull)
            throw UsageError("--scores " + path + ": more than 2147483647 scores (32-bit candidate loops)");
        for (std::size_t i = 0; i < scores->size(); ++i)
            if (!std::isfinite((*scores)[i]))
                throw UsageError("--scores " + path + ": entry " + std::to_string(i) + " is not a finite number (" +
                                 short_number((*scores)[i]) + ")");
    }
    Sampler s;
    s.form = "expmech";
    parse_common(f, s);
    // The learners' Gumbel-max on this CPU's 16-lane coordinate team (host/cpu/cpu_isa.hpp); the scores
    // zero-padded to whole packs (the padding lanes are masked out of the argmin).
    if (by_file) scores->resize((scores->size() + 15) / 16 * 16, 0.0);
    cpu::ExpMechArgs args;
    args.seed = s.seed;
    args.d = static_cast<std::uint32_t>(d);
    args.c = c;
    args.scores = by_file ? scores->data() : nullptr;
    const cpu::Isa isa = cpu::best_isa();
    s.column_name = [](std::uint64_t) { return std::string("index"); };
    s.fill = [scores, args, isa](std::uint32_t row, std::uint64_t, std::uint64_t, double* dst) {
        std::uint32_t i = 0;
        cpu::expmech_draws(isa, args, row, 1, &i);
        *dst = static_cast<double>(i);
    };
    s.value_cost = d; // a draw is a pass over its d candidates: threads from 4096 / d draws on
    return s;
}

} // namespace

const std::vector<std::string>& sample_forms() {
    static const std::vector<std::string> forms = {"laplace", "gaussian", "exponential", "gumbel",
                                                   "gamma",   "tree",     "prefix",      "expmech"};
    return forms;
}

const std::vector<std::string>& sample_flags(const std::string& form) {
    static const std::map<std::string, std::vector<std::string>> flags = {
        {"laplace", {"--scale", "--n", "--seed"}},
        {"gaussian", {"--scale", "--n", "--seed"}},
        {"exponential", {"--scale", "--n", "--seed"}},
        {"gumbel", {"--loc", "--scale", "--n", "--seed"}},
        {"gamma", {"--shape", "--scale", "--n", "--seed"}},
        {"tree", {"--variant", "--noise", "--scale", "--T", "--n", "--seed"}},
        {"prefix", {"--mechanism", "--buffers", "--meta", "--noise", "--scale", "--T", "--n", "--seed"}},
        {"expmech", {"--c", "--d", "--scores", "--n", "--seed"}},
    };
    static const std::vector<std::string> none;
    const auto it = flags.find(form);
    return it == flags.end() ? none : it->second;
}

Sampler make_sampler(const SampleRequest& request) {
    const Flags f{request.flags};
    const std::string& form = request.form;
    // The command's parser refuses other flags before this; a library caller (dpregret.sample) is told here.
    const std::vector<std::string>& known = sample_flags(form);
    if (!known.empty())
        for (const auto& [flag, value] : request.flags)
            if (std::find(known.begin(), known.end(), flag) == known.end()) {
                std::string list;
                for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
                throw UsageError(flag + " is not a flag of sample " + form + " (its flags: " + list + ")");
            }
    if (form == "tree" || form == "prefix") return tree_sampler(f, form == "prefix");
    if (form == "expmech") return expmech_sampler(f);
    for (const Distribution& d : distributions())
        if (form == d.name) return distribution_sampler(f, d);
    std::string list;
    for (const std::string& x : sample_forms()) list += (list.empty() ? "" : ", ") + x;
    throw UsageError("DISTRIBUTION must be one of: " + list + " (got " + (form.empty() ? "''" : form) + ")");
}

void draw_samples(const Sampler& s, double* out) {
    if (s.cols <= s.batch_values) {
        fill_rows(0, s.n, s.cols, s.fill, out, s.value_cost);
        return;
    }
    for (std::uint64_t r = 0; r < s.n; ++r) fill_columns(r, 0, s.cols, s.fill, out + r * s.cols);
}

void write_samples(const Sampler& s, const std::string& path, OutputFormat format) {
    check_output_fits(s, path, format);
    // Open last: every flag has been validated, so a usage error never creates a file.
    std::unique_ptr<io::AtomicFile> file;
    try {
        file = std::make_unique<io::AtomicFile>(path);
    } catch (const io::IoError& e) {
        throw UsageError("--out: " + std::string(e.what()));
    }
    std::ostream& os = file->stream();
    std::unique_ptr<io::NpyWriter> npy;
    io::CsvWriter csv(os);
    const std::uint64_t cols = s.cols, batch_values = s.batch_values;
    if (format == OutputFormat::Npy) {
        npy = std::make_unique<io::NpyWriter>(os, s.vector ? io::Shape{s.n} : io::Shape{s.n, cols});
    } else {
        std::string line;
        for (std::uint64_t col = 0; col < cols; ++col) {
            line += (col ? "," : "") + s.column_name(col);
            if (line.size() >= (1u << 16) || col + 1 == cols) {
                os.write(line.data(), static_cast<std::streamsize>(line.size()));
                line.clear();
            }
        }
        os.put('\n');
    }
    const auto emit = [&](const double* values, std::uint64_t count, bool line_start, bool line_end) {
        for (std::uint64_t i = 0; i < count; ++i)
            if (!std::isfinite(values[i]))
                throw std::logic_error("sample: a non-finite value was drawn; no file was written");
        if (npy) {
            npy->write(values, static_cast<std::size_t>(count));
        } else {
            csv.values(values, static_cast<std::size_t>(count), !line_start);
            if (line_end) csv.end_row();
        }
        file->check();
    };

    const std::uint64_t batch_rows = std::max<std::uint64_t>(1, batch_values / cols);
    const std::uint64_t slice = std::min(cols, batch_values); // columns per fill when one row is too large
    std::vector<double> buf(static_cast<std::size_t>(std::max(std::min(batch_rows, s.n) * std::min(cols, batch_values), slice)));
    if (cols <= batch_values) {
        for (std::uint64_t r0 = 0; r0 < s.n; r0 += batch_rows) {
            const std::uint64_t rows = std::min(batch_rows, s.n - r0);
            fill_rows(r0, rows, cols, s.fill, buf.data(), s.value_cost);
            if (npy) emit(buf.data(), rows * cols, true, false);
            else
                for (std::uint64_t r = 0; r < rows; ++r) emit(buf.data() + r * cols, cols, true, true);
        }
    } else {
        for (std::uint64_t r = 0; r < s.n; ++r)
            for (std::uint64_t c0 = 0; c0 < cols; c0 += slice) {
                const std::uint64_t c1 = std::min(cols, c0 + slice);
                fill_columns(r, c0, c1, s.fill, buf.data());
                emit(buf.data(), c1 - c0, c0 == 0, c1 == cols);
            }
    }
    if (npy) npy->finish();
    file->commit();
}

} // namespace dpr::api
