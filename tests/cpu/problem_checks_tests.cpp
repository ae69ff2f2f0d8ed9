// What Kernel Tuner's users bring to a problem file (ptxrt/tune/kernel_problem.hpp): checks of
// what an output means (aggregates, a check kernel) and data made from other data (derived
// buffers, offsets with a total, generator kernels). Read, validated, written back, and the
// CPU side of each made and compared without a GPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "error_checks.hpp"
#include "ptxrt/tune/kernel_problem.hpp"
#include "tune/problem_checks.hpp"

using ptxrt::Aggregate;
using ptxrt::DataInit;
using ptxrt::ElementType;
using ptxrt::ErrorKind;
using ptxrt::KernelProblem;
using ptxrt::OutputAggregate;
using ptxrt::ProblemSizes;
using ptxrt::testing::check_error;
using json = nlohmann::ordered_json;

namespace {

constexpr const char* partial_sum_source = R"(
extern "C" __global__ void partial_sum(const float* x, float* partial, int n) {}
extern "C" __global__ void partial_sum_check(const float* partial, const float* expected,
                                             int n, int* verdict, float* error) {}
extern "C" __global__ void make_points(float* points, int n) {}
)";

// A per-block reduction: one partial sum per block of BLOCK, checked by the sum of the partials
// against the reference config's, and by a check kernel.
json partial_sum_problem() {
  return json::parse(R"json({
    "kernel": "partial_sum",
    "sizes": {"n": 1000},
    "tune": {"BLOCK": [64, 128, 256]},
    "block": ["BLOCK"],
    "grid": ["ceil_div(n, BLOCK)"],
    "arguments": [
      {"name": "x", "type": "float", "count": "n",
       "init": {"kernel": "make_points", "block": [128], "grid": ["ceil_div(n, 128)"],
                "arguments": ["x", "n"]}},
      {"name": "partial", "type": "float", "count": "ceil_div(n, 64)", "role": "output"},
      {"name": "n", "type": "int", "value": "n"},
      {"name": "noisy", "type": "float", "count": "n", "init": "derived", "source": "x",
       "noise": 0.5, "absolute": true, "seed": 3},
      {"name": "rows", "type": "int", "count": "n + 1", "init": "offsets", "total": "7 * n",
       "seed": 4}
    ],
    "verify": {
      "config": {"BLOCK": 256},
      "aggregates": [
        {"output": "partial", "aggregate": "sum", "length": "ceil_div(n, BLOCK)", "rtol": 1e-4},
        {"output": "partial", "aggregate": "count", "length": "ceil_div(n, BLOCK)",
         "expected": "ceil_div(n, BLOCK)"},
        {"output": "partial", "aggregate": "max", "expected": 0.5, "atol": 1.5}
      ],
      "check": {"kernel": "partial_sum_check", "block": [32], "grid": [1],
                "arguments": ["partial", "reference.partial", "n"]}
    }
  })json");
}

KernelProblem read(const json& document) {
  return KernelProblem::from_json(document.dump(1),
                                  ptxrt::Program::from_string(partial_sum_source, "partial_sum.cu"),
                                  "p.json", ".");
}

// The error reading `document` after `edit` gives.
void check_refused(const std::function<void(json&)>& edit, std::string_view fragment) {
  json document = partial_sum_problem();
  edit(document);
  check_error([&] { read(document); }, ErrorKind::invalid_argument, fragment);
}

template <typename T>
std::vector<std::byte> bytes_of(const std::vector<T>& values) {
  std::vector<std::byte> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

template <typename T>
std::vector<T> values_of(const ptxrt::ProblemData& data, std::string_view name) {
  const std::span<const T> span = data.span<T>(name);
  return {span.begin(), span.end()};
}

}  // namespace

