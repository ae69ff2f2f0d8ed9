// SGEMM on a real GPU: every config listed for the device against the fp64 CPU reference at
// small and ragged sizes. Speed is the business of tests/bench/sgemm_bench.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "gpu_fixture.hpp"
#include "host/common/reference.hpp"
#include "host/matmul/sgemm.hpp"

using namespace ptxrt;
using ptxrt::host::SgemmConfig;
using ptxrt::testing::poison_word;
using ptxrt::testing::random_floats;
using ptxrt::testing::test_context;
using ptxrt::testing::test_jit;

namespace {

struct Shape {
  int m, n, k;
};

std::size_t elements(long long rows, long long columns) {
  return static_cast<std::size_t>(rows * columns);
}

// Past C's last element: a kernel that writes out of bounds shows here.
constexpr std::size_t guard_floats = 64;

bool is_poison(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits == poison_word;
}

// One product's inputs on the device and its fp64 reference, shared by every config.
struct Problem {
  Shape shape;
  std::vector<float> a, b, expected;
  DeviceBuffer<float> device_a, device_b;

  Problem(Shape s, unsigned seed)
      : shape(s),
        a(random_floats(elements(s.m, s.k), seed)),
        b(random_floats(elements(s.k, s.n), seed + 1)),
        expected(host::matmul(a, b, static_cast<std::size_t>(s.m), static_cast<std::size_t>(s.n),
                              static_cast<std::size_t>(s.k))),
        device_a(test_context(), std::span<const float>(a)),
        device_b(test_context(), std::span<const float>(b)) {}
};

// Runs `config` with C poisoned; checks C against the fp64 reference and that nothing past C
// was written.
void check_product(const SgemmConfig& config, const Problem& problem) {
  const Shape shape = problem.shape;
  CAPTURE(shape.m);
  CAPTURE(shape.n);
  CAPTURE(shape.k);
  DeviceBuffer<float> device_c(test_context(), elements(shape.m, shape.n) + guard_floats);
  device_c.memory().fill_words(poison_word);
  host::sgemm(test_jit(), test_context(), problem.device_a, problem.device_b, device_c, shape.m,
              shape.n, shape.k, config);
  const std::vector<float> c = device_c.download();
  const auto product_end = c.begin() + static_cast<std::ptrdiff_t>(elements(shape.m, shape.n));
  const std::vector<float> product(c.begin(), product_end);
  CHECK(host::max_relative_error(product, problem.expected) <= 1e-4);
  CHECK(std::all_of(product_end, c.end(), is_poison));
}

}  // namespace

TEST_CASE("every listed sgemm config matches the fp64 reference at small and ragged sizes") {
  // N % 4 != 0 runs the float-at-a-time entry, N % 4 == 0 the float4 one (with vector A only
  // when K % 4 == 0 too); K below, at and across a tile of k; M and N short of, on and across
  // tile edges; 1300 rows leave a partial group of tile rows for GROUP_M. Under compute-sanitizer
  // the large shapes keep their alignment classes and edges at a fraction of the work.
  using ptxrt::testing::full_or_sanitized;
  const std::vector<Shape> shapes = {{1, 1, 1},
                                     {7, 13, 5},
                                     {127, 129, 65},
                                     full_or_sanitized<Shape>({1000, 777, 513}, {140, 133, 36}),
                                     {64, 4, 3},
                                     {128, 256, 64},
                                     {129, 132, 17},
                                     full_or_sanitized<Shape>({1000, 776, 513}, {140, 132, 37}),
                                     {129, 132, 20},
                                     full_or_sanitized<Shape>({1300, 776, 516}, {1300, 132, 8})};
  const auto configs = host::sgemm_configs(test_context().device().properties());
  REQUIRE(!configs.empty());
  unsigned seed = 1;
  for (const Shape& shape : shapes) {
    const Problem problem(shape, seed += 2);
    for (const SgemmConfig& config : configs) {
      CAPTURE(config.describe());
      check_product(config, problem);
    }
  }
}

TEST_CASE("sgemm with k = 0 writes a zero matrix") {
  const SgemmConfig config = host::default_sgemm_config(test_context().device().properties());
  DeviceBuffer<float> a(test_context(), 1), b(test_context(), 1);
  DeviceBuffer<float> c(test_context(), elements(130, 131));
  c.memory().fill_words(poison_word);
  host::sgemm(test_jit(), test_context(), a, b, c, 130, 131, 0, config);
  const std::vector<float> values = c.download();
  CHECK(std::all_of(values.begin(), values.end(), [](float value) { return value == 0.0f; }));
}

TEST_CASE("sgemm rejects a buffer smaller than its matrix, naming it and both sizes") {
  const SgemmConfig config = host::default_sgemm_config(test_context().device().properties());
  DeviceBuffer<float> small(test_context(), 10), enough(test_context(), 16);
  CHECK_THROWS_WITH_AS(
      host::sgemm(test_jit(), test_context(), enough, small, enough, 4, 4, 4, config),
      "sgemm: B has 10 elements, but a 4x4 matrix needs 16", Error);
  CHECK_THROWS_WITH_AS(
      host::sgemm(test_jit(), test_context(), enough, enough, enough, 4, -1, 4, config),
      "sgemm: sizes must not be negative, got m=4 n=-1 k=4", Error);
}
