// `dpregret sample`: draw noise exactly as the simulations do (same samplers, same counter-based
// streams) and write it to .npy or CSV for inspection.
//
//   sample laplace|gaussian|exponential|gumbel|gamma  ->  a length-N vector, draw i from the stream
//       StreamId{seed, stream 0, instance i, Purpose::Inspect, sub 0, round 0, element 0}
//   sample expmech  ->  a length-N vector of candidate indices, draw i = the exponential mechanism of
//       kernels/mechanisms/exponential.hpp as learner instance i draws it at round 0 (Exponential, sub 0),
//       on the CPU engine's 16-lane coordinate team of the best instruction set (host/cpu/cpu_isa.hpp)
//   sample tree  ->  an N x T matrix, row i = prefix noise Z_0..Z_{T-1} of instance i, coordinate 0,
//       from mech::prefix_noise (kernels/mechanisms/tree_aggregation.hpp; the per-round tree streams
//       Purpose::TreeStream, exactly as a learner instance i with that seed and precision double draws them)
//
// Every value is a pure function of (seed, row, column), so the output does not depend on the number of
// threads used here, and row i does not depend on --n.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "host/cli/args.hpp"
#include "host/cli/errors.hpp"
#include "host/io/atomic_file.hpp"
#include "host/io/csv.hpp"
#include "host/io/error.hpp"
#include "host/io/npy.hpp"
#include "host/cpu/cpu_isa.hpp"
#include "host/results/mechanism_json.hpp"
#include "host/results/memory_estimate.hpp"
#include "kernels/core/team.hpp"
#include "kernels/mechanisms/noisy_prefix.hpp"
#include "kernels/mechanisms/tree_aggregation.hpp"
#include "kernels/noise/samplers.hpp"
#include "kernels/rng/stream.hpp"
#include "kernels/rng/uniform.hpp"

namespace dpr::cli {

namespace {

// ---- limits (kernels/rng/stream.hpp counter layout) ----------------------------------------------
constexpr std::uint64_t kMaxRows = rng::kMaxInstances; // row i is RNG instance i (never the reserved id)
constexpr std::uint64_t kMaxT = rng::kMaxRound - 1;       // node indices and prefixes t < 2^32
constexpr std::uint64_t kMaxSeed = 0xffffffffull;         // the seed is key word k0
const std::string kRowsRange = "an integer in [1, 4294967295]";
const std::string kRowsWhy =
    "row i is drawn from RNG instance i, a 32-bit counter word (kernels/rng/stream.hpp)";

// ---- help text ------------------------------------------------------------------------------------
constexpr const char* kOutputHelp = R"TXT(
  .npy and .csv hold the same float64 values (CSV: shortest decimals that read back exactly).
The file is written as FILE.tmp.<pid> in the same directory and renamed when complete: after an error
(exit code 2 for bad input) no FILE and no temporary file are left behind.

Randomness: row i is a pure function of (--seed, i): it is drawn from learner instance i's counter-
based streams (Philox4x32-10 keyed by the seed). The same seed gives the same bytes on every machine
and thread count, and row i does not depend on --n.)TXT";

constexpr const char* kVectorOutputHelp = R"TXT(Output (--out FILE, format chosen by the extension):
  .npy  float64 array of shape (N,): numpy.load(FILE)
  .csv  a header line naming the distribution, then one value per line)TXT";

constexpr const char* kSampleFooter =
    R"TXT(Distributions (each has its own --help: density, parameters, units, example):
  laplace      Laplace(0, b)                     --scale b
  gaussian     Normal N(0, sigma^2)              --scale sigma (standard deviation)
  exponential  Exponential with mean s           --scale s
  gumbel       Gumbel(mu, beta)                  --loc mu (default 0) --scale beta
  gamma        Gamma(k, theta)                   --shape k --scale theta
  tree         prefix-sum noise of tree aggregation (binary or AS17 padded tree): an N x T matrix
  expmech      the exponential mechanism Pr[i] ∝ exp(-c s(i)) over d candidates: N indices

Common flags: --n N (draws, or rows for tree; 1..4294967295), --seed S (0..4294967295, default 0),
--out FILE (.npy or .csv).

Examples:
  dpregret sample laplace --scale 2 --n 100000 --seed 1 --out lap.npy
  dpregret sample tree --variant padded --noise laplace --scale 1 --T 1024 --n 10000 --out z.npy
  dpregret sample expmech --d 1024 --c 0.5 --n 100000 --out i.npy)TXT";

constexpr const char* kExpMechHelp = R"TXT(The exponential mechanism over d candidates with scores s (lower is better), exactly as the learners
draw it (kernels/mechanisms/exponential.hpp; docs/spec/model.md §1.7):
  law       Pr[i] = exp(-c s(i)) / sum_j exp(-c s(j)),  i = 0 .. d-1
            c = eps / (2 Delta) makes it eps-DP for a score of sensitivity Delta (AFKT23 Alg. 1: c = eta/2).
            c = 0 is uniform; c = inf is uniform over the minimisers of s.
  sampler   Gumbel-max: i = argmin_j (c s(j) - G_j), G_j = -ln(-ln U_j) standard Gumbel, one pass over the
            candidates (ties to the lowest index), O(d) per draw, no normaliser; run on the CPU engine's
            16-lane coordinate team (the same draws as the serial oracle), one draw per thread at a time.
  --c       c >= 0, a number or inf (required)
  --d       d candidates (1 .. 2^31 - 1) with the scores s(i) = i: Pr[i] ∝ exp(-c i), a geometric law
            truncated at d
  --scores  FILE: the scores, a .npy vector (or one-row/one-column matrix), or a CSV with one column or
            one row of d finite numbers
            (exactly one of --d and --scores)