TEST_CASE("a problem file reads aggregates, a check kernel, derived data, offsets and generators") {
  const KernelProblem problem = read(partial_sum_problem());
  const ptxrt::ProblemVerification& verification = problem.verification();
  REQUIRE(verification.aggregates.size() == 3);
  CHECK(verification.aggregates[0].output == "partial");
  CHECK(verification.aggregates[0].aggregate == Aggregate::sum);
  CHECK(verification.aggregates[0].length->text() == "ceil_div(n, BLOCK)");
  CHECK(verification.aggregates[0].rtol == 1e-4);
  CHECK_FALSE(verification.aggregates[0].atol.has_value());
  CHECK(verification.aggregates[1].expected->text() == "ceil_div(n, BLOCK)");
  CHECK(verification.aggregates[2].expected_number == 0.5);
  REQUIRE(verification.check.has_value());
  CHECK(verification.check->entry == "partial_sum_check");
  CHECK(verification.check->arguments ==
        std::vector<std::string>{"partial", "reference.partial", "n"});
  CHECK_FALSE(verification.compares_elements_of("partial"));

  const DataInit& generated = problem.arguments()[0].init;
  CHECK(generated.kind == DataInit::Kind::kernel);
  CHECK(generated.kernel.entry == "make_points");
  CHECK(generated.kernel.geometry.grid[0].text() == "ceil_div(n, 128)");
  CHECK(generated.kernel.arguments == std::vector<std::string>{"x", "n"});
  const DataInit& noisy = problem.arguments()[3].init;
  CHECK(noisy.kind == DataInit::Kind::derived);
  CHECK(noisy.source == "x");
  CHECK(noisy.noise == 0.5);
  CHECK(noisy.absolute);
  CHECK(noisy.seed == 3);
  const DataInit& rows = problem.arguments()[4].init;
  CHECK(rows.kind == DataInit::Kind::offsets);
  CHECK(rows.total->text() == "7 * n");
  // The check kernel is resolved as the entry is, in the config's module.
  const std::vector<std::string> names = problem.compile_options_at({{"n", 1000}}).name_expressions;
  CHECK(std::find(names.begin(), names.end(), "partial_sum_check") != names.end());
}

TEST_CASE("to_json writes the checks and the made data so that from_json reads the same problem") {
  const KernelProblem problem = read(partial_sum_problem());
  const std::string written = problem.to_json();
  const KernelProblem again = KernelProblem::from_json(written, std::nullopt, "again.json", ".");
  CHECK(again.to_json() == written);
  CHECK(again.key_hash() == problem.key_hash());
  const json document = json::parse(written);
  CHECK(document["verify"]["aggregates"][2]["expected"] == 0.5);
  CHECK(document["arguments"][0]["init"]["kernel"] == "make_points");
  CHECK(document["arguments"][4]["total"] == "7 * n");

  // Aggregates against values need no reference, and still have a JSON form.
  KernelProblem built(ptxrt::Program::from_string(partial_sum_source, "partial_sum.cu"),
                      "partial_sum");
  built.size("n")
      .tune("BLOCK", {64})
      .block("BLOCK")
      .grid("ceil_div(n, BLOCK)")
      .buffer("x", ElementType::float32, "n", DataInit::absolute_of("y"))
      .buffer("y", ElementType::float32, "n", DataInit::uniform(-1, 1))
      .buffer("partial", ElementType::float32, "n", DataInit::zeros(), ptxrt::ArgumentRole::output)
      .aggregate({.output = "partial",
                  .aggregate = Aggregate::min,
                  .expected = ptxrt::Expression::parse("0")});
  built.validate();
  const KernelProblem read_back =
      KernelProblem::from_json(built.to_json(), std::nullopt, "b.json", ".");
  REQUIRE(read_back.verification().aggregates.size() == 1);
  CHECK(read_back.verification().kind == ptxrt::ProblemVerification::Kind::none);
  CHECK(read_back.arguments()[0].init.absolute);
  CHECK(read_back.to_json() == built.to_json());
}

