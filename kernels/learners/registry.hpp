#pragma once
// Every learner the engine knows, one line each. Both backends instantiate from this list, and every entry
// is checked against the learner contract at compile time (kernels/learners/contract.hpp).
#include "kernels/core/type_list.hpp"
#include "kernels/learners/adaptive_svt_experts.hpp"
#include "kernels/learners/consistent_expert.hpp"
#include "kernels/learners/contract.hpp"
#include "kernels/learners/dp_ftpl.hpp"
#include "kernels/learners/dp_ftrl_experts.hpp"
#include "kernels/learners/dp_ftrl_olo.hpp"
#include "kernels/learners/dp_ftrl_smooth.hpp"
#include "kernels/learners/dp_mab.hpp"
#include "kernels/learners/dp_scrible.hpp"
#include "kernels/learners/exp3.hpp"
#include "kernels/learners/fkm.hpp"
#include "kernels/learners/ftrl_l2.hpp"
#include "kernels/learners/hedge.hpp"
#include "kernels/learners/net_oco.hpp"
#include "kernels/learners/potential_svt_experts.hpp"
#include "kernels/learners/private_bandit_fw.hpp"
#include "kernels/learners/svt_experts.hpp"
#include "kernels/learners/tree_experts.hpp"

namespace dpr::learners {

using AllLearners = TypeList<Hedge, DpFtrlExperts, Exp3, DpMab,
                             FtrlL2Ball, FtrlL2Cube, DpFtrlSphere, DpFtrlCube, DpFtplExperts, DpFtplBall, DpFtplCube,
                             ScribleBall, ScribleCube, ScribleSimplex, DpScribleBall, DpScribleCube, DpScribleSimplex,
                             SvtExperts, ConsistentExpert, AdaptiveSvtExperts, PotentialSvtExperts, NetOco, TreeExperts,
                             DpFtrlSmooth, PrivateBanditFw, GarberKretzu, Fkm>;

static_assert(all_conform(AllLearners{}), "every registered learner satisfies the contract of common.hpp");

} // namespace dpr::learners
