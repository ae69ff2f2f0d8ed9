// ptxrt::blas: SGEMM, its configurations, heuristic and tuning, over ptxrt::tune.
// Link ptxrt::blas (pkg-config: ptxrt-blas).
#pragma once

#include "ptxrt/blas/sgemm.hpp"
#include "ptxrt/blas/sgemm_config.hpp"
#include "ptxrt/blas/sgemm_heuristic.hpp"
#include "ptxrt/blas/sgemm_tuning.hpp"
#include "ptxrt/tune.hpp"