TEST_CASE("every new field is refused naming it: unknown, mistyped, naming nothing, cyclic") {
  check_refused([](json& d) { d["verify"]["aggregates"][0]["sum"] = 1; },
                "p.json: verify.aggregates[0].sum: unknown field");
  check_refused([](json& d) { d["verify"]["aggregates"][0]["aggregate"] = "mean"; },
                "verify.aggregates[0].aggregate: 'mean' is not one of sum, min, max, count");
  check_refused([](json& d) { d["verify"]["aggregates"][0]["aggregate"] = 3; },
                "verify.aggregates[0].aggregate: expected a string");
  check_refused([](json& d) { d["verify"]["aggregates"][0]["output"] = "x"; },
                "verify.aggregates[0].output: 'x' is not an output argument");
  check_refused([](json& d) { d["verify"]["aggregates"][1]["length"] = "blocks"; },
                "verify.aggregates[1].length: 'blocks' names blocks");
  check_refused([](json& d) { d["verify"]["aggregates"][0]["atol"] = -1; },
                "verify.aggregates[0].atol: must be a finite number, 0 or more");
  check_refused([](json& d) { d["verify"].erase("config"); },
                "verify.aggregates[0]: needs \"expected\", or a reference");
  check_refused([](json& d) { d["verify"]["check"]["arguments"][2] = "m"; },
                "verify.check.arguments[2]: 'm' is not an argument");
  check_refused([](json& d) { d["verify"]["check"]["arguments"][1] = "reference.x"; },
                "verify.check.arguments[1]: 'reference.x' names no output argument");
  check_refused([](json& d) { d["verify"]["check"]["grid"] = {"WARPS"}; },
                "verify.check.grid[0]: 'WARPS' names WARPS");
  check_refused([](json& d) { d["verify"]["check"].erase("kernel"); },
                "verify.check: needs \"kernel\"");
  check_refused([](json& d) { d["arguments"][3]["source"] = "nothing"; },
                "arguments[3].source: 'nothing' is not a buffer argument");
  check_refused([](json& d) { d["arguments"][3]["source"] = "n"; },
                "arguments[3].source: 'n' is not a buffer argument");
  check_refused([](json& d) { d["arguments"][3]["noise"] = -0.5; },
                "arguments[3]: noise must be a finite number, 0 or more, got -0.5");
  check_refused([](json& d) { d["arguments"][3]["noise"] = 1e308; },
                "arguments[3]: noise's range from -1e+308 to 1e+308 is wider than a double holds");
  check_refused([](json& d) { d["arguments"][3]["absolute"] = "yes"; },
                "arguments[3].absolute: expected true or false");
  check_refused([](json& d) { d["arguments"][3].erase("source"); },
                "arguments[3]: init \"derived\" needs \"source\"");
  check_refused([](json& d) { d["arguments"][4]["type"] = "float"; },
                "arguments[4]: offsets are integers, not float");
  check_refused([](json& d) { d["arguments"][4]["total"] = "nnz"; },
                "arguments[4].total: 'nnz' names nnz");
  check_refused([](json& d) { d["arguments"][4]["total"] = "BLOCK"; },
                "arguments[4].total: 'BLOCK' names BLOCK, which is a tunable");
  check_refused([](json& d) { d["arguments"][0]["init"]["arguments"] = {"n"}; },
                "arguments[0].init.arguments: the kernel must be given the buffer it makes");
  check_refused(
      [](json& d) {
        d["arguments"][0]["init"]["arguments"] = {"x", "y"};
      },
      "arguments[0].init.arguments[1]: 'y' is not an argument");
  check_refused([](json& d) { d["arguments"][0]["init"]["seed"] = 1; },
                "arguments[0].init.seed: unknown field");
  check_refused([](json& d) { d["arguments"][0]["init"] = "random"; },
                "arguments[0].init: 'random' is not one of zeros, constant");
  // x is made by a kernel that reads noisy, which is derived from x.
  check_refused(
      [](json& d) {
        d["arguments"][0]["init"]["arguments"] = {"x", "noisy"};
      },
      "arguments[0].init: its data is made from itself: x -> noisy -> x");
  check_refused(
      [](json& d) {
        d["symbols"] = json::array({{{"name", "table"},
                                     {"type", "float"},
                                     {"count", 4},
                                     {"init", {{"kernel", "make_points"}}}}});
      },
      "symbols[0].init: a symbol's data cannot come from a kernel");
}

