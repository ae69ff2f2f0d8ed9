#include <doctest/doctest.h>

#include "ptxrt/driver.hpp"
#include "ptxrt/error.hpp"

TEST_CASE("format_cuda_version turns the driver's integer into major.minor") {
  CHECK(ptxrt::format_cuda_version(13000) == "13.0");
  CHECK(ptxrt::format_cuda_version(12040) == "12.4");
}
