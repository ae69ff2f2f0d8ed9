// Tuning problems as data (ptxrt/kernel_problem.hpp): the problem file, the manifest lines and
// the builder giving the same problem; its sizes, geometry and data; and every malformed input
// giving one error that names its place.
#include <doctest/doctest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "disk_cache_test_support.hpp"
#include "error_checks.hpp"
#include "ptxrt/tune/kernel_problem.hpp"

namespace fs = std::filesystem;
using ptxrt::ElementType;
using ptxrt::ErrorKind;
using ptxrt::KernelProblem;
using ptxrt::ProblemSizes;
using ptxrt::TuningConfig;
using ptxrt::testing::check_error;
using ptxrt::testing::ScratchDirectory;

namespace {

const fs::path kernels = fs::path(PTXRT_SOURCE_DIR) / "tests" / "data" / "kernels";

nlohmann::ordered_json convolution_json() {
  std::ifstream in(kernels / "convolution.json");
  return nlohmann::ordered_json::parse(in);
}

// `document` written as a problem file in `scratch`, read for convolution.cu.
KernelProblem convolution_with(const ScratchDirectory& scratch,
                               const nlohmann::ordered_json& document) {
  const fs::path file = scratch.path() / "problem.json";
  std::ofstream(file) << document.dump(1);
  return KernelProblem::from_file(file, kernels / "convolution.cu");
}

std::string problem_error(const ScratchDirectory& scratch, const std::string& text) {
  const fs::path file = scratch.path() / "broken.json";
  std::ofstream(file) << text;
  try {
    KernelProblem::from_file(file, kernels / "convolution.cu");
  } catch (const ptxrt::Error& error) {
    return error.what();
  }
  return "no error";
}

TuningConfig config(std::vector<ptxrt::Define> defines) { return TuningConfig(std::move(defines)); }

}  // namespace

TEST_CASE("a problem file names the entry, sizes, tunables, geometry, arguments and reference") {
  const KernelProblem problem =
      KernelProblem::from_file(kernels / "convolution.json", kernels / "convolution.cu");
  CHECK(problem.name() == "convolution");
  CHECK(problem.entry() == "convolution_kernel");
  REQUIRE(problem.sizes().size() == 2);
  CHECK(problem.sizes()[0].first == "W");
  CHECK(problem.tunables().size() == 6);
  CHECK(problem.constraints().size() == 4);
  CHECK(problem.arguments().size() == 3);
  CHECK(problem.arguments()[0].is_output());
  CHECK(problem.symbols().at(0).from_argument == "filter");
  CHECK(problem.verification().kind == ptxrt::ProblemVerification::Kind::reference_kernel);
  CHECK(problem.verification().atol == 1e-3);
  CHECK(problem.rate().unit == "GFLOP/s");

  // Sizes not given take their defaults; the grid divides each by the block and tile, rounding up.
  const ProblemSizes sizes = problem.complete_sizes({{"W", 1000}});
  CHECK(sizes == ProblemSizes{{"H", 4096}, {"W", 1000}});
  CHECK(problem.size_values(sizes) == std::vector<std::int64_t>{1000, 4096});
  const ptxrt::LaunchConfig launch = problem.launch_at(
      config({{"block_size_x", "48"}, {"block_size_y", "4"}, {"tile_size_x", "2"},
              {"tile_size_y", "1"}, {"use_padding", "1"}, {"read_only", "0"}}),
      sizes);
  CHECK(ptxrt::to_string(launch.block) == "48x4x1");
  CHECK(ptxrt::to_string(launch.grid) == "11x1024x1");  // ceil(1000 / 96), 4096 / 4
  // The fixed defines follow the sizes, and the entry goes as a name expression.
  const ptxrt::CompileOptions options = problem.compile_options_at(sizes);
  CHECK(ptxrt::format_defines(options.defines) ==
        "image_width=1000 image_height=4096 filter_width=17 filter_height=17");
  CHECK(options.name_expressions == std::vector<std::string>{"convolution_kernel", "&d_filter"});
  CHECK(problem.argument_bytes() == std::vector<std::size_t>{8, 8, 8});
  CHECK(problem.default_config().describe() ==
        "block_size_x=16 block_size_y=16 read_only=0 tile_size_x=1 tile_size_y=1 use_padding=0");
}

