#include <doctest/doctest.h>

#include "ptxrt/core/verdict.hpp"

TEST_CASE("a Verdict is yes by default and no with its reason when refused") {
  const ptxrt::Verdict yes;
  CHECK(yes);
  CHECK(yes.allowed());
  CHECK(yes.reason().empty());

  const ptxrt::Verdict no = ptxrt::Verdict::refused("a block of 2048 threads exceeds 1024");
  CHECK_FALSE(no);
  CHECK_FALSE(no.allowed());
  CHECK(no.reason() == "a block of 2048 threads exceeds 1024");
  CHECK_FALSE(ptxrt::Verdict::refused(""));  // no reason given still says no
  CHECK(no == ptxrt::Verdict::refused("a block of 2048 threads exceeds 1024"));
  CHECK_FALSE(no == yes);
}