Draw r (output entry r) uses the uniforms U_j of (seed, stream 0, instance r, Purpose::Exponential, sub 0,
round 0, element j): the round-0 draw of learner instance r. Every entry is a pure function of (--seed, r).

Example: the truncated geometric law with c = 0.5 over 10 candidates:
  dpregret sample expmech --d 10 --c 0.5 --n 100000 --seed 1 --out i.npy
  python3 -c "import numpy as np; i = np.load('i.npy'); print(np.bincount(i.astype(int)) / len(i))")TXT";

constexpr const char* kLaplaceHelp = R"TXT(Laplace(0, b): the noise of the Laplace mechanism.
  density   p(x) = exp(-|x|/b) / (2b), x real
  moments   mean 0, variance 2 b^2 (standard deviation sqrt(2) b), E|x| = b
  --scale   b > 0: the scale (not the variance, not the standard deviation), in the units of the
            quantity the noise is added to. For a query with l1-sensitivity Delta, b = Delta/epsilon
            gives epsilon-DP.
  sampler   inverse CDF of one 53-bit open uniform u in (0, 1): |x| <= 52 ln(2) b = 36.04 b
            (the cut-off tail has probability 2^-52).

Example: 100000 draws with b = 2 (variance 8):
  dpregret sample laplace --scale 2 --n 100000 --seed 1 --out lap.npy
  python3 -c "import numpy as np; x = np.load('lap.npy'); print(x.shape, x.var())")TXT";

constexpr const char* kGaussianHelp = R"TXT(Gaussian N(0, sigma^2): the noise of the Gaussian mechanism.
  density   p(x) = exp(-x^2 / (2 sigma^2)) / (sigma sqrt(2 pi)), x real
  moments   mean 0, variance sigma^2
  --scale   sigma > 0: the standard deviation (not the variance), in the units of the quantity the
            noise is added to. Classical calibration for l2-sensitivity Delta and epsilon < 1:
            sigma = Delta sqrt(2 ln(1.25/delta)) / epsilon gives (epsilon, delta)-DP.
  sampler   Box-Muller (cosine branch) from two 53-bit open uniforms: |x| <= 8.57 sigma.

Example: 100000 draws with sigma = 0.5 (variance 0.25), as CSV:
  dpregret sample gaussian --scale 0.5 --n 100000 --seed 1 --out gauss.csv
  python3 -c "import numpy as np; x = np.loadtxt('gauss.csv', skiprows=1); print(x.std())")TXT";

constexpr const char* kExponentialHelp = R"TXT(Exponential with mean s (rate 1/s).
  density   p(x) = exp(-x/s) / s, x > 0
  moments   mean s, variance s^2
  --scale   s > 0: the mean (= 1/rate, not the rate), in the units of x.
            The difference of two independent Exponential(b) draws is Laplace(0, b); the sum of k
            Exponential(theta) draws is Gamma(k, theta).
  sampler   -s ln(u), one 53-bit open uniform: x in [2^-53 s, 36.74 s].

Example: 100000 draws with mean 3:
  dpregret sample exponential --scale 3 --n 100000 --seed 1 --out expo.npy
  python3 -c "import numpy as np; x = np.load('expo.npy'); print(x.mean(), x.min() > 0)")TXT";

constexpr const char* kGumbelHelp = R"TXT(Gumbel(mu, beta): the largest-value extreme-value law.
  CDF       F(x) = exp(-exp(-(x - mu)/beta)), x real
  density   p(x) = exp(-(z + exp(-z))) / beta with z = (x - mu)/beta
  moments   mode mu, mean mu + 0.5772 beta (Euler's constant), variance pi^2 beta^2 / 6
  --loc     mu: any finite number (default 0)
  --scale   beta > 0, in the units of x
  sampler   mu - beta ln(-ln u), one 53-bit open uniform.
  Gumbel-max: argmax_i (s_i + Gumbel(0, 1)) = i with probability softmax(s)_i. This is how the
  exponential mechanism (scores s_i = epsilon u_i / (2 Delta)) samples in one pass.

Example: 100000 draws of Gumbel(0, 1) (mean 0.5772):
  dpregret sample gumbel --scale 1 --n 100000 --seed 1 --out gumbel.npy
  python3 -c "import numpy as np; x = np.load('gumbel.npy'); print(x.mean())")TXT";

constexpr const char* kGammaHelp = R"TXT(Gamma(k, theta) in the shape-scale parametrisation.
  density   p(x) = x^(k-1) exp(-x/theta) / (Gamma(k) theta^k), x > 0
  moments   mean k theta, variance k theta^2
  --shape   k > 0, dimensionless (k = 1 is the exponential law with mean theta)
  --scale   theta > 0: the scale (not the rate 1/theta), in the units of x
  sampler   Marsaglia-Tsang (2000) rejection (a variable number of random words per draw);
            k < 1 via Gamma(k + 1) U^(1/k).
  theta (G1 - G2) with G1, G2 ~ Gamma(k, 1) independent is the sum of k iid Laplace(theta) draws
  (docs/ARCHITECTURE.md §5); the padded tree draws that sum with a cheaper exact transform of
  uniforms (noise::laplace_sum, docs/RANDOMNESS.md §4).

