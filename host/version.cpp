#include "host/version.hpp"

#include "dpregret_git_commit.hpp" // generated at build time (cmake/GitCommit.cmake)

#include "kernels/rng/philox.hpp"

namespace dpr {

const BuildInfo& build_info() {
    static const BuildInfo info{
        DPREGRET_VERSION,
        DPREGRET_GIT_COMMIT,
#ifdef DPREGRET_HAVE_CUDA
        true,
        DPREGRET_CUDA_ARCHS,
#else
        false,
        "",
#endif
        std::string("g++ ") + __VERSION__,
        rng::kRngName,
    };
    return info;
}

} // namespace dpr