TEST_CASE("the builder, the problem file and its JSON form make the same problem") {
  KernelProblem built(ptxrt::Program::from_file(kernels / "gaussian_sum.cu"), "gaussian_sum<float>");
  built.name("gaussian_sum")
      .size("n", 4194304)
      .define("steps", "256")
      .tune("block_size_x", {64, 128, 256, 512, 1024}, 256)
      .tune("ITEMS_PER_THREAD", {1, 2, 4, 8})
      .tune("UNROLL", {1, 2, 4, 8, 16})
      .tune("ALGORITHM", {0, 1, 2})
      .block("block_size_x")
      .grid_divide({"n"}, {{"block_size_x", "ITEMS_PER_THREAD"}})
      .buffer("x", ElementType::float32, "n", ptxrt::DataInit::uniform(-1, 1, 3))
      .buffer("y", ElementType::float32, "n", ptxrt::DataInit::zeros(), ptxrt::ArgumentRole::output)
      .scalar("n", ElementType::int32, "n")
      .verify_with_kernel({.entry = "gaussian_sum_reference",
                           .geometry = ptxrt::LaunchGeometry::of({"256"}, {"ceil_div(n, 256)"})})
      .tolerance(1e-6, 1e-4)
      .rate("n * steps", "Gexp/s", 1e9);
  built.validate();
  const KernelProblem read =
      KernelProblem::from_file(kernels / "gaussian_sum.json", kernels / "gaussian_sum.cu");
  CHECK(built.to_json() == read.to_json());
  CHECK(built.key_hash() == read.key_hash());
  const KernelProblem again = KernelProblem::from_json(read.to_json(), std::nullopt, "again", {});
  CHECK(again.to_json() == read.to_json());
  CHECK(again.program().source() == read.program().source());
}

TEST_CASE(
    "a program the application knows by name goes to JSON by that name and is read back through "
    "the same lookup") {
  const KernelProblem read =
      KernelProblem::from_file(kernels / "gaussian_sum.json", kernels / "gaussian_sum.cu");
  const ptxrt::Program& known = read.program();
  const ptxrt::ProgramsByName programs_by_name =
      [&](std::string_view name) -> std::optional<ptxrt::Program> {
    if (name == "gaussian_sum") return known;
    return std::nullopt;
  };
  // Ordered as written: the order of the tunables is part of the problem's JSON.
  const nlohmann::ordered_json by_name =
      nlohmann::ordered_json::parse(read.to_json(programs_by_name));
  CHECK(by_name["builtin"] == "gaussian_sum");
  CHECK_FALSE(by_name.contains("source"));
  const KernelProblem again =
      KernelProblem::from_json(by_name.dump(), std::nullopt, "again", {}, programs_by_name);
  CHECK(again.program().identity() == known.identity());
  CHECK(again.to_json() == read.to_json());

  // Without the lookup the program goes as its file, and a name is refused by its field.
  CHECK(nlohmann::json::parse(read.to_json()).contains("source"));
  check_error([&] { KernelProblem::from_json(by_name.dump(), std::nullopt, "again", {}); },
              ErrorKind::invalid_argument,
              "again: builtin: no program named 'gaussian_sum' is known here");
}