Example: 100000 draws with k = 2.5, theta = 2 (mean 5, variance 10):
  dpregret sample gamma --shape 2.5 --scale 2 --n 100000 --seed 1 --out gamma.npy
  python3 -c "import numpy as np; x = np.load('gamma.npy'); print(x.mean(), x.var())")TXT";

constexpr const char* kPrefixHelp = R"TXT(`sample prefix --mechanism M` draws the prefix-sum noise of the noisy-prefix seam every prefix-sum
learner uses (docs/MECHANISMS.md §3.3): for padded, binary and honaker the same matrix as `sample tree
--variant M`; blt is buffered-linear-Toeplitz noise (docs/MECHANISMS.md §3.5): --noise gaussian only, --scale
the sigma of one step's draw, --buffers B in 1..6 (default 4, 5 when T > 2^18), --T up to 1048576;
Z_t = N_t, Var Z_t = sigma^2 sum_{k<t} e_k^2. With --meta FILE.json it also writes the mechanism's parameters:
mechanism, name, noise, scale, T, node_variance, sensitivity_squared (the squared l2 sensitivity of everything
released for a unit per-step sensitivity: h' = ceil(log2 T) for the trees, sum_{k<T-1} c_k^2 for BLT), variance
(Var(Z_t) / node_variance for t = 0 .. T-1, exact), and buffers, theta, omega, inverse_theta, inverse_omega,
one_minus_theta, one_minus_inverse_theta, fitted_steps (null for the trees).
Example: 4-buffer BLT at T = 65536:
  dpregret sample prefix --mechanism blt --noise gaussian --scale 1 --T 65536 --n 2000 --out n.npy --meta n.json

)TXT";

constexpr const char* kTreeHelp = R"TXT(The noise that tree aggregation adds to the released prefix sums:
Z_t = L~_t - L_t for t = 0 .. T-1 (column t), for coordinate 0 of learner instance i (row i), exactly
as a learner run with this --seed draws it. Only the noise is drawn (no losses), and --scale is the
noise of ONE tree node as given: no calibration from epsilon (that is `run`'s job; docs/spec/model.md
§1.4-§1.5 give the formulas).
  --variant binary   standard binary mechanism (Dwork-Naor-Pitassi-Rothblum 2010, Chan-Shi-Song 2011;
                     docs/spec/model.md §1.4): Z_t = sum of the node noises of the popcount(t) dyadic
                     blocks of [0, t). Z_0 = 0; Var Z_t = popcount(t) Var(node).
  --variant padded   Agarwal-Singh 2017 Alg. 2 (docs/spec/model.md §1.5): adds ceil(log2 T) - popcount(t)
                     fresh draws, so every Z_t is a sum of exactly ceil(log2 T) iid node draws (Z_0 is
                     pure padding): Var Z_t = ceil(log2 T) Var(node) for every t. The Z_t are identically
                     distributed, not independent.
  In both, Cov(Z_t, Z_t') = (number of nodes shared by [0,t) and [0,t')) Var(node); e.g. Z_2 and Z_3
  share the node [0,2).
  --variant honaker  the binary tree with Honaker's estimator (Honaker 2015; docs/MECHANISMS.md §3.4): every
                     node re-estimated from its subtree, e_j = a_j v_j + (1 - a_j)(e_left + e_right),
                     a_j = 1/(2 - 2^-j); Var Z_t = Var(node) sum over the set bits j of t of a_j (t = 1023:
                     5.80 Var(node) instead of 10). The same privacy as the binary tree. --T up to
                     1048576 (each row is streamed from prefix 0, as a learner streams it).
  --noise laplace    node noise Laplace(0, b), b = --scale: Var(node) = 2 b^2
  --noise gaussian   node noise N(0, sigma^2), sigma = --scale: Var(node) = sigma^2
  --T                horizon T, 1..4294967295 (the tree has ceil(log2 T) levels below the root)

Example: padded tree, T = 1024 (10 levels), Laplace b = 1: every column has variance 10 * 2 = 20:
  dpregret sample tree --variant padded --noise laplace --scale 1 --T 1024 --n 10000 --out z.npy
  python3 -c "import numpy as np; z = np.load('z.npy'); print(z.shape, z.var(axis=0)[:4])"
)TXT";

constexpr const char* kMatrixOutputHelp = R"TXT(Output (--out FILE, format chosen by the extension):
  .npy  float64 array of shape (N, T): numpy.load(FILE)
  .csv  a header line t0,t1,...,t{T-1}, then one line of T values per row)TXT";

// ---- flags shared by every form ---------------------------------------------------------------------

struct CommonFlags {
    std::string n, seed = "0", out;
    CLI::Option* n_opt = nullptr;
    CLI::Option* out_opt = nullptr;
};

void add_common_flags(CLI::App* sub, CommonFlags& f, const std::string& n_help) {
    f.n_opt = sub->add_option("--n", f.n, n_help + ", 1..4294967295 (required)")->type_name("N");
    sub->add_option("--seed", f.seed, "RNG seed, 0..4294967295 (default 0)")->type_name("SEED");
    f.out_opt = sub->add_option("-o,--out", f.out, "Output file, .npy (float64) or .csv (required)")
                    ->type_name("FILE");
}

