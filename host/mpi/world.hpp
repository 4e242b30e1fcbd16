#pragma once
// MPI for `mpirun -n R dpregret run ...` (docs/SCALING.md). dpregret is built with MPI when
// CMake finds it (OpenMPI from apt: scripts/deps.sh) and works without it; MPI is initialised only when the
// process was started by an MPI launcher (OMPI_COMM_WORLD_SIZE / PMIX_RANK / PMI_SIZE in the environment), so a
// plain `dpregret run` never touches it. Everything MPI-specific lives in world.cpp; in a build without MPI the same
// functions describe a world of one rank (gather returns its input, broadcast its argument).
#include <cstdint>
#include <string>
#include <vector>

namespace dpr::mpi {

struct World {
    int rank = 0, size = 1;
    int local_rank = 0, local_size = 1; ///< on this node (the launcher's numbering)
    bool active = false;                ///< MPI was initialised (a launcher started us, and MPI is built in)
};

/// Initialises MPI if the process was started by an MPI launcher; call once, early (main). Idempotent.
void init(int* argc, char*** argv);
/// Finalises MPI if init() initialised it.
void finalize();
const World& world();
/// True if this build has MPI.
bool built_with_mpi();

/// Rank 0 receives every rank's `mine`, concatenated in rank order; the others get an empty vector.
std::vector<double> gather(const std::vector<double>& mine);
/// Rank 0's value of `v` on every rank.
int broadcast(int v);
/// The largest `v` over ranks, on every rank.
double max_all(double v);
/// Ends every rank's process with `code` (after a failure on some rank: the others would wait forever).
[[noreturn]] void abort(int code);

} // namespace dpr::mpi
