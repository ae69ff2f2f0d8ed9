// SGEMM on a real GPU through the library call (ptxrt/sgemm.hpp): every config listed for the
// device (split K and small tiles among them), and the configs the shape heuristic picks, against
// the fp64 CPU reference at small, ragged and odd sizes with C poisoned. Speed is the business of
// tests/bench/sgemm_bench.cpp and `ptxrt bench sgemm`.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "apps/common/reference.hpp"
#include "apps/matmul/sgemm.hpp"
#include "gpu_fixture.hpp"
#include "ptxrt/blas/sgemm.hpp"
#include "ptxrt/blas/sgemm_heuristic.hpp"

using namespace ptxrt;
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
        expected(apps::matmul(a, b, static_cast<std::size_t>(s.m), static_cast<std::size_t>(s.n),
                              static_cast<std::size_t>(s.k))),
        device_a(test_context(), std::span<const float>(a)),
        device_b(test_context(), std::span<const float>(b)) {}
};

// `values` on the device one float into their allocation (4 bytes off 16).
DeviceBuffer<float> one_float_in(const std::vector<float>& values) {
  std::vector<float> shifted{0.0f};
  shifted.insert(shifted.end(), values.begin(), values.end());
  return DeviceBuffer<float>(test_context(), std::span<const float>(shifted));
}

SgemmOptions given(const SgemmConfig& config, SgemmWorkspace* workspace = nullptr) {
  return {
      .choice = SgemmChoice::given, .config = config, .workspace = workspace, .jit = &test_jit()};
}

// Runs the product `options` choose with C poisoned; checks C against the fp64 reference and
// that nothing past C was written. Returns the config that ran.
SgemmConfig check_product(const Problem& problem, const SgemmOptions& options) {
  const Shape shape = problem.shape;
  CAPTURE(shape.m);
  CAPTURE(shape.n);
  CAPTURE(shape.k);
  DeviceBuffer<float> device_c(test_context(), elements(shape.m, shape.n) + guard_floats);
  device_c.memory().fill_words(poison_word);
  const SgemmConfig ran = sgemm(test_context(), shape.m, shape.n, shape.k, problem.device_a,
                                problem.device_b, device_c, options);
  CAPTURE(ran.describe());
  const std::vector<float> c = device_c.download();
  const auto product_end = c.begin() + static_cast<std::ptrdiff_t>(elements(shape.m, shape.n));
  const std::vector<float> product(c.begin(), product_end);
  CHECK(apps::max_relative_error(product, problem.expected) <= 1e-4);
  CHECK(std::all_of(product_end, c.end(), is_poison));
  return ran;
}

}  // namespace

TEST_CASE("every listed sgemm config matches the fp64 reference at small and ragged sizes") {
  // N % 4 != 0 runs the any-alignment entry (B loaded by realigned chunks, rows of C starting
  // 1, 2 or 3 floats past 16 bytes), N % 4 == 0 the float4 one (with vector A only when K % 4 == 0
  // too); K below, at and across a tile of k; M and N short of, on and across tile edges; 1300
  // rows leave a partial group of tile rows for GROUP_M. Under compute-sanitizer
  // the large shapes keep their alignment classes and edges at a fraction of the work.
  using ptxrt::testing::full_or_sanitized;
  const std::vector<Shape> shapes = {
      {1, 1, 1},      {7, 13, 5},
      {127, 129, 65}, full_or_sanitized<Shape>({1000, 777, 513}, {140, 133, 36}),
      {64, 4, 3},     {128, 256, 64},
      {129, 132, 17}, full_or_sanitized<Shape>({1000, 776, 513}, {140, 132, 37}),
      {129, 132, 20}, full_or_sanitized<Shape>({1300, 776, 516}, {1300, 132, 8}),
      {97, 130, 40},  {65, 259, 24}};
  const auto configs = apps::sgemm_configs(test_context().device().properties());
  REQUIRE(!configs.empty());
  SgemmWorkspace workspace(test_context());
  unsigned seed = 1;
  for (const Shape& shape : shapes) {
    const Problem problem(shape, seed += 2);
    for (const SgemmConfig& config : configs) check_product(problem, given(config, &workspace));
  }
}