TEST_CASE("a kernel file's problem lines describe it, with the manifest's tunables") {
  const ptxrt::Program program = ptxrt::Program::from_string(
      "// ptxrt: define BLOCK in {64, 128, 256} default 128\n"
      "// ptxrt: tune BLOCK\n"
      "// ptxrt: constraint BLOCK >= 64\n"
      "// ptxrt: problem {\"kernel\": \"scale\", \"sizes\": {\"n\": 1000},\n"
      "// ptxrt: problem  \"block\": [\"BLOCK\"], \"grid\": [\"ceil_div(n, BLOCK)\"],\n"
      "// ptxrt: problem  \"arguments\": [{\"name\": \"y\", \"type\": \"float\", \"count\": \"n\",\n"
      "// ptxrt: problem                   \"role\": \"output\"}, {\"name\": \"n\", \"type\": \"int\","
      " \"value\": \"n\"}]}\n"
      "extern \"C\" __global__ void scale(float* y, int n) {}\n",
      "scale.cu");
  const KernelProblem problem = KernelProblem::from_manifest(program);
  REQUIRE(problem.tunables().size() == 1);
  CHECK(problem.tunables()[0].values == std::vector<std::int64_t>{64, 128, 256});
  CHECK(problem.default_config().describe() == "BLOCK=128");
  CHECK(problem.constraints().at(0).text() == "BLOCK >= 64");
  CHECK(ptxrt::to_string(problem.launch_at(problem.default_config(), problem.complete_sizes({})).grid) ==
        "8x1x1");

  check_error([] { KernelProblem::from_manifest(ptxrt::Program::from_string("// nothing\n", "k.cu")); },
              ErrorKind::not_found, "k.cu has no \"// ptxrt: problem\" lines");
  check_error(
      [] {
        KernelProblem::from_manifest(ptxrt::Program::from_string(
            "\n// ptxrt: problem {\"kernel\": \"k\",\n// ptxrt: problem  \"sizes\": [\"n\"] ]\n",
            "k.cu"));
      },
      ErrorKind::invalid_argument, "k.cu:3: problem line, column 16: not valid JSON");
}

TEST_CASE("problem sizes read NAME=VALUE lists and name what is missing or unknown") {
  CHECK(ptxrt::parse_problem_sizes("W=4096,H=64") == ProblemSizes{{"H", 64}, {"W", 4096}});
  CHECK(ptxrt::format_problem_sizes({{"H", 64}, {"W", 4096}}) == "H=64,W=4096");
  check_error([] { ptxrt::parse_problem_sizes("W=4096,H"); }, ErrorKind::invalid_argument,
              "size 'H': expected NAME=VALUE, as in W=4096,H=4096");
  check_error([] { ptxrt::parse_problem_sizes("W=0"); }, ErrorKind::invalid_argument,
              "size 'W=0': '0' is not a whole number from 1 to 2^62");
  check_error([] { ptxrt::parse_problem_sizes("W=1,W=2"); }, ErrorKind::invalid_argument,
              "size W is given twice");

  ScratchDirectory scratch;
  nlohmann::ordered_json document = convolution_json();
  document["sizes"] = {"W", "H"};
  const KernelProblem problem = convolution_with(scratch, document);
  check_error([&] { problem.complete_sizes({{"W", 64}}); }, ErrorKind::invalid_argument,
              "size H of convolution is not given and has no default (its sizes: W, H; on the "
              "command line: --size H=N)");
  check_error([&] { problem.complete_sizes({{"W", 64}, {"H", 64}, {"D", 2}}); },
              ErrorKind::invalid_argument, "convolution has no size D (its sizes: W, H)");
}