TEST_CASE("derived data is its source plus seeded noise, absolute when asked, the same each time") {
  KernelProblem problem(ptxrt::Program::from_string("__global__ void k() {}", "k.cu"), "k");
  problem.size("n")
      .tune("B", {32})
      .buffer("noisy", ElementType::float64, "n", DataInit::derived("base", 0.25, 9))
      .buffer("base", ElementType::float64, "n", DataInit::uniform(-1, 1, 5))
      .buffer("magnitude", ElementType::float32, "n", DataInit::absolute_of("base"))
      .buffer("rounded", ElementType::int32, "n - 3", DataInit::derived("base", 2.0));
  problem.validate();
  const ProblemSizes sizes{{"n", 1001}};
  const ptxrt::ProblemData data = ptxrt::make_problem_data(problem, sizes);
  const std::vector<double> base = values_of<double>(data, "base");
  const std::vector<double> noisy = values_of<double>(data, "noisy");
  const std::vector<float> magnitude = values_of<float>(data, "magnitude");
  REQUIRE(noisy.size() == base.size());
  bool any_noise = false;
  for (std::size_t i = 0; i < base.size(); ++i) {
    CHECK(std::abs(noisy[i] - base[i]) <= 0.25);
    any_noise = any_noise || noisy[i] != base[i];
    CHECK(magnitude[i] == static_cast<float>(std::abs(base[i])));
  }
  CHECK(any_noise);
  CHECK(data.span<std::int32_t>("rounded").size() == 998);
  for (std::int32_t value : data.span<std::int32_t>("rounded")) CHECK((value >= -3 && value <= 2));
  CHECK(ptxrt::make_problem_data(problem, sizes).at("noisy").bytes == data.at("noisy").bytes);

  KernelProblem longer = problem;
  longer.buffer("too_long", ElementType::float32, "n + 1", DataInit::derived("base"));
  check_error([&] { ptxrt::check_problem_data(longer, sizes); }, ErrorKind::invalid_argument,
              "k.cu (k): arguments[4].source: 'base' has 1001 element(s), fewer than the 1002 "
              "made from it");
  // Data made from other data counts against the memory as any other.
  check_error([&] { ptxrt::check_problem_data(problem, sizes, 20000); },
              ErrorKind::invalid_argument, "arguments[2].count: 1001 float element(s) take 4004");
}

TEST_CASE("offsets rise from 0 to their total, seeded, for every integer type and odd counts") {
  KernelProblem problem(ptxrt::Program::from_string("__global__ void k() {}", "k.cu"), "k");
  problem.size("rows")
      .size("nnz")
      .tune("B", {32})
      .buffer("offsets", ElementType::int32, "rows + 1", DataInit::offsets("nnz", 11))
      .buffer("wide", ElementType::uint64, "rows + 1", DataInit::offsets("nnz * 1000000000", 12))
      .buffer("same_seed", ElementType::int32, "rows + 1", DataInit::offsets("nnz", 11))
      .buffer("other_seed", ElementType::int32, "rows + 1", DataInit::offsets("nnz", 13));
  problem.validate();
  for (const std::int64_t rows : {1, 2, 3, 977}) {
    CAPTURE(rows);
    const ProblemSizes sizes{{"rows", rows}, {"nnz", 5003}};
    const ptxrt::ProblemData data = ptxrt::make_problem_data(problem, sizes);
    const std::vector<std::int32_t> offsets = values_of<std::int32_t>(data, "offsets");
    REQUIRE(offsets.size() == static_cast<std::size_t>(rows + 1));
    CHECK(offsets.front() == 0);
    CHECK(offsets.back() == 5003);
    CHECK(std::is_sorted(offsets.begin(), offsets.end()));
    std::int64_t row_lengths = 0;
    for (std::size_t i = 1; i < offsets.size(); ++i) row_lengths += offsets[i] - offsets[i - 1];
    CHECK(row_lengths == 5003);
    const std::vector<std::uint64_t> wide = values_of<std::uint64_t>(data, "wide");
    CHECK(wide.back() == 5003000000000ull);
    CHECK(std::is_sorted(wide.begin(), wide.end()));
    CHECK(data.at("same_seed").bytes == data.at("offsets").bytes);
    if (rows > 2) CHECK(data.at("other_seed").bytes != data.at("offsets").bytes);
  }

  KernelProblem narrow(ptxrt::Program::from_string("__global__ void k() {}", "k.cu"), "k");
  narrow.size("n").tune("B", {32}).buffer("o", ElementType::int8, "n", DataInit::offsets("n * 64"));
  check_error(
      [&] {
        ptxrt::check_problem_data(narrow, {{"n", 2}});
      },
      ErrorKind::invalid_argument,
      "k.cu (k): arguments[0].total: 128 is not from 0 to 127, the int8 offsets' range");
  check_error(
      [&] {
        ptxrt::check_problem_data(narrow, {{"n", 1}});
      },
      ErrorKind::invalid_argument,
      "arguments[0].total: a single offset is 0, so it cannot total 64");

  // 64-bit totals past 2^53 stay exact: the offsets are stored as integers.
  std::mt19937_64 generator(1);
  const std::uint64_t huge = (std::uint64_t{1} << 60) + 1;
  const std::vector<std::uint64_t> offsets = ptxrt::detail::sorted_offsets(5, huge, generator);
  CHECK(offsets.front() == 0);
  CHECK(offsets.back() == huge);
}

