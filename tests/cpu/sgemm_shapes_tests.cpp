// The random SGEMM shapes of `ptxrt bench sgemm --random N --seed S`: a seed names the same set
// on every machine, each draw lies in its class's ranges, and the classes come in turn.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "apps/matmul/sgemm.hpp"
#include "apps/matmul/sgemm_shapes.hpp"

using ptxrt::apps::SgemmDrawnClass;
using ptxrt::apps::SgemmDrawnShape;

namespace {

std::vector<std::string> names(const std::vector<SgemmDrawnShape>& shapes) {
  std::vector<std::string> result;
  for (const SgemmDrawnShape& shape : shapes) result.push_back(shape.size.name());
  return result;
}

}  // namespace

TEST_CASE("a seed draws the same shapes, and another seed others") {
  const auto first = ptxrt::apps::draw_sgemm_shapes(40, 7);
  CHECK(names(first) == names(ptxrt::apps::draw_sgemm_shapes(40, 7)));
  const auto other = names(ptxrt::apps::draw_sgemm_shapes(40, 8));
  CHECK(names(first) != other);
  // A shorter draw is the start of a longer one: N names a prefix of the seed's sequence.
  const auto prefix = names(ptxrt::apps::draw_sgemm_shapes(10, 7));
  CHECK(std::equal(prefix.begin(), prefix.end(), names(first).begin()));
  // The mapping from the generator is the library's own, so the set is the same with every
  // standard library: a held-out set published by its seed stays that set.
  CHECK(names(ptxrt::apps::draw_sgemm_shapes(4, 7)) ==
        std::vector<std::string>{"2986x11529x36", "190x24x4772", "5132x8232x95", "71x8324x2021"});
  CHECK(ptxrt::apps::draw_sgemm_shapes(0, 7).empty());
}

TEST_CASE("each draw lies in its class's ranges, the classes in turn") {
  const auto shapes = ptxrt::apps::draw_sgemm_shapes(200, 3);
  std::set<std::tuple<int, int, int>> distinct;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    // Not a structured binding: clang 14 cannot capture one in CAPTURE's lambda.
    const ptxrt::apps::SgemmBenchSize& size = shapes[i].size;
    const SgemmDrawnClass drawn = shapes[i].drawn;
    CAPTURE(size.name());
    distinct.insert({size.m, size.n, size.k});
    if (i % 2 == 0) {
      CHECK(drawn == SgemmDrawnClass::log_uniform);
    } else {
      CHECK(drawn == ptxrt::apps::sgemm_drawn_classes[(i / 2) % 5]);
    }
    const int low = std::min({size.m, size.n, size.k}), high = std::max({size.m, size.n, size.k});
    switch (drawn) {
      case SgemmDrawnClass::log_uniform:
        CHECK(low >= 16);
        CHECK(high <= 16384);
        break;
      case SgemmDrawnClass::deep:
        CHECK(std::max(size.m, size.n) <= 256);
        CHECK(size.k >= 4096);
        CHECK(size.k <= 65536);
        CHECK(ptxrt::apps::sgemm_shape_of(size.m, size.n, size.k) == ptxrt::apps::SgemmShape::deep);
        break;
      case SgemmDrawnClass::skinny:
        CHECK(std::min(size.m, size.n) <= 128);
        CHECK(std::max(size.m, size.n) >= 1024);
        break;
      case SgemmDrawnClass::flat:
        CHECK(std::min(size.m, size.n) >= 1024);
        CHECK(size.k <= 256);
        break;
      case SgemmDrawnClass::ragged:
        CHECK(low >= 1000);
        CHECK(high <= 6001);
        CHECK(size.m % 32 != 0);
        CHECK(size.n % 32 != 0);
        CHECK(size.k % 32 != 0);
        break;
      case SgemmDrawnClass::small_square:
        CHECK(size.m == size.n);
        CHECK(size.n == size.k);
        CHECK(size.m >= 64);
        CHECK(size.m <= 1024);
        break;
    }
  }
  CHECK(distinct.size() > 190);  // draws, not a few shapes over again
}

TEST_CASE("a draw of one class gives that class alone, each name read back") {
  for (const SgemmDrawnClass only :
       {SgemmDrawnClass::log_uniform, SgemmDrawnClass::deep, SgemmDrawnClass::skinny,
        SgemmDrawnClass::flat, SgemmDrawnClass::ragged, SgemmDrawnClass::small_square}) {
    CAPTURE(ptxrt::apps::to_string(only));
    CHECK(ptxrt::apps::parse_sgemm_drawn_class(ptxrt::apps::to_string(only)) == only);
    const auto shapes = ptxrt::apps::draw_sgemm_shapes(30, 5, only);
    REQUIRE(shapes.size() == 30);
    std::set<std::string> distinct;
    for (const SgemmDrawnShape& shape : shapes) {
      CHECK(shape.drawn == only);
      distinct.insert(shape.size.name());
    }
    // Small squares have one side to draw from 64 to 1024; every other class three.
    CHECK(distinct.size() > (only == SgemmDrawnClass::small_square ? 20U : 28U));
    CHECK(names(shapes) == names(ptxrt::apps::draw_sgemm_shapes(30, 5, only)));
  }
  for (const char* unknown : {"", "ragged ", "Ragged", "square", "log_uniform"})
    CHECK_FALSE(ptxrt::apps::parse_sgemm_drawn_class(unknown).has_value());
}

TEST_CASE("log-uniform draws spread over the decades of [16, 16384]") {
  // Ten octaves: about a tenth of the sides in each. A uniform draw would put nine in ten in the
  // top three octaves.
  std::vector<int> octaves(10, 0);
  int sides = 0;
  for (const SgemmDrawnShape& shape : ptxrt::apps::draw_sgemm_shapes(2000, 11)) {
    if (shape.drawn != SgemmDrawnClass::log_uniform) continue;
    for (const int side : {shape.size.m, shape.size.n, shape.size.k}) {
      const int octave = std::min(9, static_cast<int>(std::log2(side / 16.0)));
      ++octaves[static_cast<std::size_t>(octave)];
      ++sides;
    }
  }
  for (const int count : octaves) {
    CHECK(count > sides / 10 * 0.8);
    CHECK(count < sides / 10 * 1.2);
  }
}