TEST_CASE("a malformed problem file gives one error naming the line and column or the field") {
  ScratchDirectory scratch;
  CHECK(problem_error(scratch, "{\n  \"kernel\": \"k\",\n  \"sizes\": [\"n\"]\n  \"block\": [1]\n}\n") ==
        "broken.json:4:9: not valid JSON: syntax error while parsing object - unexpected string "
        "literal; expected '}'");
  const auto field_error = [&](const std::function<void(nlohmann::ordered_json&)>& edit) {
    nlohmann::ordered_json document = convolution_json();
    edit(document);
    return problem_error(scratch, document.dump());
  };
  CHECK(field_error([](auto& d) { d["blok"] = 1; }).starts_with("broken.json: blok: unknown field"));
  CHECK(field_error([](auto& d) { d.erase("kernel"); }) ==
        "broken.json: kernel: missing: name the entry point to tune");
  CHECK(field_error([](auto& d) { d["arguments"][1]["count"] = "(W + 16) * (Hx + 16)"; }) ==
        "broken.json: arguments[1].count: '(W + 16) * (Hx + 16)' names Hx, which is not among "
        "the problem's names (sizes: W, H; defines: image_width, image_height, filter_width, "
        "filter_height)");
  CHECK(field_error([](auto& d) { d["arguments"][0]["count"] = "W * block_size_x"; }) ==
        "broken.json: arguments[0].count: 'W * block_size_x' names block_size_x, which is a "
        "tunable: this value must not change with the config (sizes: W, H; defines: "
        "image_width, image_height, filter_width, filter_height)");
  CHECK(field_error([](auto& d) { d["block"][1] = "block_size_y +"; }) ==
        "broken.json: block[1]: expression 'block_size_y +': expected a value at column 15");
  CHECK(field_error([](auto& d) { d["constraints"][0] = "unknown_name > 1"; })
            .starts_with("broken.json: constraints[0]: 'unknown_name > 1' names unknown_name"));
  CHECK(field_error([](auto& d) { d["arguments"][2]["type"] = "float16"; })
            .starts_with("broken.json: arguments[2].type: type 'float16' is unknown"));
  CHECK(field_error([](auto& d) { d["arguments"][2]["init"] = "gaussian"; }) ==
        "broken.json: arguments[2].init: 'gaussian' is not one of zeros, constant, iota, "
        "uniform, normal, file, derived, offsets, or a kernel {\"kernel\": ...}");
  CHECK(field_error([](auto& d) { d["symbols"][0]["from"] = "filters"; }) ==
        "broken.json: symbols[0].from: 'filters' is not a buffer argument (arguments: output, "
        "input, filter)");
  CHECK(field_error([](auto& d) { d["verify"]["config"] = {{"block_size_x", 16}}; }) ==
        "broken.json: verify: give one of \"reference\", \"config\" or \"files\"");
  CHECK(field_error([](auto& d) { d["tune"]["tile_size_x"] = {1, 1}; }) ==
        "broken.json: tuning parameter tile_size_x lists 1 twice");
}

TEST_CASE("the data of a problem's buffers and symbols is made as declared, the same each time") {
  ScratchDirectory scratch;
  const fs::path data_file = scratch.path() / "taps.bin";
  const std::vector<float> taps{0.25f, 0.5f, 0.25f};
  std::ofstream(data_file, std::ios::binary)
      .write(reinterpret_cast<const char*>(taps.data()), sizeof(float) * taps.size());
  KernelProblem problem(ptxrt::Program::from_string("__global__ void k() {}", "k.cu"), "k");
  problem.size("n").tune("B", {32})
      .buffer("ramp", ElementType::int32, "n", ptxrt::DataInit::iota(10, 2))
      .buffer("noise", ElementType::float32, "n * 100", ptxrt::DataInit::uniform(-1, 1, 5))
      .buffer("dice", ElementType::uint8, "n * 100", ptxrt::DataInit::uniform(1, 7, 6))
      .buffer("gauss", ElementType::float64, "n * 100", ptxrt::DataInit::normal(3, 0.5))
      .symbol("taps", ElementType::float32, "3", ptxrt::DataInit::from_file(data_file));
  const ProblemSizes sizes{{"n", 4}};
  const ptxrt::ProblemData data = ptxrt::make_problem_data(problem, sizes);
  CHECK(std::vector<std::int32_t>(data.span<std::int32_t>("ramp").begin(),
                                  data.span<std::int32_t>("ramp").end()) ==
        std::vector<std::int32_t>{10, 12, 14, 16});
  for (float value : data.span<float>("noise")) CHECK((value >= -1.0f && value < 1.0f));
  for (std::uint8_t value : data.span<std::uint8_t>("dice")) CHECK((value >= 1 && value <= 6));
  double mean = 0.0;
  for (double value : data.span<double>("gauss")) mean += value / 400.0;
  CHECK(mean == doctest::Approx(3.0).epsilon(0.05));
  CHECK(std::vector<float>(data.span<float>("taps").begin(), data.span<float>("taps").end()) == taps);
  CHECK(ptxrt::make_problem_data(problem, sizes).at("noise").bytes == data.at("noise").bytes);
  check_error([&] { data.span<double>("noise"); }, ErrorKind::invalid_argument,
              "'noise' holds float, not double");

  problem.symbol("short_taps", ElementType::float32, "4", ptxrt::DataInit::from_file(data_file));
  check_error([&] { ptxrt::make_problem_data(problem, sizes); }, ErrorKind::invalid_argument,
              "k.cu (k): symbols[1]: data file '" + data_file.string() +
                  "' holds 12 bytes, but 4 float element(s) take 16");
}