struct Common {
    std::uint64_t n = 0;
    std::uint32_t seed = 0;
    std::string out;
    OutputFormat format = OutputFormat::Npy;
};

Common parse_common(const CommonFlags& f) {
    Common c;
    require_given(f.n_opt, kRowsRange);
    c.n = parse_integer("--n", f.n, 1, kMaxRows, kRowsWhy);
    c.seed = static_cast<std::uint32_t>(parse_integer("--seed", f.seed, 0, kMaxSeed));
    require_given(f.out_opt, "a file name ending in .npy or .csv");
    c.out = f.out;
    c.format = output_format("--out", f.out);
    return c;
}

// ---- generation and output ----------------------------------------------------------------------------

constexpr std::uint64_t kBatchValues = 1u << 20; // 8 MiB of doubles held at once

/// fill(row, c0, c1, dst) writes the values of columns [c0, c1) of row `row` to dst[0 .. c1 - c0); it
/// must be a pure function of (row, column).
using RowFill = std::function<void(std::uint32_t row, std::uint64_t c0, std::uint64_t c1, double* dst)>;

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
std::uint64_t min_output_bytes(const Common& c, std::uint64_t cols, bool vector) {
    const std::uint64_t values = c.n * cols; // n, cols < 2^32: no overflow
    if (c.format == OutputFormat::Npy)
        return io::npy_header_f8(vector ? io::Shape{c.n} : io::Shape{c.n, cols}).size() + 8 * values;
    return 2 * values;
}

