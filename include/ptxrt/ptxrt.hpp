// ptxrt::core's umbrella under its earlier name, for programs written against it; new code
// includes ptxrt/core.hpp (or ptxrt/tune.hpp, ptxrt/blas.hpp).
#pragma once

#include "ptxrt/core.hpp"