TEST_CASE("a malformed problem file names each field once: the geometry, the rate, grid_div") {
  ScratchDirectory scratch;
  const auto field_error = [&](const std::function<void(nlohmann::ordered_json&)>& edit) {
    nlohmann::ordered_json document = convolution_json();
    edit(document);
    return problem_error(scratch, document.dump());
  };
  // The origin once, however deep the field's reader sits.
  CHECK(field_error([](auto& d) {
          d["block"] = {1, 2, 3, 4};
        }) == "broken.json: block: expected 1 to 3 dimensions, got a list of 4 item(s)");
  CHECK(field_error([](auto& d) { d["block"][0] = true; }) ==
        "broken.json: block[0]: expected an expression (a string or an integer), got true");
  CHECK(field_error([](auto& d) { d["arguments"][2]["type"] = 5; }) ==
        "broken.json: arguments[2].type: expected a string, got 5");
  CHECK(field_error([](auto& d) { d["flops"] = "2 * W *"; }) ==
        "broken.json: flops: expression '2 * W *': expected a value at column 8");
  CHECK(field_error([](auto& d) {
          d.erase("flops");
          d["bytes"] = "W * Q";
        }).starts_with("broken.json: bytes: 'W * Q' names Q, which is not among"));
  CHECK(field_error([](auto& d) {
          d.erase("flops");
          d["rate"] = {{"work", "W *"}, {"unit", "Gpx/s"}};
        }) == "broken.json: rate.work: expression 'W *': expected a value at column 4");
  CHECK(field_error([](auto& d) {
          d.erase("flops");
          d["rate"] = {{"work", "W"}, {"unit", "Gpx/s"}, {"scale", -1}};
        }) == "broken.json: rate.scale: must be a finite number above 0, got -1");
  CHECK(field_error([](auto& d) { d["verify"]["atol"] = -1; }) ==
        "broken.json: verify.atol: must be a finite number, 0 or more, got -1");
  // grid_div_* divide problem_size's extents: beside "grid", or past the extents, they would be
  // ignored.
  CHECK(field_error([](auto& d) {
          d.erase("problem_size");
          d["grid"] = {"W", "H"};
        }) == "broken.json: grid_div_x: applies with \"problem_size\", not with \"grid\"");
  CHECK(field_error([](auto& d) { d["problem_size"] = {"W"}; }) ==
        "broken.json: grid_div_y: divides extent 1, but \"problem_size\" has 1 extent(s)");
  CHECK(field_error([](auto& d) { d["sizes"]["W"] = 18446744073709551615u; }) ==
        "broken.json: sizes.W: expected an integer from -2^63 to 2^63-1, got 18446744073709551615");
  CHECK(
      field_error([](auto& d) { d["sizes"]["W"] = 1LL << 62 | 1; }) ==
      "broken.json: sizes.W: the default 4611686018427387905 is not a whole number from 1 to 2^62");
  // A huge or binary name is echoed cut and escaped, once.
  const std::string message = field_error([](auto& d) { d[std::string(100000, 'x')] = 1; });
  CHECK(message.starts_with("broken.json: " + std::string(200, 'x') +
                            "... (100000 bytes): unknown field"));
  CHECK(message.size() < 600);
}

