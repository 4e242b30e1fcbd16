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
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "host/api/sample.hpp"
#include "host/cli/args.hpp"
#include "host/cli/errors.hpp"
#include "host/io/atomic_file.hpp"
#include "host/io/error.hpp"

namespace dpr::cli {

namespace {

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
  prefix       the same for any prefix mechanism (padded, binary, honaker, blt), --meta for its variances
  expmech      the exponential mechanism Pr[i] ∝ exp(-c s(i)) over d candidates: N indices

Common flags: --n N (draws, or rows for tree and prefix; 1..4294967295), --seed S (0..4294967295, default 0),
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

// ---- flags ------------------------------------------------------------------------------------------

/// A form's flags as text, bound to CLI11's options; the ones given become the library's request
/// (host/api/sample.hpp), which checks them and draws; the command adds --out (and --meta's file).
struct Form {
    std::string name;
    std::map<std::string, std::string> text;
    std::vector<std::pair<std::string, CLI::Option*>> options;
    CLI::Option* out = nullptr;

    CLI::Option* add(CLI::App* sub, const std::string& names, const std::string& key, const std::string& help,
                     const std::string& type) {
        CLI::Option* o = sub->add_option(names, text[key], help)->type_name(type);
        options.emplace_back(key, o);
        return o;
    }
    void add_common(CLI::App* sub, const std::string& n_help) {
        add(sub, "--n", "--n", n_help + ", 1..4294967295 (required)", "N");
        add(sub, "--seed", "--seed", "RNG seed, 0..4294967295 (default 0)", "SEED");
        out = sub->add_option("-o,--out", text["--out"], "Output file, .npy (float64) or .csv (required)")
                  ->type_name("FILE");
    }
    api::SampleRequest request() const {
        api::SampleRequest r{name, {}};
        for (const auto& [key, o] : options)
            if (o->count() > 0) r.flags[key] = text.at(key);
        return r;
    }

