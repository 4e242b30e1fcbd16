#pragma once
// Build identity, printed by `dpregret info` and recorded in every run.json.
#include <string>

namespace dpr {

struct BuildInfo {
    std::string version;      ///< project version (CMakeLists.txt)
    std::string git_commit;   ///< commit the build was configured from
    bool cuda_compiled;       ///< CUDA backend built
    std::string cuda_archs;   ///< CMAKE_CUDA_ARCHITECTURES of the build ("" without CUDA)
    std::string compiler;     ///< host compiler and version
    std::string rng;          ///< RNG identifier
};

const BuildInfo& build_info();

} // namespace dpr