TEST_CASE("data a kernel makes is zeros until a session runs it, and what it reads comes first") {
  const KernelProblem problem = read(partial_sum_problem());
  const ptxrt::ProblemData cpu = ptxrt::make_problem_data(problem, {{"n", 100}});
  for (float value : cpu.span<float>("x")) CHECK(value == 0.0f);

  std::vector<std::string> made;
  const ptxrt::ProblemData generated = ptxrt::detail::make_problem_data_with(
      problem, {{"n", 100}}, ptxrt::max_problem_data_bytes,
      [&](std::size_t position, ptxrt::ProblemData& data) {
        made.push_back(problem.arguments()[position].name);
        std::vector<std::byte>& bytes = data.at("x").bytes;
        const std::vector<float> points(100, -2.0f);
        std::memcpy(bytes.data(), points.data(), bytes.size());
      });
  CHECK(made == std::vector<std::string>{"x"});
  // noisy is derived from what the kernel made: |-2 + noise in [-0.5, 0.5]|.
  for (float value : generated.span<float>("noisy")) CHECK((value >= 1.5f && value <= 2.5f));
}

TEST_CASE("an aggregate sums, bounds or counts a prefix, and NaN poisons it") {
  using ptxrt::detail::aggregate_of;
  const std::vector<std::byte> floats = bytes_of(std::vector<float>{1.5f, -2.0f, 0.0f, 4.0f, NAN});
  CHECK(aggregate_of(Aggregate::sum, ElementType::float32, floats, 4) == 3.5);
  CHECK(aggregate_of(Aggregate::min, ElementType::float32, floats, 4) == -2.0);
  CHECK(aggregate_of(Aggregate::max, ElementType::float32, floats, 2) == 1.5);
  CHECK(aggregate_of(Aggregate::count, ElementType::float32, floats, 4) == 3.0);
  CHECK(aggregate_of(Aggregate::count, ElementType::float32, floats, 5) == 4.0);
  CHECK(std::isnan(aggregate_of(Aggregate::sum, ElementType::float32, floats, 5)));
  CHECK(std::isnan(aggregate_of(Aggregate::max, ElementType::float32, floats, 5)));
  CHECK(std::isnan(aggregate_of(Aggregate::min, ElementType::float32, floats, 0)));
  CHECK(aggregate_of(Aggregate::sum, ElementType::float32, floats, 0) == 0.0);
  // A prefix past the elements is cut at their end.
  CHECK(aggregate_of(Aggregate::count, ElementType::float32, floats, 99) == 4.0);
  const std::vector<std::byte> integers =
      bytes_of(std::vector<std::int16_t>{-7, 3, 0, std::numeric_limits<std::int16_t>::max()});
  CHECK(aggregate_of(Aggregate::sum, ElementType::int16, integers, 4) == 32763.0);
  CHECK(aggregate_of(Aggregate::min, ElementType::int16, integers, 3) == -7.0);
  const std::vector<std::byte> poisoned = bytes_of(std::vector<std::uint32_t>{0xA5A5A5A5u, 1});
  CHECK(aggregate_of(Aggregate::max, ElementType::uint32, poisoned, 2) == 2779096485.0);
}

