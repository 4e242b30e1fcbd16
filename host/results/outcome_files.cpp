#include "host/results/outcome_files.hpp"

#include <cmath>
#include <stdexcept>
#include <utility>

#include "host/io/error.hpp"
#include "host/io/npy.hpp"

namespace dpr {

std::vector<std::string> write_outcome_arrays(const io::Dir& dir, const std::string& prefix, const PointResult& o,
                                              std::size_t ndiag, bool per_instance_cmp) {
    const std::uint64_t n = o.instances, nck = o.checkpoints.size();
    std::vector<std::string> names;
    for (const char* suffix : kOutcomeSuffixes) names.push_back(prefix + suffix);
    io::write_npy(dir, names[0], {n, nck}, o.regret.data());
    io::write_npy(dir, names[1], {n, nck}, o.realized_regret.data());
    if (per_instance_cmp) io::write_npy(dir, names[2], {n, nck}, o.comparator.data());
    else io::write_npy(dir, names[2], {nck}, o.comparator.data());
    io::write_npy(dir, names[3], {n, ndiag}, o.diagnostics.data());
    const std::vector<double> bad(o.first_nonfinite_round.begin(), o.first_nonfinite_round.end()); // < 2^53: exact
    io::write_npy(dir, names[4], {n}, bad.data());
    return names;
}

void read_outcome_arrays(const io::Dir& dir, const std::string& prefix, std::uint64_t instances, std::size_t ncheck,
                         std::size_t ndiag, bool per_instance_cmp, PointResult& o) {
    const auto get = [&](const char* what, const io::Shape& want) {
        const std::string path = dir.path_of(prefix + what);
        io::NpyArray a;
        try {
            a = io::read_npy(dir, prefix + what);
        } catch (const io::UnsafePathError&) {
            throw;
        } catch (const io::IoError& e) {
            throw std::runtime_error(e.what());
        }
        if (a.shape != want)
            throw std::runtime_error(path + ": shape " + io::shape_string(a.shape) + ", expected " + io::shape_string(want));
        return std::move(a.values);
    };
    const io::Shape cmp = per_instance_cmp ? io::Shape{instances, ncheck} : io::Shape{ncheck};
    o.regret = get(".regret.npy", {instances, ncheck});
    o.realized_regret = get(".realized.npy", {instances, ncheck});
    o.comparator = get(".comparator.npy", cmp);
    o.diagnostics = get(".diagnostics.npy", {instances, ndiag});
    const std::vector<double> bad = get(".nonfinite.npy", {instances});
    o.first_nonfinite_round.assign(bad.begin(), bad.end());
    // An instance whose every charge was finite has finite regrets; a NaN or infinity there was not written by
    // dpregret but by damage or an edit, and is named as such (not blamed on the learner when the point finishes).
    for (const auto& [what, v] : {std::pair<const char*, const std::vector<double>*>{".regret.npy", &o.regret},
                                  {".realized.npy", &o.realized_regret}})
        for (std::uint64_t k = 0; k < instances; ++k)
            if (o.first_nonfinite_round[k] == 0)
                for (std::size_t c = 0; c < ncheck; ++c)
                    if (!std::isfinite((*v)[k * ncheck + c]))
                        throw std::runtime_error(dir.path_of(prefix + what) + ": element [" + std::to_string(k) + ", " +
                                                 std::to_string(c) + "] is " + std::to_string((*v)[k * ncheck + c]) +
                                                 ", but that instance charged only finite losses (.nonfinite.npy): "
                                                 "the file was damaged or edited after dpregret wrote it");
}

} // namespace dpr