TEST_CASE(
    "the heuristic's choice at deep, skinny, small and odd shapes matches the fp64 reference") {
  // Deep K (split, slices of unequal length), skinny M and N, small and odd squares, and K not a
  // multiple of 4 (no vector A); each through the default call, as a user makes it.
  using ptxrt::testing::full_or_sanitized;
  const std::vector<Shape> shapes = {full_or_sanitized<Shape>({777, 555, 9001}, {77, 55, 2001}),
                                     full_or_sanitized<Shape>({129, 131, 16387}, {33, 35, 4099}),
                                     {33, 1000, 700},
                                     {1000, 17, 1500},
                                     {300, 300, 300},
                                     full_or_sanitized<Shape>({1023, 1025, 1021}, {130, 133, 259}),
                                     {1, 1, 1000},
                                     {5, 3, 2}};
  const DeviceProperties& device = test_context().device().properties();
  bool split_ran = false;
  unsigned seed = 101;
  for (const Shape& shape : shapes) {
    const Problem problem(shape, seed += 2);
    const SgemmConfig ran = check_product(problem, {.jit = &test_jit()});
    CHECK(ran.vector_a == sgemm_heuristic_config(device, shape.m, shape.n, shape.k).vector_a);
    split_ran = split_ran || ran.split_k > 1;
  }
  CHECK(split_ran);
}

TEST_CASE("a split whose last slices are empty still sums to the product, on one workspace") {
  // K = 20 is two BK 16 tiles: split 16 leaves 14 slices empty, whose partials must be zeros.
  // The workspace grows from the first product to the second.
  SgemmWorkspace workspace(test_context());
  unsigned seed = 201;
  for (const Shape shape : {Shape{37, 45, 20}, Shape{130, 257, 700}}) {
    const Problem problem(shape, seed += 2);
    for (const int split : {2, 3, 16}) {
      SgemmConfig config;
      config.split_k = split;
      CHECK(check_product(problem, given(config, &workspace)).split_k == split);
    }
  }
  CHECK(workspace.capacity_floats() >= 16u * 130u * 257u);
}

TEST_CASE("the deep splits of a small C sum every slice, in every group of the reduction") {
  // Splits of 24 to 128 on a few tiles of C and a deep, odd K (slices of unequal length); at
  // N % 4 != 0 the workspace's rows are padded past N, whose floats the reduction must not
  // write to C, at N % 4 == 0 it writes C by float4; 3 and 6 leave groups of threads with one
  // slice fewer than others.
  using ptxrt::testing::full_or_sanitized;
  SgemmWorkspace workspace(test_context());
  unsigned seed = 401;
  for (const Shape shape :
       {full_or_sanitized<Shape>({63, 65, 40001}, {33, 35, 9001}),
        full_or_sanitized<Shape>({64, 64, 65536}, {32, 64, 16384}), Shape{5, 130, 8195}}) {
    const Problem problem(shape, seed += 2);
    for (const int split : {3, 6, 24, 32, 64, 96, 128}) {
      SgemmConfig config =
          sgemm_heuristic_config(test_context().device().properties(), shape.m, shape.n, shape.k);
      config.split_k = split;
      CHECK(check_product(problem, given(config, &workspace)).split_k == split);
    }
  }
}

TEST_CASE("sgemm on addresses 4 bytes off 16 runs the any-alignment entry and matches") {
  // A, B and C one float into their allocations: the heuristic's vector A must be dropped and
  // the any-alignment entry run, with a split too.
  const Shape shape{200, 256, 4096};
  const Problem problem(shape, 301);
  const DeviceBuffer<float> a = one_float_in(problem.a), b = one_float_in(problem.b);
  DeviceBuffer<float> c(test_context(), elements(shape.m, shape.n) + 1);
  c.memory().fill_words(poison_word);
  const SgemmConfig ran =
      sgemm(test_context(), shape.m, shape.n, shape.k, a.address() + sizeof(float),
            b.address() + sizeof(float), c.address() + sizeof(float), {.jit = &test_jit()});
  CAPTURE(ran.describe());
  CHECK_FALSE(ran.vector_a);
  const std::vector<float> values = c.download();
  CHECK(is_poison(values.front()));
  const std::vector<float> product(values.begin() + 1, values.end());
  CHECK(apps::max_relative_error(product, problem.expected) <= 1e-4);
}

