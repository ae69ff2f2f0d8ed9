// What Kernel Tuner's users write, read by a problem file as they wrote it: restrictions in
// Python's syntax, boolean tunables, grid divisor lists; and every expression error naming the
// problem file's field and quoting the user's own text.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "disk_cache_test_support.hpp"
#include "ptxrt/tune/kernel_problem.hpp"

namespace fs = std::filesystem;
using ptxrt::KernelProblem;
using ptxrt::testing::ScratchDirectory;

namespace {

const fs::path kernels = fs::path(PTXRT_SOURCE_DIR) / "tests" / "data" / "kernels";

// convolution.json (a port of Kernel Tuner's convolution example) after `edit`, as a problem file
// for convolution.cu.
KernelProblem convolution_with(const ScratchDirectory& scratch,
                               const std::function<void(nlohmann::ordered_json&)>& edit) {
  std::ifstream in(kernels / "convolution.json");
  nlohmann::ordered_json document = nlohmann::ordered_json::parse(in);
  edit(document);
  const fs::path file = scratch.path() / "problem.json";
  std::ofstream(file) << document.dump(1);
  return KernelProblem::from_file(file, kernels / "convolution.cu");
}

std::string convolution_error(const ScratchDirectory& scratch,
                              const std::function<void(nlohmann::ordered_json&)>& edit) {
  try {
    convolution_with(scratch, edit);
  } catch (const ptxrt::Error& error) {
    return error.what();
  }
  return "no error";
}

std::size_t allowed_configs(const KernelProblem& problem) {
  return problem.space_at(problem.complete_sizes({})).enumerate().allowed.size();
}

}  // namespace

TEST_CASE("a problem file's constraints take Kernel Tuner's restrictions in Python's syntax") {
  ScratchDirectory scratch;
  const KernelProblem in_c = convolution_with(scratch, [](auto&) {});
  const KernelProblem in_python = convolution_with(scratch, [](auto& d) {
    d["constraints"] = {"block_size_x * block_size_y >= 64 and block_size_x * block_size_y <= 512",
                        "0 < tile_size_x * tile_size_y <= 4",
                        "use_padding==0 or (block_size_x % 32 != 0)",
                        "not (read_only == True and use_padding == False and 2 ** 7 < 0)"};
  });
  CHECK(allowed_configs(in_python) == allowed_configs(in_c));
  CHECK(allowed_configs(in_c) > 0);
  CHECK(allowed_configs(in_c) < 5 * 5 * 3 * 3 * 2 * 2);
}

TEST_CASE("boolean tunables are the values 1 and 0, defined to the kernel as 1 and 0") {
  ScratchDirectory scratch;
  const KernelProblem problem = convolution_with(scratch, [](auto& d) {
    d["tune"]["use_padding"] = {{"values", {true, false}}, {"default", false}};
    d["tune"]["read_only"] = {false, true};
  });
  const auto tunable = [&](const std::string& name) {
    for (const ptxrt::TuningParameter& parameter : problem.tunables())
      if (parameter.name == name) return parameter;
    FAIL("no tunable " << name);
    return ptxrt::TuningParameter{};
  };
  CHECK(tunable("use_padding").values == std::vector<std::int64_t>{1, 0});
  CHECK(tunable("use_padding").default_value == 0);
  CHECK(tunable("read_only").values == std::vector<std::int64_t>{0, 1});
  const ptxrt::TuningConfig config = problem.default_config();
  CHECK(config.describe().find("use_padding=0") != std::string::npos);
  CHECK(config.describe().find("read_only=0") != std::string::npos);

  CHECK(convolution_error(scratch, [](auto& d) {
          d["tune"]["read_only"] = {0, 0.5};
        }) == "problem.json: tune.read_only[1]: expected an integer, true or false, got 0.5");
  CHECK(convolution_error(scratch, [](auto& d) {
          d["tune"]["read_only"] = {true, 1};
        }) == "problem.json: tuning parameter read_only lists 1 twice");
}

TEST_CASE("grid_div lists multiply: each grid dimension covers its extent with their product") {
  ScratchDirectory scratch;
  const KernelProblem problem = convolution_with(scratch, [](auto& d) {
    d["grid_div_x"] = {"block_size_x", "tile_size_x"};
    d["grid_div_y"] = {"block_size_y * tile_size_y"};
  });
  const ptxrt::TuningConfig config({{"block_size_x", "48"},
                                    {"block_size_y", "4"},
                                    {"tile_size_x", "2"},
                                    {"tile_size_y", "4"},
                                    {"use_padding", "0"},
                                    {"read_only", "0"}});
  const ptxrt::LaunchConfig launch = problem.launch_at(config, {{"W", 1000}, {"H", 100}});
  CHECK(launch.grid.x == 11);  // ceil(1000 / 96)
  CHECK(launch.grid.y == 7);   // ceil(100 / 16)
}

TEST_CASE("an expression error names the problem file's field and quotes the text as written") {
  ScratchDirectory scratch;
  CHECK(convolution_error(
            scratch,
            [](auto& d) { d["constraints"][2] = "use_padding==0 xor (block_size_x % 32 != 0)"; }) ==
        "problem.json: constraints[2]: expression 'use_padding==0 xor (block_size_x % 32 "
        "!= 0)': unexpected 'xor' at column 16");
  CHECK(convolution_error(scratch, [](auto& d) { d["grid_div_x"][1] = "tile_size_x *"; }) ==
        "problem.json: grid_div_x[1]: expression 'tile_size_x *': expected a value at column 14");
  CHECK(convolution_error(scratch, [](auto& d) { d["grid_div_y"][0] = "block_size_y = 2"; }) ==
        "problem.json: grid_div_y[0]: expression 'block_size_y = 2': unexpected '=' (a "
        "comparison is '==') at column 14");
  CHECK(convolution_error(scratch, [](auto& d) { d["problem_size"][1] = "H +"; }) ==
        "problem.json: problem_size[1]: expression 'H +': expected a value at column 4");
  CHECK(convolution_error(scratch, [](auto& d) { d["block"][0] = "block_size_x ** -"; }) ==
        "problem.json: block[0]: expression 'block_size_x ** -': expected a value at column 18");
}

TEST_CASE("an unknown name in a grid divisor is named by its field, not by the grid it makes") {
  ScratchDirectory scratch;
  CHECK(convolution_error(scratch, [](auto& d) { d["grid_div_x"][1] = "tile_sise_x"; })
            .starts_with("problem.json: grid_div_x[1]: 'tile_sise_x' names tile_sise_x, which is "
                         "not among the problem's names (sizes: W, H; "));
  CHECK(convolution_error(scratch, [](auto& d) {
          d["problem_size"][0] = "Width";
        }).starts_with("problem.json: problem_size[0]: 'Width' names Width, which is not among"));
}
