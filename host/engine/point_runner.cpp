#include "host/engine/point_runner.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "host/backend/cuda_api.hpp"
#include "host/engine/checkpoints.hpp"
#include "host/cpu/cpu_engine.hpp"
#include "host/cpu/parallel.hpp"
#include "kernels/sim/comparator.hpp"

namespace dpr {

Backend choose_backend(Backend requested, bool per_instance, std::string* why_not_cuda) {
    if (requested == Backend::Cpu) return Backend::Cpu;
    const cuda_api::DeviceInfo info = cuda_api::query_devices();
    std::string why = info.compiled && info.device_count > 0 ? "" : info.message;
    if (requested == Backend::Cuda && !why.empty()) throw std::invalid_argument("--backend cuda: " + why);
    // Per-instance sequences run on the GPU when asked for: their rows are made on the host (own_rows.hpp), and
    // the automatic choice moves them there once a device session has timed that path against the CPU.
    if (requested == Backend::Auto && why.empty() && per_instance)
        why = "per-instance adversary sequences run on the CUDA backend only when asked for (--backend cuda)";
    if (why_not_cuda) *why_not_cuda = why;
    return why.empty() ? Backend::Cuda : Backend::Cpu;
}

std::unique_ptr<InstanceEngine> make_engine(Backend backend, const EngineRequest& request) {
    if (backend == Backend::Cuda) return cuda_api::make_cuda_engine(request);
    if (backend == Backend::Cpu) return make_cpu_engine(request);
    throw std::logic_error("make_engine: resolve Backend::Auto with choose_backend first");
}

PointJob make_point_job(const config::RunSettings& run, const config::Point& p, const LearnerRuntime& learner,
                        const AdversaryRuntime& adversary) {
    PointJob job;
    job.learner = learner;
    job.adversary = adversary;
    job.shape.d = static_cast<std::uint32_t>(adversary.row_width); // d, or d + 1 (a_t, b_t), + any row_extra
    job.shape.T = p.problem.T;
    job.shape.seed = p.problem.seed;
    job.shape.stream = p.stream;
    job.shape.checkpoints = log_checkpoints(p.problem.T, run.checkpoints);
    job.shape.precision = run.precision == "float" ? Precision::Float : Precision::Double;
    job.shape.launch.lanes = run.lanes;
    job.shape.launch.isa = run.isa;
    job.shape.launch.team_threads = run.team_threads;
    job.shape.launch.gpu_state = run.gpu_state;
    job.per_instance = p.per_instance;
    return job;
}

PointResult run_point(const PointJob& job) {
    const auto start = std::chrono::steady_clock::now();
    const EngineShape& s = job.shape;
    const std::uint32_t d = s.d;
    const std::uint32_t nck = static_cast<std::uint32_t>(s.checkpoints.size());

    const bool cuda = job.backend == Backend::Cuda;
    const std::unique_ptr<InstanceEngine> engine =
        make_engine(job.backend, {job.learner.index, job.learner.params.data(), job.learner.params.size(), s,
                                  job.threads, job.per_instance ? &job.adversary : nullptr});

    PointResult out;
    out.checkpoints = s.checkpoints;
    out.instances = s.instances;
    out.backend = cuda ? "cuda" : "cpu";
    out.launch_policy = engine->policy();

    // Shared sequence: rows of the current chunk and the running comparator, once per point.
    std::vector<double> rows, cum, last_row, L(job.per_instance ? 0 : d, 0.0), shared_cmp(nck, 0.0);
    constexpr std::uint64_t kNoRow = ~std::uint64_t{0};
    std::vector<std::uint64_t> source; // the row a repeated row copies (kNoRow: last_row)
    // Learners with kReadsCumulative also get L_{t-1} per round (the prefix this loop keeps for the
    // comparator).
    const bool with_cum = job.learner.reads_cumulative && !job.per_instance;
    std::uint32_t next_ck = 0;
    // Rows per chunk: within the memory budget for the shared rows, and within a work budget so that
    // progress and interrupts (checked between chunks) stay responsive: 2^27 expert-rounds is ~0.05 s of
    // hedge and ~1 s of dp-ftrl-experts in double on one 2-core CPU. The GPU gets more work per chunk to
    // amortise the launch and the copy of the rows. At least kMinChunkRounds rounds (memory permitting)
    // whatever the instance count: every chunk reloads each instance's state, and with many instances a
    // chunk of one or two rounds made that reload (from DRAM once the states outgrow the L3) the cost --
    // hedge at d = 1024 ran at 1.8e9 expert-rounds/s with 8000 instances against 3e9 with 500.
    constexpr std::uint64_t kMinChunkRounds = 8;
    const std::uint64_t work = job.chunk_work ? job.chunk_work : (cuda ? (std::uint64_t{1} << 34) : (std::uint64_t{1} << 27));
    const std::uint64_t per_row = std::max<std::uint64_t>(1, std::uint64_t{s.instances} * std::max<std::uint32_t>(d, 1));
    const std::uint64_t row_bytes = (with_cum ? 2 : 1) * sizeof(double) * std::max<std::uint32_t>(d, 1);
    const std::uint64_t by_memory = std::max<std::uint64_t>(1, job.chunk_bytes / row_bytes);
    const std::uint64_t by_work = job.chunk_work ? work / per_row : std::max(kMinChunkRounds, work / per_row);
    const std::uint64_t chunk = std::max<std::uint64_t>(1, std::min({s.T, by_memory, by_work}));
    const std::uint32_t shared_stream = job.shared_stream < 0 ? s.stream : static_cast<std::uint32_t>(job.shared_stream);
    const adversaries::SequenceCtx shared_ctx{s.seed, shared_stream, adversaries::kSharedSequence};

    std::uint64_t t0 = 1;
    for (; t0 <= s.T; t0 += chunk) {
        if (job.interrupted && job.interrupted()) break;
        const std::uint64_t t1 = std::min<std::uint64_t>(s.T + 1, t0 + chunk);
        const double* chunk_rows = nullptr;
        if (!job.per_instance) {
            rows.resize((t1 - t0) * d);
            // Rows the adversary says repeat the previous round's (row_epoch) are copied, not regenerated:
            // from the previous chunk's last (last_row) until the chunk's first row that starts an epoch,
            // then from that row, after the parallel fill of the rows that start an epoch.
            parallel_for(t1 - t0, job.threads, [&](std::uint64_t r, unsigned) {
                if (!job.adversary.repeats(t0 + r)) job.adversary.fill(shared_ctx, t0 + r, rows.data() + r * d);
            }, 16);
            // Each repeated row is a copy of its epoch's first row in the chunk (or of last_row): independent
            // copies, made in parallel.
            source.resize(t1 - t0);
            for (std::uint64_t r = 0, from = kNoRow; r < t1 - t0; ++r) {
                if (!job.adversary.repeats(t0 + r)) from = r;
                source[r] = job.adversary.repeats(t0 + r) ? from : r;
            }
            parallel_for(
                t1 - t0, job.threads,
                [&](std::uint64_t r, unsigned) {
                    if (source[r] != r)
                        std::copy_n(source[r] == kNoRow ? last_row.data() : rows.data() + source[r] * d, d,
                                    rows.data() + r * d);
                },
                16);
            last_row.assign(rows.end() - static_cast<std::ptrdiff_t>(d), rows.end());
            if (with_cum) cum.resize((t1 - t0) * d);
            // The running L (and the L_{t-1} rows) over the rounds up to the chunk's next checkpoint, then the
            // comparator there. Coordinates are independent, so wide rows (d = 2^20: 2^30 additions a run) are
            // split over the threads in blocks of kSumCols coordinates: each L[i] sees the same additions in the
            // same order, the same bits on any number of threads.
            constexpr std::uint32_t kSumCols = 1u << 12;
            for (std::uint64_t a = t0; a < t1;) {
                const std::uint64_t b =
                    next_ck < nck && s.checkpoints[next_ck] < t1 ? s.checkpoints[next_ck] + 1 : t1;
                parallel_for((d + kSumCols - 1) / kSumCols, job.threads, [&](std::uint64_t blk, unsigned) {
                    const std::uint32_t i0 = static_cast<std::uint32_t>(blk * kSumCols);
                    const std::uint32_t i1 = static_cast<std::uint32_t>(std::min<std::uint64_t>(d, (blk + 1) * kSumCols));
                    for (std::uint64_t t = a; t < b; ++t) {
                        const double* row = rows.data() + (t - t0) * d;
                        if (with_cum) std::copy(L.begin() + i0, L.begin() + i1, cum.begin() + static_cast<std::ptrdiff_t>((t - t0) * d + i0));
                        for (std::uint32_t i = i0; i < i1; ++i) L[i] += row[i];
                    }
                });
                while (next_ck < nck && s.checkpoints[next_ck] == b - 1)
                    shared_cmp[next_ck++] = job.adversary.comparator(L.data(), d);
                a = b;
            }
            chunk_rows = rows.data();
        }
        engine->advance(t0, t1, chunk_rows, with_cum ? cum.data() : nullptr);
        if (job.on_progress) job.on_progress((t1 - t0) * s.instances);
    }
    out.completed = t0 > s.T;

    std::vector<double> expected, realized;
    engine->results(expected, realized);
    engine->diagnostics(out.diagnostics);
    engine->first_nonfinite_rounds(out.first_nonfinite_round);
    if (job.per_instance) engine->comparators(out.comparator);
    else out.comparator = shared_cmp;
    out.regret.resize(expected.size());
    out.realized_regret.resize(expected.size());
    for (std::uint32_t k = 0; k < s.instances; ++k)
        for (std::uint32_t c = 0; c < nck; ++c) {
            const std::size_t idx = static_cast<std::size_t>(k) * nck + c;
            const double cmp = job.per_instance ? out.comparator[idx] : out.comparator[c];
            out.regret[idx] = expected[idx] - cmp;
            out.realized_regret[idx] = realized[idx] - cmp;
        }
    if (job.keep_charged) {
        out.charged = std::move(expected);
        out.charged_realized = std::move(realized);
    }
    out.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
}

std::uint32_t block_stream(std::uint32_t stream, std::uint64_t h) {
    if (h == 0) return stream;
    // splitmix64 of (stream, h), folded to 32 bits.
    std::uint64_t z = ((std::uint64_t{stream} << 32) | (h & 0xFFFFFFFFull)) + (h >> 32) * 0x9E3779B97F4A7C15ull +
                      0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<std::uint32_t>(z ^ (z >> 32));
}

void append_outcome(PointResult& to, PointResult piece, bool per_instance_cmp) {
    if (to.instances == 0) { // the first piece: it is the outcome so far (no copy of its arrays)
        to = std::move(piece);
        return;
    }
    const auto cat = [](auto& a, const auto& b) { a.insert(a.end(), b.begin(), b.end()); };
    cat(to.regret, piece.regret);
    cat(to.realized_regret, piece.realized_regret);
    cat(to.diagnostics, piece.diagnostics);
    cat(to.first_nonfinite_round, piece.first_nonfinite_round);
    cat(to.charged, piece.charged);
    cat(to.charged_realized, piece.charged_realized);
    if (per_instance_cmp) cat(to.comparator, piece.comparator);
    to.instances += piece.instances;
    to.wall_seconds += piece.wall_seconds;
    to.completed = piece.completed;
}

PointResult run_point_range(PointJob job, std::uint64_t first, std::uint64_t count) {
    if (count >= (std::uint64_t{1} << 32))
        throw std::invalid_argument("one process runs fewer than 2^32 instances of a point at a time");
    const std::uint32_t stream = job.shape.stream;
    const std::uint64_t h0 = instance_block(first), h1 = count ? instance_block(first + count - 1) : h0;
    if (h0 == 0 && h1 == 0) { // every id below 2^32 - 1: one call, as always
        job.shape.first_instance = static_cast<std::uint32_t>(first);
        job.shape.instances = static_cast<std::uint32_t>(count);
        return run_point(job);
    }
    PointResult out;
    job.shared_stream = stream;
    for (std::uint64_t h = h0; h <= h1; ++h) {
        const std::uint64_t a = std::max(first, h * kIdsPerBlock), b = std::min(first + count, (h + 1) * kIdsPerBlock);
        job.shape.stream = block_stream(stream, h);
        job.shape.first_instance = instance_word(a);
        job.shape.instances = static_cast<std::uint32_t>(b - a);
        PointResult part = run_point(job);
        const bool completed = part.completed;
        append_outcome(out, std::move(part), job.per_instance);
        if (!completed) return out;
    }
    out.completed = true;
    return out;
}

} // namespace dpr