TEST_CASE(
    "A or B 0 to 3 floats past 16 bytes, ending where its allocation ends, gives the product") {
  // The any-alignment entry loads B's rows by their 16-byte-aligned chunks, and on the tensor
  // cores A's rows too: the first chunk of a matrix that starts past 16 bytes begins before it,
  // and the last chunks of short rows reach past its end; those are read a float at a time. Each
  // matrix here ends at its allocation's end, so a read past it shows under compute-sanitizer. At
  // N of 1 to 6 a row of B's chunks reach many rows ahead, past B's end for the last tiles of K;
  // at K of 37 and 41 A's last row's chunks pass A's end. Every listed config, split or not.
  const std::vector<Shape> shapes = {{70, 3, 37}, {33, 6, 133}, {5, 1, 300}, {40, 131, 41}};
  const auto configs = apps::sgemm_configs(test_context().device().properties());
  SgemmWorkspace workspace(test_context());
  const unsigned seed = static_cast<unsigned>(ptxrt::testing::fresh_seed());
  CAPTURE(seed);
  for (const Shape& shape : shapes) {
    const Problem problem(shape, seed);
    for (const bool shift_a : {false, true}) {
      CAPTURE(shift_a);
      for (const std::size_t offset : {0, 1, 2, 3}) {
        CAPTURE(offset);
        std::vector<float> shifted(offset, 0.0f);
        const std::vector<float>& values = shift_a ? problem.a : problem.b;
        shifted.insert(shifted.end(), values.begin(), values.end());
        const DeviceBuffer<float> moved(test_context(), std::span<const float>(shifted));
        const CUdeviceptr moved_start = moved.address() + offset * sizeof(float);
        for (const SgemmConfig& config : configs) {
          CAPTURE(config.describe());
          DeviceBuffer<float> c(test_context(), elements(shape.m, shape.n) + guard_floats);
          c.memory().fill_words(poison_word);
          sgemm(test_context(), shape.m, shape.n, shape.k,
                shift_a ? moved_start : problem.device_a.address(),
                shift_a ? problem.device_b.address() : moved_start, c.address(),
                given(config, &workspace));
          const std::vector<float> result = c.download();
          const auto product_end =
              result.begin() + static_cast<std::ptrdiff_t>(elements(shape.m, shape.n));
          CHECK(apps::max_relative_error(std::vector<float>(result.begin(), product_end),
                                         problem.expected) <= 1e-4);
          CHECK(std::all_of(product_end, result.end(), is_poison));
        }
      }
    }
  }
}

TEST_CASE("a B of ragged rows copied to 16-byte rows gives the product, split or not") {
  // sgemm_pad_rows copies B to rows of a multiple of 4 floats (zeros past N) and the vector entry
  // stores C by 16 bytes between its ragged ends. Padding is forced: the sizes where it pays on its
  // own (billions of flop) are too large for the fp64 reference; sgemm_path's choice is a CPU test.
  // N % 4 of 1, 3 and 1; K below one tile of k, a multiple of 4 (vector A) and odd; on the call's
  // own scratch and on a workspace that already holds a split's partials.
  using ptxrt::testing::full_or_sanitized;
  const std::vector<Shape> shapes = {
      {37, 37, 9}, {130, 131, 36}, full_or_sanitized<Shape>({1031, 1001, 515}, {200, 5, 515})};
  const DeviceProperties& device = test_context().device().properties();
  SgemmWorkspace workspace(test_context());
  const unsigned seed = static_cast<unsigned>(ptxrt::testing::fresh_seed());
  CAPTURE(seed);
  for (const Shape& shape : shapes) {
    const Problem problem(shape, seed);
    SgemmConfig chosen = sgemm_heuristic_config(device, shape.m, shape.n, shape.k);
    SgemmConfig split = chosen;
    split.split_k = 3;
    SgemmConfig vector_a;
    vector_a.vector_a = true;
    for (const SgemmConfig& config : {chosen, split, vector_a}) {
      CAPTURE(config.describe());
      const SgemmPath path =
          sgemm_path(device, config, shape.m, shape.n, shape.k, problem.device_a.address(),
                     problem.device_b.address(), 0, SgemmPadding::always);
      CHECK(path ==
            (config.vector_a && shape.k % 4 != 0 ? SgemmPath::any_alignment : SgemmPath::padded_b));
      for (SgemmWorkspace* scratch : {&workspace, static_cast<SgemmWorkspace*>(nullptr)}) {
        SgemmOptions options = given(config, scratch);
        options.padding = SgemmPadding::always;
        check_product(problem, options);
      }
    }
  }
}

