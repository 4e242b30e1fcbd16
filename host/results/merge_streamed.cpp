#include "host/results/merge_streamed.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "host/io/dir.hpp"
#include "host/io/error.hpp"
#include "host/io/npy.hpp"
#include "host/stats/stream_select.hpp"
#include "host/stats/summary.hpp"

namespace dpr {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the shards' .npy files are little-endian and read as they are");

/// Rows of a float64 C-order .npy file of shape (rows, cols) or (rows), read front to back.
class NpyRows {
  public:
    NpyRows(const io::Dir& dir, const std::string& name, std::uint64_t rows, std::uint64_t cols, bool vector_shape)
        : path_(dir.path_of(name)), cols_(cols) {
        const std::string& path = path_;
        io::NpyHeader h;
        try {
            in_.emplace(io::InFile::open(dir, name)); // by descriptor, never through a link
            h = io::read_npy_header(*in_);
        } catch (const io::IoError& e) {
            throw ShardError(e.what());
        }
        const io::Shape want = vector_shape ? io::Shape{rows} : io::Shape{rows, cols};
        if (h.shape != want)
            throw ShardError(path + ": shape " + io::shape_string(h.shape) + ", expected " + io::shape_string(want));
        if (h.dtype != io::NpyDtype::Float64) throw ShardError(path + ": float32 data; shards are written as float64");
        std::istream& in = in_->stream();
        in.seekg(static_cast<std::streamoff>(h.data_offset));
        if (!in) throw ShardError(path + ": cannot open for reading");
    }
    /// The next `rows` rows into `to` (rows x cols doubles).
    void read(std::uint64_t rows, double* to) {
        if (!in_->stream().read(reinterpret_cast<char*>(to), static_cast<std::streamsize>(rows * cols_ * sizeof(double))))
            throw ShardError(path_ + ": read error");
    }

  private:
    std::string path_;
    std::uint64_t cols_;
    std::optional<io::InFile> in_;
};

/// One of a point's arrays in the shard files (host/results/outcome_files.hpp): its file suffix, its columns per
/// instance, and whether it is stored as a vector (shape (instances), one value each) rather than a matrix.
struct Array {
    const char* suffix;
    std::size_t cols;
    bool vector = false;
};

/// Reads `arrays` of every shard in instance order, at most B instances at a time, and calls
/// fn(first instance, count, buffers): buffers[a] holds count rows of arrays[a]. Stops when fn returns false.
template <class Fn>
bool for_each_block(const std::vector<ShardPiece>& pieces, const std::vector<Array>& arrays, std::uint64_t B, Fn&& fn) {
    std::vector<std::vector<double>> buf(arrays.size());
    std::vector<const double*> at(arrays.size());
    for (std::size_t a = 0; a < arrays.size(); ++a) {
        buf[a].resize(B * std::max<std::size_t>(arrays[a].cols, 1));
        at[a] = buf[a].data();
    }
    std::uint64_t first = 0;
    for (const ShardPiece& p : pieces) {
        std::vector<NpyRows> files;
        files.reserve(arrays.size());
        for (const Array& a : arrays)
            files.emplace_back(*p.dir, p.prefix + a.suffix, p.instances, a.cols, a.vector);
        for (std::uint64_t done = 0; done < p.instances;) {
            const std::uint64_t m = std::min(B, p.instances - done);
            for (std::size_t a = 0; a < arrays.size(); ++a) files[a].read(m, buf[a].data());
            if (!fn(first, m, at.data())) return false;
            first += m;
            done += m;
        }
    }
    return true;
}

/// Instances per block: about 2^20 doubles of the widest array.
std::uint64_t block_rows(std::size_t widest) {
    return std::max<std::uint64_t>(1, (std::uint64_t{1} << 20) / std::max<std::size_t>(widest, 1));
}

} // namespace

