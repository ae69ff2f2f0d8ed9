// Shapes of C = A·B and the shape heuristic's choice there, for the tests of the SGEMM family's
// choices made without a GPU (the heuristic, the tuning space, the tuned choice).
#pragma once

#include "device_profiles.hpp"
#include "ptxrt/blas/sgemm_config.hpp"
#include "ptxrt/blas/sgemm_heuristic.hpp"

namespace ptxrt::testing {

struct Shape {
  int m, n, k;
};

inline SgemmConfig chosen(const Shape& shape, const DeviceProperties& device = h100()) {
  return sgemm_heuristic_config(device, shape.m, shape.n, shape.k);
}

}  // namespace ptxrt::testing
