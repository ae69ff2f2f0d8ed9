// SGEMM on the tensor cores at fp32 accuracy (SgemmConfig::tf32x3) on a real GPU: its error
// against the exact product, below what fp32's rounding of the sum allows, and infinities, NaN
// and the largest floats as the FFMAs give them. Every path and split of it runs in
// sgemm_tests.cpp's "every listed sgemm config" with the other listed configs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <vector>

#include "gpu_fixture.hpp"
#include "ptxrt/blas/sgemm.hpp"

using namespace ptxrt;
using ptxrt::testing::poison_word;
using ptxrt::testing::random_floats;
using ptxrt::testing::test_context;
using ptxrt::testing::test_jit;

namespace {

// The product on the tensor cores in 128×256 tiles, and in 64×128 tiles split 4 ways; none on
// a device before compute capability 8.0, which has no TF32.
std::vector<SgemmConfig> tensor_configs() {
  if (test_context().device().properties().cc_major < 8) return {};
  SgemmConfig wide{2, 4, 8, 8, 16, 16, 3, 1};
  wide.vector_a = true;
  wide.tf32x3 = true;
  SgemmConfig split{2, 2, 4, 8, 8, 16, 3, 3};
  split.tf32x3 = true;
  split.split_k = 4;
  return {wide, split};
}

struct Exact {
  std::vector<double> product;    // Σ a·b in fp64
  std::vector<double> magnitude;  // Σ |a·b|: the scale of fp32's rounding of the sum
};

Exact exact_product(const std::vector<float>& a, const std::vector<float>& b, int m, int n, int k) {
  Exact exact{std::vector<double>(static_cast<std::size_t>(m) * n),
              std::vector<double>(static_cast<std::size_t>(m) * n)};
  for (int i = 0; i < m; ++i)
    for (int p = 0; p < k; ++p) {
      const double x = a[static_cast<std::size_t>(i) * k + p];
      for (int j = 0; j < n; ++j) {
        const double term = x * b[static_cast<std::size_t>(p) * n + j];
        exact.product[static_cast<std::size_t>(i) * n + j] += term;
        exact.magnitude[static_cast<std::size_t>(i) * n + j] += std::fabs(term);
      }
    }
  return exact;
}

std::vector<float> run(const SgemmConfig& config, const std::vector<float>& a,
                       const std::vector<float>& b, int m, int n, int k) {
  const DeviceBuffer<float> device_a(test_context(), std::span<const float>(a));
  const DeviceBuffer<float> device_b(test_context(), std::span<const float>(b));
  DeviceBuffer<float> c(test_context(), static_cast<std::size_t>(m) * n);
  c.memory().fill_words(poison_word);
  sgemm(test_context(), m, n, k, device_a, device_b, c,
        {.choice = SgemmChoice::given, .config = config, .jit = &test_jit()});
  return c.download();
}

}  // namespace

TEST_CASE("3xTF32 on the tensor cores errs less than fp32's rounding of the sum allows") {
  // A chain of mma onto one accumulator rounds toward zero at each step: 3xTF32 accumulated that
  // way erred 2.5e-6 of Σ|a·b| at 4096³ in the experiment, one TF32 product 2e-5, cuBLAS's FFMA
  // SGEMM 1.7e-7, and 3xTF32 summed per k8 step and added in fp32 6.4e-8 (docs/perf-notes.md,
  // "3xTF32 on the tensor cores"). 2e-7 fails the first two and holds fp32's scale.
  const int m = 300, n = 516, k = 1029;
  const std::vector<float> a = random_floats(static_cast<std::size_t>(m) * k, 11);
  const std::vector<float> b = random_floats(static_cast<std::size_t>(k) * n, 12);
  const Exact exact = exact_product(a, b, m, n, k);
  for (const SgemmConfig& config : tensor_configs()) {
    CAPTURE(config.describe());
    const std::vector<float> c = run(config, a, b, m, n, k);
    double worst = 0.0;
    for (std::size_t i = 0; i < c.size(); ++i) {
      const double error = std::fabs(c[i] - exact.product[i]) / exact.magnitude[i];
      worst = std::isnan(error) ? INFINITY : std::max(worst, error);
    }
    CHECK(worst <= 2e-7);
  }
}

TEST_CASE("3xTF32 gives infinity, NaN and the largest floats where the FFMAs would") {
  // A's row 0 holds an infinity, row 1 a NaN, row 2 only 3.4e38 at k = 0 (rounded to TF32 to
  // nearest it would become infinity; its truncated head keeps it finite). B's row 0 starts with
  // values exact in TF32 (their tails are 0, and infinity times 0 is NaN) and an infinity.
  const int m = 5, n = 67, k = 40;
  std::vector<float> a = random_floats(static_cast<std::size_t>(m) * k, 21);
  std::vector<float> b = random_floats(static_cast<std::size_t>(k) * n, 22);
  a[0] = std::numeric_limits<float>::infinity();
  a[static_cast<std::size_t>(k) + 7] = std::numeric_limits<float>::quiet_NaN();
  for (int p = 0; p < k; ++p) a[2 * static_cast<std::size_t>(k) + p] = p == 0 ? 3.4e38f : 0.0f;
  const float row_of_b[] = {0.5f, -2.0f, 1.0f, 0.25f, std::numeric_limits<float>::infinity()};
  std::copy(std::begin(row_of_b), std::end(row_of_b), b.begin());
  const Exact exact = exact_product(a, b, m, n, k);
  for (const SgemmConfig& config : tensor_configs()) {
    CAPTURE(config.describe());
    const std::vector<float> c = run(config, a, b, m, n, k);
    for (std::size_t i = 0; i < c.size(); ++i) {
      CAPTURE(i);
      // The exact product rounded to fp32: what the FFMAs give, overflow to infinity included.
      const float expected = static_cast<float>(exact.product[i]);
      if (std::isnan(expected))
        CHECK(std::isnan(c[i]));
      else if (std::isinf(expected))
        CHECK(c[i] == expected);
      else
        CHECK(std::fabs(c[i] - exact.product[i]) <= 1e-6 * exact.magnitude[i]);
    }
  }
}