void finish_point_streamed(const ShardSet& set, PointRecord& r, std::uint64_t expected, std::size_t select_bytes,
                           std::uint64_t read_rows) {
    const std::vector<ShardPiece> pieces = scan_point(set, r); // metadata, the shared comparator
    PointResult& o = r.result;
    check_instance_total(pieces, r, expected);
    const std::uint64_t n = expected;
    std::uint64_t largest = 1;
    for (const ShardPiece& p : pieces) largest = std::max(largest, p.instances);
    o.instances = n;
    const std::size_t nck = o.checkpoints.size(), nd = r.learner.diagnostic_names.size();
    const bool per_cmp = r.point->per_instance;
    if (!per_cmp) check_shared_comparator(r);
    const std::uint64_t B = std::min(largest, read_rows ? read_rows : block_rows(std::max(nck, nd)));

    // Pass 1: every array once; checks, moments, comparator mean, diagnostics.
    std::vector<stats::OrderedMoments> reg(nck), rea(nck), dia(nd);
    std::vector<double> cmp_sum(nck, 0.0), dmin(nd, 0.0), dmax(nd, 0.0);
    std::vector<std::uint64_t> bad(B);
    std::vector<Array> arrays = {{".regret.npy", nck}, {".realized.npy", nck}, {".diagnostics.npy", nd}, {".nonfinite.npy", 1, true}};
    if (per_cmp) arrays.push_back({".comparator.npy", nck});
    for_each_block(pieces, arrays, B, [&](std::uint64_t first, std::uint64_t m, const double* const* b) {
        const double *breg = b[0], *brea = b[1], *bdia = b[2], *bcmp = per_cmp ? b[4] : nullptr;
        for (std::uint64_t k = 0; k < m; ++k) bad[k] = static_cast<std::uint64_t>(b[3][k]);
        check_instance_block(r, InstanceBlock{first, m, breg, brea, bcmp, bdia, bad.data()});
        for (std::uint64_t k = 0; k < m; ++k) {
            for (std::size_t c = 0; c < nck; ++c) {
                reg[c].add(breg[k * nck + c]);
                rea[c].add(brea[k * nck + c]);
                if (per_cmp) cmp_sum[c] += bcmp[k * nck + c];
            }
            for (std::size_t j = 0; j < nd; ++j) {
                dia[j].add(bdia[k * nd + j]);             // the moments of the values as stored, as summarize()
                const double v = bdia[k * nd + j] + 0.0; // min and max: -0 as +0, as summarize() reports them
                if (first + k == 0 || v < dmin[j]) dmin[j] = v;
                if (first + k == 0 || v > dmax[j]) dmax[j] = v;
            }
        }
        return true;
    });
    r.diagnostic_summary.assign(nd, DiagnosticSummary{});
    for (std::size_t j = 0; j < nd; ++j) r.diagnostic_summary[j] = {dia[j].total().mean, dmin[j], dmax[j]};

    // Passes 2..: the order statistics of each checkpoint's regret, in batches of checkpoints.
    const std::vector<std::uint64_t> ranks = stats::summary_ranks(n);
    const std::size_t per_column = ranks.size() * (std::size_t{8} << 13);
    const std::size_t batch = std::max<std::size_t>(1, select_bytes / std::max<std::size_t>(per_column, 1));
    std::vector<std::vector<double>> order(nck, std::vector<double>(ranks.size()));
    for (std::size_t c0 = 0; c0 < nck; c0 += batch) {
        const std::size_t c1 = std::min(nck, c0 + batch);
        stats::StreamSelect sel(c1 - c0, n, ranks);
        while (!sel.done()) {
            sel.begin_pass();
            for_each_block(pieces, {{".regret.npy", nck}}, B, [&](std::uint64_t, std::uint64_t m, const double* const* b) {
                for (std::uint64_t k = 0; k < m; ++k)
                    for (std::size_t c = c0; c < c1; ++c) sel.add(c - c0, b[0][k * nck + c]);
                return true;
            });
            sel.end_pass();
        }
        for (std::size_t c = c0; c < c1; ++c)
            for (std::size_t i = 0; i < ranks.size(); ++i) order[c][i] = sel.value(c - c0, i);
    }

    r.result.summary.assign(nck, CheckpointRow{});
    for (std::size_t c = 0; c < nck; ++c) {
        CheckpointRow& row = r.result.summary[c];
        row.t = o.checkpoints[c];
        row.comparator = per_cmp ? cmp_sum[c] / static_cast<double>(n) : o.comparator[c];
        row.regret = stats::summary_from_order_statistics(n, reg[c].total(), ranks, order[c]);
        row.realized = rea[c].total();
    }
    check_rows(r);

    // final_regret.csv reads the shards once more when it is written.
    r.stream_final = [pieces, nck, nd, B](const FinalRowFn& row) {
        return for_each_block(pieces, {{".regret.npy", nck}, {".realized.npy", nck}, {".diagnostics.npy", nd}}, B,
                              [&](std::uint64_t first, std::uint64_t m, const double* const* b) {
                                  for (std::uint64_t k = 0; k < m; ++k)
                                      if (!row(first + k, b[0][k * nck + nck - 1], b[1][k * nck + nck - 1], b[2] + k * nd))
                                          return false;
                                  return true;
                              });
    };
}

} // namespace dpr