    /// Checks every flag (the library's, then --out), draws and writes; with --meta also the mechanism's file,
    /// opened before anything is drawn so that a --meta that cannot be written leaves no matrix without it.
    void run() const {
        const api::Sampler s = api::make_sampler(request());
        require_given(out, "a file name ending in .npy or .csv");
        const std::string& path = text.at("--out");
        const api::OutputFormat format = output_format("--out", path);
        std::unique_ptr<io::AtomicFile> meta_file;
        if (s.meta) {
            try {
                meta_file = std::make_unique<io::AtomicFile>(text.at("--meta"));
            } catch (const io::IoError& e) {
                throw UsageError("--meta: " + std::string(e.what()));
            }
        }
        api::write_samples(s, path, format);
        if (meta_file) {
            meta_file->stream() << s.meta().dump() << "\n";
            meta_file->commit();
        }
    }
};

/// Registers `sample <name>` for a distribution with a scale and optionally a shape (gamma) or a location (gumbel).
void add_distribution(CLI::App* sample, const std::string& name, const std::string& summary, const char* help,
                      const std::string& scale_help, const std::string& scale_name) {
    CLI::App* sub = sample->add_subcommand(name, summary);
    sub->footer(std::string(help) + "\n\n" + kVectorOutputHelp + kOutputHelp);
    auto form = std::make_shared<Form>();
    form->name = name;
    if (name == "gamma") form->add(sub, "--shape", "--shape", "Shape k, a finite number > 0 (required)", "K");
    if (name == "gumbel") form->add(sub, "--loc", "--loc", "Location mu, a finite number (default 0)", "MU");
    form->add(sub, "--scale", "--scale", scale_help + ", a finite number > 0 (required)", scale_name);
    form->add_common(sub, "Number of draws N");
    sub->callback([form] { form->run(); });
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
    auto form = std::make_shared<Form>();
    form->name = prefix_form ? "prefix" : "tree";
    form->add(sub, flag, flag,
              prefix_form ? "padded (AS17, default), binary, honaker (the binary tree with Honaker's estimator) or "
                            "blt (buffered linear Toeplitz; gaussian only)"
                          : "padded (AS17, default), binary, or honaker (the binary tree with Honaker's estimator)",
              prefix_form ? "MECHANISM" : "VARIANT");
    if (prefix_form) {
        form->add(sub, "--buffers", "--buffers",
                  "Buffers of --mechanism blt, 1..6 (default 4, 5 when T > 2^18), as [learner] blt_buffers", "B");
        form->add(sub, "--meta", "--meta",
                  "Also write the mechanism's parameters and the exact Var(Z_t) as JSON (T <= 1048576)", "FILE.json");
    }
    form->add(sub, "--noise", "--noise", "Node noise law: laplace (default) or gaussian", "LAW");
    form->add(sub, "--scale", "--scale", "Node noise: Laplace b or Gaussian sigma, a finite number > 0 (required)",
              "SCALE");
    form->add(sub, "--T", "--T", "Horizon T (columns), 1..4294967295 (required)", "T");
    form->add_common(sub, "Number of rows (instances) N");
    sub->callback([form] { form->run(); });
}

void add_expmech(CLI::App* sample) {
    CLI::App* sub = sample->add_subcommand(
        "expmech", "The exponential mechanism Pr[i] ∝ exp(-c s(i)) over d candidates: N candidate indices");
    sub->footer(std::string(kExpMechHelp) + "\n" + kVectorOutputHelp + kOutputHelp);
    auto form = std::make_shared<Form>();
    form->name = "expmech";
    form->add(sub, "--c", "--c", "Inverse temperature c >= 0, or inf (required)", "C");
    form->add(sub, "--d", "--d", "Candidates with scores s(i) = i, 1..2147483647", "D");
    form->add(sub, "--scores", "--scores", "Scores file: .npy vector or one-column/one-row CSV", "FILE");
    form->add_common(sub, "Number of draws N");
    sub->callback([form] { form->run(); });
}

} // namespace

void add_sample_command(CLI::App& app) {
    CLI::App* sample = app.add_subcommand(
        "sample",
        "Draw noise (Laplace, Gaussian, exponential, Gumbel, Gamma, tree prefix noise) or exponential-mechanism "
        "draws to .npy or CSV.");
    sample->footer(kSampleFooter);
    sample->require_subcommand(0, 1);

    add_distribution(sample, "laplace", "Laplace(0, b): density exp(-|x|/b)/(2b), variance 2b^2", kLaplaceHelp,
                     "Scale b (variance 2b^2)", "B");
    add_distribution(sample, "gaussian", "Normal N(0, sigma^2): --scale is the standard deviation sigma",
                     kGaussianHelp, "Standard deviation sigma", "SIGMA");
    add_distribution(sample, "exponential", "Exponential: density exp(-x/s)/s, mean s", kExponentialHelp,
                     "Mean s (= 1/rate)", "MEAN");
    add_distribution(sample, "gumbel", "Gumbel(mu, beta): CDF exp(-exp(-(x-mu)/beta))", kGumbelHelp, "Scale beta",
                     "BETA");
    add_distribution(sample, "gamma", "Gamma(k, theta): mean k theta, variance k theta^2", kGammaHelp,
                     "Scale theta (not the rate)", "THETA");
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
        std::string forms;
        for (const std::string& f : api::sample_forms()) forms += (forms.empty() ? "" : ", ") + f;
        if (rest.empty() || rest.front().rfind('-', 0) == 0)
            throw UsageError("missing DISTRIBUTION" +
                             (rest.empty() ? std::string() : " before '" + rest.front() + "'") +
                             ": must be one of: " + forms + " (see 'dpregret sample --help')");
        throw UsageError("DISTRIBUTION must be one of: " + forms + " (got " + rest.front() + ")");
    });
}

} // namespace dpr::cli