TEST_CASE("outputs compare element by element within atol + rtol, naming the first one outside") {
  using ptxrt::detail::compare_elements;
  using ptxrt::detail::largest_magnitude;
  const std::vector<std::byte> expected = bytes_of(std::vector<float>{1.0f, -4.0f, 2.0f, 0.5f});
  const std::vector<std::byte> close = bytes_of(std::vector<float>{1.0005f, -4.0f, 2.003f, 0.5f});
  CHECK(largest_magnitude(ElementType::float32, expected) == 4.0);
  // Relative to each element: 2.003 is 0.003 off an allowance of 0.001·2.
  const auto per_element = compare_elements(ElementType::float32, expected, close, 0.0, 1e-3, {});
  CHECK(per_element.max_error == doctest::Approx(0.003).epsilon(1e-3));
  CHECK(per_element.worst_share == doctest::Approx(1.5).epsilon(1e-3));
  CHECK(per_element.first_fault == 2);
  CHECK(per_element.fault_actual == doctest::Approx(2.003));
  CHECK(per_element.fault_expected == 2.0);
  // Relative to the largest |expected| (4): every element within 0.004.
  const auto to_largest = compare_elements(ElementType::float32, expected, close, 0.0, 1e-3, 4.0);
  CHECK_FALSE(to_largest.first_fault);
  CHECK(to_largest.worst_share == doctest::Approx(0.75).epsilon(1e-3));
  // A NaN is infinitely wrong; with no allowance any error is too; equal values pass with none.
  const std::vector<std::byte> nan = bytes_of(std::vector<float>{1.0f, NAN, 2.0f, 0.5f});
  const auto poisoned = compare_elements(ElementType::float32, expected, nan, 1.0, 1.0, {});
  CHECK(std::isinf(poisoned.max_error));
  CHECK(std::isinf(poisoned.worst_share));
  CHECK(poisoned.first_fault == 1);
  CHECK(std::isinf(
      compare_elements(ElementType::float32, expected, close, 0.0, 0.0, {}).worst_share));
  const auto same = compare_elements(ElementType::float32, expected, expected, 0.0, 0.0, {});
  CHECK_FALSE(same.first_fault);
  CHECK(same.max_error == 0.0);
  CHECK(same.worst_share == 0.0);
  // Every type reads as its own: a uint8 of 200 is not -56, a double keeps its range.
  const std::vector<std::byte> bytes = bytes_of(std::vector<std::uint8_t>{200, 3});
  const std::vector<std::byte> other = bytes_of(std::vector<std::uint8_t>{190, 3});
  CHECK(largest_magnitude(ElementType::uint8, bytes) == 200.0);
  const auto integers = compare_elements(ElementType::uint8, bytes, other, 5.0, 0.0, {});
  CHECK(integers.max_error == 10.0);
  CHECK(integers.first_fault == 0);
  CHECK(integers.worst_share == 2.0);
  const std::vector<std::byte> wide = bytes_of(std::vector<double>{-1e300, 3.0});
  CHECK(largest_magnitude(ElementType::float64, wide) == 1e300);
}

TEST_CASE("an element outside its allowance is named with values that read back as its type") {
  using ptxrt::detail::compare_elements;
  using ptxrt::detail::element_fault;
  const std::vector<std::byte> expected = bytes_of(std::vector<float>{1.0f, 0.1f, 2.0f});
  const std::vector<std::byte> actual = bytes_of(std::vector<float>{1.0f, 0.1f, 2.0000002f});
  const auto exact = compare_elements(ElementType::float32, expected, actual, 0.0, 0.0, {});
  // A float one ulp off 2 reads as its own shortest text, not as 2.
  CHECK(element_fault("y", ElementType::float32, exact, 0.0, 0.0, {}, "config B=1") ==
        "y[2] = 2.0000002, expected 2 (config B=1): outside atol 0 + rtol 0 x |expected|");
  const std::vector<std::byte> off = bytes_of(std::vector<float>{1.0f, 0.3f, 2.0f});
  const auto tenth = compare_elements(ElementType::float32, expected, off, 0.0, 1e-3, 2.0);
  CHECK(element_fault("y", ElementType::float32, tenth, 0.0, 1e-3, 2.0, "cuBLAS") ==
        "y[1] = 0.3, expected 0.1 (cuBLAS): outside atol 0 + rtol 0.001 x the largest "
        "|expected| 2");
  // A double keeps its 17 digits; a comparison that found nothing names nothing.
  const std::vector<std::byte> tenths = bytes_of(std::vector<double>{0.1, 1e300});
  const std::vector<std::byte> sum = bytes_of(std::vector<double>{0.1 + 0.2, 1e300});
  const auto doubles = compare_elements(ElementType::float64, tenths, sum, 0.0, 0.0, {});
  CHECK(element_fault("z", ElementType::float64, doubles, 0.0, 0.0, {}, "r") ==
        "z[0] = 0.30000000000000004, expected 0.1 (r): outside atol 0 + rtol 0 x |expected|");
  const auto same = compare_elements(ElementType::float64, tenths, tenths, 0.0, 0.0, {});
  CHECK_FALSE(element_fault("z", ElementType::float64, same, 0.0, 0.0, {}, "r"));
}

