#pragma once
// Shared by the gpu-labelled tests: they are compiled whenever CUDA is, and skip at run time when no
// device is visible (docs/ARCHITECTURE.md §8), so a CI machine without a GPU passes them as "skipped".
#include <gtest/gtest.h>

#include "host/backend/cuda_api.hpp"

#define DPR_REQUIRE_GPU()                                                                   \
    do {                                                                                    \
        const auto dpr_info_ = ::dpr::cuda_api::query_devices();                            \
        if (dpr_info_.device_count == 0) GTEST_SKIP() << "no CUDA device: " << dpr_info_.message; \
    } while (0)