TEST_CASE("B on 16 bytes loads by vectors whatever C's alignment; B off 16 is padded") {
  // C one float into its allocation: B still loads by float4, C is stored at any alignment
  // (vector_b). B one float in, N % 4 == 0: padded (forced: this product is too small to pay for
  // the copy on its own). Each with C aligned and not.
  const Shape shape{1027, 256, 300};
  const unsigned seed = static_cast<unsigned>(ptxrt::testing::fresh_seed());
  CAPTURE(seed);
  const Problem problem(shape, seed);
  const DeviceBuffer<float> shifted_b = one_float_in(problem.b);
  SgemmOptions options = given(SgemmConfig{});
  options.padding = SgemmPadding::always;
  for (const bool b_shifted : {false, true}) {
    for (const std::size_t c_offset : {std::size_t{0}, sizeof(float)}) {
      CAPTURE(b_shifted);
      CAPTURE(c_offset);
      const CUdeviceptr b =
          b_shifted ? shifted_b.address() + sizeof(float) : problem.device_b.address();
      DeviceBuffer<float> c(test_context(), elements(shape.m, shape.n) + 2);
      c.memory().fill_words(poison_word);
      const CUdeviceptr written = c.address() + c_offset;
      const SgemmPath expected = b_shifted  ? SgemmPath::padded_b
                                 : c_offset ? SgemmPath::vector_b
                                            : SgemmPath::vectors;
      CHECK(sgemm_path(test_context().device().properties(), options.config, shape.m, shape.n,
                       shape.k, problem.device_a.address(), b, written,
                       options.padding) == expected);
      sgemm(test_context(), shape.m, shape.n, shape.k, problem.device_a.address(), b, written,
            options);
      const std::vector<float> values = c.download();
      const auto first = values.begin() + static_cast<std::ptrdiff_t>(c_offset / sizeof(float));
      const auto last = first + static_cast<std::ptrdiff_t>(elements(shape.m, shape.n));
      CHECK(std::all_of(values.begin(), first, is_poison));
      CHECK(std::all_of(last, values.end(), is_poison));
      CHECK(apps::max_relative_error(std::vector<float>(first, last), problem.expected) <= 1e-4);
    }
  }
}

TEST_CASE("sgemm with k = 0 writes a zero matrix, split or not") {
  DeviceBuffer<float> a(test_context(), 1), b(test_context(), 1);
  DeviceBuffer<float> c(test_context(), elements(130, 131));
  for (const int split : {1, 4}) {
    SgemmConfig config;
    config.split_k = split;
    c.memory().fill_words(poison_word);
    sgemm(test_context(), 130, 131, 0, a, b, c, given(config));
    const std::vector<float> values = c.download();
    CHECK(std::all_of(values.begin(), values.end(), [](float value) { return value == 0.0f; }));
  }
}

TEST_CASE("sgemm rejects a buffer smaller than its matrix, naming it and both sizes") {
  DeviceBuffer<float> small(test_context(), 10), enough(test_context(), 16);
  CHECK_THROWS_WITH_AS(sgemm(test_context(), 4, 4, 4, enough, small, enough),
                       "sgemm: B has 10 elements, but a 4x4 matrix needs 16", Error);
  CHECK_THROWS_WITH_AS(sgemm(test_context(), 4, -1, 4, enough, enough, enough),
                       "sgemm: sizes must not be negative, got m=4 n=-1 k=4", Error);
  CHECK_THROWS_WITH_AS(sgemm(test_context(), 4, 4, 4, enough.address(), 0, enough.address()),
                       "sgemm: B is a null address for a 4x4 matrix", Error);
}