TEST_CASE("how data starts must suit its type: a uniform range, a deviation, integer bounds") {
  ScratchDirectory scratch;
  const auto init_error = [&](nlohmann::ordered_json init) {
    nlohmann::ordered_json document = convolution_json();
    nlohmann::ordered_json& argument = document["arguments"][1];
    argument.erase("low");
    argument.erase("high");
    argument.update(init);
    return problem_error(scratch, document.dump());
  };
  CHECK(init_error({{"init", "uniform"}, {"low", 5}, {"high", 1}}) ==
        "broken.json: arguments[1]: uniform needs low <= high, got low 5 and high 1");
  CHECK(init_error({{"init", "uniform"}, {"low", -1e308}, {"high", 1e308}}) ==
        "broken.json: arguments[1]: uniform's range from -1e+308 to 1e+308 is wider than a double "
        "holds");
  CHECK(init_error({{"init", "normal"}, {"deviation", 0}}) ==
        "broken.json: arguments[1]: normal needs a finite deviation above 0, got 0");
  CHECK(init_error({{"type", "uint8"}, {"init", "constant"}, {"fill", 300}}) ==
        "broken.json: arguments[1]: fill 300 is outside the range of uint8 (0 to 255)");
  CHECK(init_error({{"type", "int8"}, {"init", "uniform"}, {"low", -200}, {"high", 0}}) ==
        "broken.json: arguments[1]: low -200 is outside the range of int8 (-128 to 127)");
  // Integer data from a normal start saturates at the type's range rather than wrapping.
  KernelProblem problem(ptxrt::Program::from_string("__global__ void k() {}", "k.cu"), "k");
  problem.tune("B", {32}).buffer("wide", ElementType::int8, "1000",
                                 ptxrt::DataInit::normal(0, 1e6, 1));
  problem.validate();
  bool saw_both_ends[2] = {false, false};
  const ptxrt::ProblemData data = ptxrt::make_problem_data(problem, {});
  for (std::int8_t value : data.span<std::int8_t>("wide")) {
    saw_both_ends[0] |= value == -128;
    saw_both_ends[1] |= value == 127;
  }
  CHECK(saw_both_ends[0]);
  CHECK(saw_both_ends[1]);
}

TEST_CASE("buffer sizes are overflow-checked and held against the memory limit, data unmade") {
  ScratchDirectory scratch;
  const fs::path data_file = scratch.path() / "d.bin";
  std::ofstream(data_file, std::ios::binary) << std::string(4000, '\0');
  const auto problem_with = [&](const std::string& count, ptxrt::DataInit init) {
    KernelProblem problem(ptxrt::Program::from_string("__global__ void k() {}", "k.cu"), "k");
    problem.size("n", 1000).tune("B", {32}).buffer("x", ElementType::float32, count, init);
    problem.validate();
    return problem;
  };
  const ProblemSizes sizes{{"n", 1000}};
  // 2^62 floats are 2^64 bytes: an overflow to 0, not a 0-byte buffer written past.
  for (const char* count : {"4611686018427387904", "4611686018427387904 + 1000"})
    for (const ptxrt::DataInit& init :
         {ptxrt::DataInit::zeros(), ptxrt::DataInit::from_file(data_file)}) {
      CAPTURE(count);
      check_error([&] { ptxrt::check_problem_data(problem_with(count, init), sizes); },
                  ErrorKind::invalid_argument, "k.cu (k): arguments[0].count: ");
      check_error([&] { ptxrt::make_problem_data(problem_with(count, init), sizes); },
                  ErrorKind::invalid_argument, " float element(s) take more than 2^64 bytes");
    }
  check_error([&] { ptxrt::make_problem_data(problem_with("1000000000000", {}), sizes); },
              ErrorKind::invalid_argument,
              "k.cu (k): arguments[0].count: 1000000000000 float element(s) take 4000000000000 "
              "bytes, which brings the problem's data to more than the 274877906944 bytes it may "
              "take (the device's memory, else 256 GiB)");
  check_error([&] { ptxrt::check_problem_data(problem_with("n * n * n", {}), sizes, 1u << 30); },
              ErrorKind::invalid_argument, "more than the 1073741824 bytes it may take");
  check_error([&] { ptxrt::check_problem_data(problem_with("0", {}), sizes); },
              ErrorKind::invalid_argument,
              "k.cu (k): arguments[0].count: 0 float element(s): a buffer needs at least 1");
  // 200 GiB fit the cap: checking them makes nothing (it would take minutes, or fail, if it did).
  const auto start = std::chrono::steady_clock::now();
  ptxrt::check_problem_data(problem_with("50000000000", {}), sizes);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
  ptxrt::check_problem_data(problem_with("1000", ptxrt::DataInit::from_file(data_file)), sizes);
}