TEST_CASE("an aggregate passes within atol + rtol of what it expects and names itself otherwise") {
  using ptxrt::detail::aggregate_fault;
  const OutputAggregate sum{.output = "partial", .aggregate = Aggregate::sum};
  CHECK_FALSE(aggregate_fault(sum, 16, 100.05, 100.0, 0.0, 1e-3, "config BLOCK=256"));
  CHECK_FALSE(aggregate_fault(sum, 16, 7.0, 7.0, 0.0, 0.0, "config BLOCK=256"));
  CHECK(aggregate_fault(sum, 16, 100.2, 100.0, 0.0, 1e-3, "config BLOCK=256") ==
        "sum of partial[0:16] = 100.2, expected 100 (config BLOCK=256): outside atol 0 + rtol "
        "0.001 x |expected|");
  CHECK(aggregate_fault(sum, 16, NAN, 100.0, 1.0, 1.0, "r").has_value());
  CHECK(aggregate_fault(sum, 16, 1.0, NAN, 1.0, 1.0, "r").has_value());
  const OutputAggregate count{.output = "hits", .aggregate = Aggregate::count};
  CHECK(aggregate_fault(count, 3, 2.0, 3.0, 0.0, 0.0, "'ceil_div(n, B)'")
            ->starts_with("count of hits[0:3] = 2, expected 3 ('ceil_div(n, B)')"));
}

TEST_CASE("the block_sums example is a per-block reduction checked by aggregates of its partials") {
  const std::filesystem::path kernels =
      std::filesystem::path(PTXRT_SOURCE_DIR) / "tests" / "data" / "kernels";
  const KernelProblem problem =
      KernelProblem::from_file(kernels / "block_sums.json", kernels / "block_sums.cu");
  CHECK(problem.arguments()[0].init.kind == DataInit::Kind::kernel);
  REQUIRE(problem.verification().aggregates.size() == 2);
  CHECK_FALSE(problem.verification().compares_elements_of("partial"));
  ptxrt::check_problem_data(problem, problem.complete_sizes({}));
}

TEST_CASE("a long chain of derivations is made last to first, without recursion") {
  KernelProblem problem(ptxrt::Program::from_string("__global__ void k() {}", "k.cu"), "k");
  problem.size("n").tune("B", {32});
  constexpr int links = 2000;
  for (int i = 0; i < links; ++i)
    problem.buffer("b" + std::to_string(i), ElementType::int32, "n",
                   DataInit::derived("b" + std::to_string(i + 1)));
  problem.buffer("b" + std::to_string(links), ElementType::int32, "n", DataInit::iota(5, 3));
  const std::vector<std::size_t> order = ptxrt::detail::making_order(problem);
  REQUIRE(order.size() == links + 1);
  CHECK(order.front() == links);
  CHECK(order.back() == 0);
  const ptxrt::ProblemData data = ptxrt::make_problem_data(problem, {{"n", 3}});
  CHECK(values_of<std::int32_t>(data, "b0") == std::vector<std::int32_t>{5, 8, 11});
}

TEST_CASE("a compile that failed on a name expression names it; other errors name none") {
  const std::string log =
      "NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID\nInput name expression was: \" no_such_check\"\n";
  CHECK(ptxrt::detail::unresolved_name(ptxrt::Error(ErrorKind::compile, log)) == "no_such_check");
  CHECK(ptxrt::detail::unresolved_name(
            ptxrt::Error(ErrorKind::compile, "Input name expression was: \"&table\"")) == "&table");
  CHECK_FALSE(ptxrt::detail::unresolved_name(ptxrt::Error(ErrorKind::io, log)));
  CHECK_FALSE(ptxrt::detail::unresolved_name(
      ptxrt::Error(ErrorKind::compile, "kernel.cu(3): error: identifier \"x\" is undefined")));
}
