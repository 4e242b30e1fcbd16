#include "host/mpi/world.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#ifdef DPREGRET_HAVE_MPI
#include <mpi.h>
#endif

namespace dpr::mpi {
namespace {

World g_world;
bool g_init = false;

[[maybe_unused]] int env_int(const char* name, int fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::atoi(v) : fallback;
}

bool launched() {
    return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK") || std::getenv("PMI_SIZE");
}

} // namespace

bool built_with_mpi() {
#ifdef DPREGRET_HAVE_MPI
    return true;
#else
    return false;
#endif
}

void init(int* argc, char*** argv) {
    if (g_init) return;
    g_init = true;
#ifdef DPREGRET_HAVE_MPI
    if (!launched()) return;
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    g_world.active = true;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_world.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_world.size);
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_world.rank, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &g_world.local_rank);
    MPI_Comm_size(local, &g_world.local_size);
    MPI_Comm_free(&local);
#else
    (void)argc;
    (void)argv;
    // A launcher started several copies of a build without MPI: each would run the whole run alone.
    if (launched() && env_int("OMPI_COMM_WORLD_SIZE", env_int("PMI_SIZE", 1)) > 1) {
        g_world.rank = env_int("OMPI_COMM_WORLD_RANK", env_int("PMI_RANK", 0));
        g_world.size = env_int("OMPI_COMM_WORLD_SIZE", env_int("PMI_SIZE", 1));
    }
#endif
}

void finalize() {
#ifdef DPREGRET_HAVE_MPI
    if (g_world.active) {
        MPI_Finalize();
        g_world.active = false;
    }
#endif
}

const World& world() { return g_world; }

std::vector<double> gather(const std::vector<double>& mine) {
#ifdef DPREGRET_HAVE_MPI
    if (g_world.active && g_world.size > 1) {
        const long long n = static_cast<long long>(mine.size());
        std::vector<long long> counts(static_cast<std::size_t>(g_world.size));
        MPI_Gather(&n, 1, MPI_LONG_LONG, counts.data(), 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
        // Point-to-point in rank order, in blocks below 2^30 values (MPI counts are int).
        constexpr long long kBlock = 1LL << 30;
        std::vector<double> all;
        if (g_world.rank == 0) {
            long long total = 0;
            for (long long c : counts) total += c;
            all.resize(static_cast<std::size_t>(total));
            std::copy(mine.begin(), mine.end(), all.begin());
            long long at = n; // rank r's values follow ranks 0 .. r-1's
            for (int r = 1; r < g_world.size; ++r) {
                const long long c = counts[static_cast<std::size_t>(r)];
                for (long long off = 0; off < c; off += kBlock) {
                    const int len = static_cast<int>(std::min(kBlock, c - off));
                    MPI_Recv(all.data() + at + off, len, MPI_DOUBLE, r, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                }
                at += c;
            }
        } else {
            for (long long off = 0; off < n; off += kBlock) {
                const int len = static_cast<int>(std::min(kBlock, n - off));
                MPI_Send(mine.data() + off, len, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD);
            }
        }
        return all;
    }
#endif
    return mine;
}

int broadcast(int v) {
#ifdef DPREGRET_HAVE_MPI
    if (g_world.active && g_world.size > 1) MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
#endif
    return v;
}

double max_all(double v) {
#ifdef DPREGRET_HAVE_MPI
    if (g_world.active && g_world.size > 1) {
        double out = v;
        MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        return out;
    }
#endif
    return v;
}

void abort(int code) {
#ifdef DPREGRET_HAVE_MPI
    if (g_world.active && g_world.size > 1) MPI_Abort(MPI_COMM_WORLD, code);
#endif
    std::exit(code);
}

} // namespace dpr::mpi