/// Refuses an output that cannot fit before drawing anything: the free space of the destination's file
/// system, and the file size limit of this process (ulimit -f).
void check_output_fits(const Common& c, std::uint64_t cols, bool vector) {
    const std::uint64_t need = min_output_bytes(c, cols, vector);
    const std::string what = c.format == OutputFormat::Npy ? "" : "at least ";
    rlimit lim{};
    if (::getrlimit(RLIMIT_FSIZE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY && need > lim.rlim_cur)
        throw UsageError("--out " + c.out + ": the file would take " + what + std::to_string(need) + " bytes (" +
                         human_bytes(need) + "), above this process's file size limit of " +
                         std::to_string(static_cast<std::uint64_t>(lim.rlim_cur)) +
                         " bytes (ulimit -f); reduce --n or --T");
    std::string dir = std::filesystem::path(c.out).parent_path().string();
    if (dir.empty()) dir = ".";
    const std::optional<std::uint64_t> avail = available_disk_bytes(dir);
    if (!fits_on_disk(need, avail))
        throw UsageError("--out " + c.out + ": the file would take " + what + std::to_string(need) + " bytes (" +
                         human_bytes(need) + "), but only " + std::to_string(*avail) + " bytes (" +
                         human_bytes(*avail) + ") are free there; reduce --n or --T");
}

/// Writes an n x cols matrix (or, when `vector` is set, a length-n vector; cols must be 1), streaming: at
/// most kBatchValues values are held at once, whole rows when they fit and column slices of one row
/// when a row alone is larger (sample tree --T 4294967295 needs 8 MiB, not 32 GiB). `column_name(c)` is
/// the CSV header field of column c. Every value is checked to be finite (the parameter checks make
/// overflow impossible; this keeps the promise of docs/CLI.md if they are ever wrong).
void write_samples(const Common& c, std::uint64_t cols, bool vector,
                   const std::function<std::string(std::uint64_t)>& column_name, const RowFill& fill,
                   std::uint64_t batch_values = kBatchValues, std::uint64_t value_cost = 1) {
    check_output_fits(c, cols, vector);
    // Open last: every flag has been validated, so a usage error never creates a file.
    std::unique_ptr<io::AtomicFile> file;
    try {
        file = std::make_unique<io::AtomicFile>(c.out);
    } catch (const io::IoError& e) {
        throw UsageError("--out: " + std::string(e.what()));
    }
    std::ostream& os = file->stream();
    std::unique_ptr<io::NpyWriter> npy;
    io::CsvWriter csv(os);
    if (c.format == OutputFormat::Npy) {
        npy = std::make_unique<io::NpyWriter>(os, vector ? io::Shape{c.n} : io::Shape{c.n, cols});
    } else {
        std::string line;
        for (std::uint64_t col = 0; col < cols; ++col) {
            line += (col ? "," : "") + column_name(col);
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
    std::vector<double> buf(static_cast<std::size_t>(std::max(std::min(batch_rows, c.n) * std::min(cols, batch_values), slice)));
    if (cols <= batch_values) {
        for (std::uint64_t r0 = 0; r0 < c.n; r0 += batch_rows) {
            const std::uint64_t rows = std::min(batch_rows, c.n - r0);
            fill_rows(r0, rows, cols, fill, buf.data(), value_cost);
            if (npy) emit(buf.data(), rows * cols, true, false);
            else
                for (std::uint64_t r = 0; r < rows; ++r) emit(buf.data() + r * cols, cols, true, true);
        }
    } else {
        for (std::uint64_t r = 0; r < c.n; ++r)
            for (std::uint64_t c0 = 0; c0 < cols; c0 += slice) {
                const std::uint64_t c1 = std::min(cols, c0 + slice);
                fill_columns(r, c0, c1, fill, buf.data());
                emit(buf.data(), c1 - c0, c0 == 0, c1 == cols);
            }
    }
    if (npy) npy->finish();
    file->commit();
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

// ---- one subcommand per distribution ----------------------------------------------------------------

/// Registers `sample <name>` for a distribution with a scale and optionally a shape or a location.
/// `draw(src, scale, extra)` draws one value; extra is --shape or --loc (unused otherwise).
enum class Extra { None, Shape, Loc };

/// fits(scale, extra, scale_text, extra_text) throws UsageError when the largest draw would overflow.
using FitCheck = void (*)(double, double, const std::string&, const std::string&);

template <class Draw>
void add_distribution(CLI::App* sample, const std::string& name, const std::string& summary, const char* help,
                      const std::string& scale_help, const std::string& scale_name, Extra extra, Draw draw,
                      FitCheck fits) {
    CLI::App* sub = sample->add_subcommand(name, summary);
    sub->footer(std::string(help) + "\n\n" + kVectorOutputHelp + kOutputHelp);
    struct State {
        CommonFlags common;
        std::string scale, extra = "0";
        CLI::Option* scale_opt = nullptr;
        CLI::Option* extra_opt = nullptr;
    };
    auto st = std::make_shared<State>();
    if (extra == Extra::Shape)
        st->extra_opt =
            sub->add_option("--shape", st->extra, "Shape k, a finite number > 0 (required)")->type_name("K");
    if (extra == Extra::Loc)
        st->extra_opt =
            sub->add_option("--loc", st->extra, "Location mu, a finite number (default 0)")->type_name("MU");
    st->scale_opt = sub->add_option("--scale", st->scale, scale_help + ", a finite number > 0 (required)")
                        ->type_name(scale_name);
    add_common_flags(sub, st->common, "Number of draws N");

    sub->callback([st, name, extra, draw, fits] {
        double extra_value = 0.0;
        if (extra == Extra::Shape) {
            require_given(st->extra_opt, "a finite number > 0");
            extra_value = parse_positive_finite("--shape", st->extra);
        } else if (extra == Extra::Loc) {
            extra_value = parse_finite("--loc", st->extra);
        }
        require_given(st->scale_opt, "a finite number > 0");
        const double scale = parse_positive_finite("--scale", st->scale);
        fits(scale, extra_value, st->scale, st->extra);
        const Common c = parse_common(st->common);
        write_samples(c, 1, true, [&](std::uint64_t) { return name; },
                      [&](std::uint32_t row, std::uint64_t, std::uint64_t, double* dst) {
            rng::WordStream src(inspect_stream(c.seed, row));
            *dst = draw(src, scale, extra_value);
        });
    });
}

/// `sample tree --variant V` and `sample prefix --mechanism M` (the same matrix; `prefix` names the seam's mechanism
/// and can write its parameters with --meta).
void add_tree(CLI::App* sample, bool prefix_form) {
    const std::string flag = prefix_form ? "--mechanism" : "--variant";
    CLI::App* sub = sample->add_subcommand(
        prefix_form ? "prefix" : "tree",
        prefix_form ? "Prefix-sum noise Z_t of a learner's prefix mechanism (padded, binary, honaker, blt): an N x T matrix"
                    : "Prefix-sum noise Z_t = L~_t - L_t of tree aggregation (binary or padded): an N x T matrix");
    sub->footer(std::string(prefix_form ? kPrefixHelp : "") + kTreeHelp + "\n" + kMatrixOutputHelp + kOutputHelp);
    struct State {
        CommonFlags common;
        std::string variant = "padded", noise = "laplace", scale, T, meta, buffers;
        CLI::Option* scale_opt = nullptr;
        CLI::Option* T_opt = nullptr;
    };
    auto st = std::make_shared<State>();
    sub->add_option(flag, st->variant,
                    prefix_form ? "padded (AS17, default), binary, honaker (the binary tree with Honaker's estimator) or "
                                  "blt (buffered linear Toeplitz; gaussian only)"
                                : "padded (AS17, default), binary, or honaker (the binary tree with Honaker's estimator)")
        ->type_name(prefix_form ? "MECHANISM" : "VARIANT");
    if (prefix_form)
        sub->add_option("--buffers", st->buffers,
                        "Buffers of --mechanism blt, 1..6 (default 4, 5 when T > 2^18), as [learner] blt_buffers")
            ->type_name("B");
    if (prefix_form)
        sub->add_option("--meta", st->meta, "Also write the mechanism's parameters and the exact Var(Z_t) as JSON (T <= 1048576)")
            ->type_name("FILE.json");
    sub->add_option("--noise", st->noise, "Node noise law: laplace (default) or gaussian")->type_name("LAW");
    st->scale_opt = sub->add_option("--scale", st->scale,
                                    "Node noise: Laplace b or Gaussian sigma, a finite number > 0 (required)")
                        ->type_name("SCALE");
    st->T_opt =
        sub->add_option("--T", st->T, "Horizon T (columns), 1..4294967295 (required)")->type_name("T");
    add_common_flags(sub, st->common, "Number of rows (instances) N");

    sub->callback([st, flag, prefix_form] {
        const std::vector<std::string> mechanisms =
            prefix_form ? std::vector<std::string>{"padded", "binary", "honaker", "blt"}
                        : std::vector<std::string>{"padded", "binary", "honaker"};
        const std::size_t variant = parse_choice(flag, st->variant, mechanisms);
        const std::size_t noise = parse_choice("--noise", st->noise, {"laplace", "gaussian"});
        if (variant == 3 && noise == 0)
            throw UsageError("--mechanism blt needs --noise gaussian: under pure eps-DP (Laplace) BLT's l1 column norm "
                             "makes it far worse than the tree; --mechanism honaker is the better tree for Laplace noise "
                             "(docs/MECHANISMS.md §3.5)");
        if (!st->buffers.empty() && variant != 3) throw UsageError("--buffers is a parameter of --mechanism blt");
        require_given(st->scale_opt, "a finite number > 0");
        const double scale = parse_positive_finite("--scale", st->scale);
        require_given(st->T_opt, "an integer in [1, 4294967295]");
        const std::uint64_t T = parse_integer("--T", st->T, 1, kMaxT,
                                              "prefixes and node indices are 32-bit RNG counter words "
                                              "(kernels/rng/stream.hpp)");
        // Honaker's estimates weigh each node draw by at most 2 in total: one more factor 2 on the bound; a BLT
        // prefix weighs each of its (at most T) draws by |e_k| <= 1.
        check_draws_fit("--scale", st->scale, scale,
                        log_tree_unit_bound(noise == 0) + (variant == 2   ? std::log(2.0)
                                                           : variant == 3 ? std::log(static_cast<double>(T))
                                                                          : 0.0),
                        std::string("sample ") + (prefix_form ? "prefix" : "tree") + " --noise " +
                            (noise == 0 ? "laplace" : "gaussian"));
        const std::uint32_t buffers =
            st->buffers.empty() ? (T > (std::uint64_t{1} << 18) ? 5u : 4u)
                                : static_cast<std::uint32_t>(parse_integer("--buffers", st->buffers, 1,
                                                                           mech::kMaxBltBuffers,
                                                                           "the fitted BLT table's range"));
        if (variant >= 2 && T > kBatchValues)
            throw UsageError("--T must be at most " + std::to_string(kBatchValues) + " with " + flag + " " +
                             mechanisms[variant] + " (got " + st->T + "): its rows are streamed prefix after prefix, "
                             "and a longer row would be cut into pieces that each restart from prefix 0");
        if (!st->meta.empty() && T > kBatchValues)
            throw UsageError("--T must be at most " + std::to_string(kBatchValues) + " with --meta (got " + st->T +
                             "): the file lists Var(Z_t) for every t");
        if (!st->meta.empty() && std::filesystem::path(st->meta).extension() != ".json")
            throw UsageError("--meta " + st->meta + ": must name a .json file");
        const Common c = parse_common(st->common);
        if (rng::check_layout(c.seed, c.n, T, 1) != rng::LayoutError::Ok) // guaranteed by the ranges above
            throw UsageError("--n/--T do not fit the RNG counter layout (kernels/rng/stream.hpp)");

        mech::TreeNoise base;
        base.variant = variant == 0 ? mech::TreeVariant::Padded : mech::TreeVariant::Binary;
        base.noise = noise == 0 ? mech::NodeNoise::Laplace : mech::NodeNoise::Gaussian;
        base.scale = scale;
        base.T = T;
        base.seed = c.seed;
        base.stream = 0;
        mech::PrefixMechanism described;
        described.tree = variant == 0 ? mech::TreeVariant::Padded : mech::TreeVariant::Binary;
        described.honaker = variant == 2;
        described.blt = variant == 3;
        if (described.blt) described.blt_noise = mech::blt_for_steps(buffers, T - 1);
        described.noise = base.noise;
        described.scale = scale;
        described.T = T;
        // Opened before any sample is drawn: a --meta that cannot be written stops the command before the
        // matrix exists (no output that looks complete without its meta).
        std::unique_ptr<io::AtomicFile> meta_file;
        if (!st->meta.empty()) {
            try {
                meta_file = std::make_unique<io::AtomicFile>(st->meta);
            } catch (const io::IoError& e) {
                throw UsageError("--meta: " + std::string(e.what()));
            }
        }
        const auto write_meta = [&] {
            if (!meta_file) return;
            nlohmann::json j;
            j["mechanism"] = mechanisms[variant];
            j["name"] = described.name();
            j["noise"] = noise == 0 ? "laplace" : "gaussian";
            j["scale"] = scale;
            j["T"] = T;
            j["node_variance"] = noise == 0 ? 2.0 * scale * scale : scale * scale;
            put_blt_json(j, described.blt ? described.blt_noise : mech::BltNoise{}); // null for the trees
            // Squared l2 sensitivity of everything released for a unit per-step sensitivity: the tree's h' levels
            // (one node each; only Z_0 .. Z_{T-1} are released), BLT's sum_{k<T-1} c_k^2.
            j["sensitivity_squared"] = described.sensitivity_squared();
            std::vector<double> v(T);
            for (std::uint64_t t = 0; t < T; ++t) v[t] = described.unit_variance(t);
            j["variance"] = v; // Var(Z_t) / node_variance, t = 0 .. T-1
            meta_file->stream() << j.dump() << "\n";
            meta_file->commit();
        };
        if (variant >= 2) {
            // Honaker's estimates and BLT noise are streamed as a learner streams them (the definition costs O(t) per Z_t): the
            // seam's state for one coordinate, rounds 1 .. t1 (Z_{t-1} in round t), columns [t0, t1) kept.
            const mech::PrefixMechanism& m = described;
            write_samples(c, T, false, [](std::uint64_t t) { return "t" + std::to_string(t); },
                          [&](std::uint32_t row, std::uint64_t t0, std::uint64_t t1, double* dst) {
                              std::vector<double> state(m.rows());
                              SerialTeam<double> team;
                              team.rng = RngKey{c.seed, 0};
                              team.id = row;
                              const StridedView<double> S{state.data(), 1, 1};
                              m.init(team, S, 1);
                              for (std::uint64_t t = 1; t <= t1; ++t) {
                                  const double z = m.next(team, m.step(t), S, 0u);
                                  if (t - 1 >= t0) dst[t - 1 - t0] = z;
                              }
                          });
            write_meta();
            return;
        }
        write_samples(c, T, false, [](std::uint64_t t) { return "t" + std::to_string(t); },
                      [&](std::uint32_t row, std::uint64_t t0, std::uint64_t t1, double* dst) {
                          mech::TreeNoise tn = base;
                          tn.instance = row;
                          for (std::uint64_t t = t0; t < t1; ++t) dst[t - t0] = mech::prefix_noise(tn, t, 0);
                      });
        write_meta();
    });
}

void add_expmech(CLI::App* sample) {
    CLI::App* sub = sample->add_subcommand(
        "expmech", "The exponential mechanism Pr[i] ∝ exp(-c s(i)) over d candidates: N candidate indices");
    sub->footer(std::string(kExpMechHelp) + "\n" + kVectorOutputHelp + kOutputHelp);
    struct State {
        CommonFlags common;
        std::string c, d, scores;
        CLI::Option* c_opt = nullptr;
        CLI::Option* d_opt = nullptr;
        CLI::Option* scores_opt = nullptr;
    };
    auto st = std::make_shared<State>();
    st->c_opt = sub->add_option("--c", st->c, "Inverse temperature c >= 0, or inf (required)")->type_name("C");
    st->d_opt = sub->add_option("--d", st->d, "Candidates with scores s(i) = i, 1..2147483647")->type_name("D");
    st->scores_opt = sub->add_option("--scores", st->scores, "Scores file: .npy vector or one-column/one-row CSV")
                         ->type_name("FILE");
    add_common_flags(sub, st->common, "Number of draws N");

    sub->callback([st] {
        require_given(st->c_opt, "a number >= 0 or inf");
        double c = 0.0;
        std::string lower = st->c;
        std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
        if (lower == "inf" || lower == "+inf" || lower == "infinity" || lower == "+infinity") {
            c = std::numeric_limits<double>::infinity();
        } else {
            c = parse_finite("--c", st->c);
            if (c < 0) throw UsageError("--c must be a number >= 0 or inf (got " + st->c + ")");
        }
        const bool by_d = st->d_opt->count() > 0, by_file = st->scores_opt->count() > 0;
        if (by_d == by_file)
            throw UsageError(std::string(by_d ? "both --d and --scores given" : "missing --d or --scores") +
                             ": give exactly one (--d D for the scores 0 .. D-1, --scores FILE for your own)");
        std::vector<double> scores;
        std::uint64_t d = 0;
        if (by_d) {
            d = parse_integer("--d", st->d, 1, 0x7fffffffull, "the engine's candidate loops use 32-bit indices");
        } else {
            std::size_t rows = 0, cols = 0;
            try {
                if (output_format("--scores", st->scores) == OutputFormat::Npy) {
                    io::NpyArray a = io::read_npy(st->scores); // a vector, or a one-row / one-column matrix
                    rows = a.shape.empty() ? 1 : a.shape[0];
                    cols = a.shape.size() == 2 ? a.shape[1] : 1;
                    if (a.shape.size() > 2)
                        throw UsageError("--scores " + st->scores + ": expected a vector, one column or one row of "
                                         "scores (got an array of " + std::to_string(a.shape.size()) + " dimensions)");
                    scores = std::move(a.values);
                } else {
                    io::Matrix m = io::read_csv_matrix(st->scores);
                    rows = m.rows;
                    cols = m.cols;
                    scores = std::move(m.values);
                }
            } catch (const io::IoError& e) {
                throw UsageError("--scores: " + std::string(e.what()));
            }
            if (rows != 1 && cols != 1)
                throw UsageError("--scores " + st->scores + ": expected a vector, one column or one row of scores (got " +
                                 std::to_string(rows) + " x " + std::to_string(cols) + ")");
            d = scores.size();
            if (d == 0) throw UsageError("--scores " + st->scores + ": no scores");
            if (d > 0x7fffffffull)
                throw UsageError("--scores " + st->scores + ": more than 2147483647 scores (32-bit candidate loops)");
            for (std::size_t i = 0; i < scores.size(); ++i)
                if (!std::isfinite(scores[i]))
                    throw UsageError("--scores " + st->scores + ": entry " + std::to_string(i) +
                                     " is not a finite number (" + short_number(scores[i]) + ")");
        }
        const Common cm = parse_common(st->common);
        // The learners' Gumbel-max on this CPU's 16-lane coordinate team (host/cpu/cpu_isa.hpp); the scores
        // zero-padded to whole packs (the padding lanes are masked out of the argmin).
        if (by_file) scores.resize((scores.size() + 15) / 16 * 16, 0.0);
        cpu::ExpMechArgs args;
        args.seed = cm.seed;
        args.d = static_cast<std::uint32_t>(d);
        args.c = c;
        args.scores = by_file ? scores.data() : nullptr;
        const cpu::Isa isa = cpu::best_isa();
        write_samples(cm, 1, true, [](std::uint64_t) { return std::string("index"); },
                      [&](std::uint32_t row, std::uint64_t, std::uint64_t, double* dst) {
                          std::uint32_t i = 0;
                          cpu::expmech_draws(isa, args, row, 1, &i);
                          *dst = static_cast<double>(i);
                      },
                      kBatchValues, d); // a draw is a pass over its d candidates: threads from 4096 / d draws on
    });
}

} // namespace

void add_sample_command(CLI::App& app) {
    CLI::App* sample = app.add_subcommand(
        "sample",
        "Draw noise (Laplace, Gaussian, exponential, Gumbel, Gamma, tree prefix noise) or exponential-mechanism "
        "draws to .npy or CSV.");
    sample->footer(kSampleFooter);
    sample->require_subcommand(0, 1);

    add_distribution(sample, "laplace", "Laplace(0, b): density exp(-|x|/b)/(2b), variance 2b^2",
                     kLaplaceHelp, "Scale b (variance 2b^2)", "B", Extra::None,
                     [](rng::WordStream& s, double b, double) { return noise::laplace(s, b); },
                     [](double b, double, const std::string& text, const std::string&) {
                         check_draws_fit("--scale", text, b, std::log(kMaxLaplaceUnit), "laplace");
                     });
    add_distribution(sample, "gaussian", "Normal N(0, sigma^2): --scale is the standard deviation sigma",
                     kGaussianHelp, "Standard deviation sigma", "SIGMA", Extra::None,
                     [](rng::WordStream& s, double sigma, double) { return noise::gaussian(s, sigma); },
                     [](double sigma, double, const std::string& text, const std::string&) {
                         check_draws_fit("--scale", text, sigma, std::log(kMaxNormalUnit), "gaussian");
                     });
    add_distribution(sample, "exponential", "Exponential: density exp(-x/s)/s, mean s", kExponentialHelp,
                     "Mean s (= 1/rate)", "MEAN", Extra::None,
                     [](rng::WordStream& s, double mean, double) { return noise::exponential(s, mean); },
                     [](double mean, double, const std::string& text, const std::string&) {
                         check_draws_fit("--scale", text, mean, std::log(kMaxNegLogU), "exponential");
                     });
    add_distribution(sample, "gumbel", "Gumbel(mu, beta): CDF exp(-exp(-(x-mu)/beta))", kGumbelHelp,
                     "Scale beta", "BETA", Extra::Loc,
                     [](rng::WordStream& s, double beta, double mu) { return noise::gumbel(s, mu, beta); },
                     [](double beta, double mu, const std::string& text, const std::string& loc_text) {
                         // x in [mu - 3.6 beta, mu + 36.74 beta]: |x| <= |mu| + 36.74 beta.
                         const double room = std::numeric_limits<double>::max() - std::fabs(mu);
                         if (beta * kMaxNegLogU * (1 + 1e-9) <= room) return;
                         throw UsageError("--scale must be a finite number in (0, " +
                                          short_number(room / kMaxNegLogU / (1 + 1e-9)) +
                                          "] for gumbel with --loc " + loc_text + " (got " + text +
                                          "): draws reach |loc| + 36.74 scale, beyond the largest double "
                                          "(1.797e308)");
                     });
    add_distribution(sample, "gamma", "Gamma(k, theta): mean k theta, variance k theta^2", kGammaHelp,
                     "Scale theta (not the rate)", "THETA", Extra::Shape,
                     [](rng::WordStream& s, double theta, double k) { return noise::gamma(s, k, theta); },
                     [](double theta, double k, const std::string& text, const std::string& shape_text) {
                         check_draws_fit("--scale", text, theta, log_gamma_unit_bound(k),
                                         "gamma with --shape " + shape_text);
                     });
    add_tree(sample, false);
    add_tree(sample, true);
    add_expmech(sample);

    // A name that is not one of the subcommands above is left over as an "extra" of `sample` (extras are
    // allowed here only; the subcommands were created before, so they do not inherit it), and gets the
    // same kind of message as a bad flag value instead of CLI11's "arguments were not expected".
    sample->allow_extras();
    sample->callback([sample] {
        if (!sample->get_subcommands().empty()) return;
        const std::vector<std::string> rest = sample->remaining();
        const std::string forms = "laplace, gaussian, exponential, gumbel, gamma, tree, prefix, expmech";
        if (rest.empty() || rest.front().rfind('-', 0) == 0)
            throw UsageError("missing DISTRIBUTION" +
                             (rest.empty() ? std::string() : " before '" + rest.front() + "'") +
                             ": must be one of: " + forms + " (see 'dpregret sample --help')");
        throw UsageError("DISTRIBUTION must be one of: " + forms + " (got " + rest.front() + ")");
    });
}

} // namespace dpr::cli
