#include <doctest/doctest.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "apps/common/builtin_kernels.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/program.hpp"
#include "ptxrt/core/target.hpp"

namespace {

const std::filesystem::path kernel_folder = std::filesystem::path(PTXRT_SOURCE_DIR) / "ptx_src";

std::string read_file(const std::filesystem::path& path) {
  std::ifstream stream(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(stream), std::istreambuf_iterator<char>()};
}

// Every *.cu and *.cuh under ptx_src/, relative and '/'-separated, as the build embeds them.
std::vector<std::string> files_on_disk() {
  std::vector<std::string> files;
  if (!std::filesystem::is_directory(kernel_folder)) return files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(kernel_folder)) {
    std::string extension = entry.path().extension().string();
    if (entry.is_regular_file() && (extension == ".cu" || extension == ".cuh"))
      files.push_back(entry.path().lexically_relative(kernel_folder).generic_string());
  }
  return files;
}

}  // namespace

TEST_CASE("every kernel file in ptx_src is embedded byte for byte") {
  std::vector<std::string> names = ptxrt::apps::builtin_kernel_names();
  std::vector<std::string> files = files_on_disk();
  for (const std::string& file : files) {
    CAPTURE(file);
    std::optional<std::string_view> embedded = ptxrt::apps::builtin_file(file);
    REQUIRE(embedded.has_value());
    CHECK(*embedded == read_file(kernel_folder / file));
    if (file.ends_with(".cu"))
      CHECK(std::count(names.begin(), names.end(), file.substr(0, file.size() - 3)) == 1);
  }
  auto is_kernel = [](const std::string& file) { return file.ends_with(".cu"); };
  CHECK(names.size() == static_cast<std::size_t>(std::count_if(files.begin(), files.end(), is_kernel)));
}

TEST_CASE("every builtin kernel declares an entry point") {
  for (const std::string& name : ptxrt::apps::builtin_kernel_names()) {
    CAPTURE(name);
    CHECK_FALSE(ptxrt::apps::builtin_program(name).manifest().entries.empty());
  }
}

TEST_CASE("an unknown builtin kernel is not_found") {
  CHECK_FALSE(ptxrt::apps::builtin_file("no_such_kernel.cu").has_value());
  try {
    ptxrt::apps::builtin_program("no_such_kernel");
    FAIL("expected an error");
  } catch (const ptxrt::Error& error) {
    CHECK(error.kind() == ptxrt::ErrorKind::not_found);
    CHECK(std::string(error.what()).starts_with("no builtin kernel 'no_such_kernel'; known:"));
  }
}

namespace {

// The configurations a sweep compiles for a kernel: its defaults (a constant without one takes
// its first value), then each other declared value of one constant at a time.
std::vector<std::vector<ptxrt::Define>> configurations_of(const std::string& kernel) {
  const ptxrt::Manifest manifest = ptxrt::apps::builtin_program(kernel).manifest();
  std::vector<ptxrt::Define> defaults;
  for (const ptxrt::ManifestDefine& declared : manifest.defines)
    defaults.push_back({declared.name, declared.default_value.value_or(declared.values.front())});
  std::vector<std::vector<ptxrt::Define>> configurations{defaults};
  for (std::size_t i = 0; i < manifest.defines.size(); ++i)
    for (const std::string& value : manifest.defines[i].values)
      if (value != defaults[i].value) {
        configurations.push_back(defaults);
        configurations.back()[i].value = value;
      }
  return configurations;
}

// Every architecture this NVRTC compiles for from sm_75 on: wherever ptxrt may run a kernel.
std::vector<int> swept_architectures() {
  std::vector<int> architectures = ptxrt::supported_architectures();
  std::erase_if(architectures, [](int sm) { return sm < 75; });
  return architectures;
}

std::string sm_name(int sm) { return "sm_" + std::to_string(sm); }

// "sm_NN" as the compiled CUBIN says, or the compiler's error.
std::string compile_outcome(const std::string& kernel, const std::vector<ptxrt::Define>& defines,
                            int sm) {
  try {
    ptxrt::CompileOptions options;
    options.defines = defines;
    options.target = {sm_name(sm), ptxrt::ImageFormat::cubin, {}};
    const ptxrt::Image image = ptxrt::compile(ptxrt::apps::builtin_program(kernel), options);
    const std::optional<int> compiled = ptxrt::cubin_sm_version(image.data);
    return compiled ? sm_name(*compiled) : "a CUBIN without an sm version";
  } catch (const std::exception& error) {
    return error.what();
  }
}

std::string space_separated(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : " ") + item;
  return text;
}

}  // namespace

// The sweeps below are hundreds of NVRTC compiles. CTest runs them one kernel and architecture
// per case (tests/CMakeLists.txt registers a case per pair, selecting the two subcases), so that
// its -j spreads them over the cores and no case runs long; run whole, they are skipped. This
// test keeps those cases in step with the kernels and with NVRTC.
TEST_CASE("the sweeps' CTest cases cover every builtin kernel and every architecture from sm_75") {
  std::vector<std::string> kernels = ptxrt::apps::builtin_kernel_names();
  std::sort(kernels.begin(), kernels.end());
  CHECK(std::string(PTXRT_SWEPT_KERNELS) == space_separated(kernels));
  std::vector<std::string> architectures;
  for (int sm : swept_architectures()) architectures.push_back(std::to_string(sm));
  CHECK_MESSAGE(std::string(PTXRT_SWEPT_ARCHITECTURES) == space_separated(architectures),
                "CMake took the architectures from nvcc --list-gpu-arch, which differs from NVRTC");
}

// Each configuration on one architecture and each architecture with at least one configuration:
// configuration i (mod their count) on architecture i (mod theirs), for i up to the larger count.
// Every suite runs it; CI runs the full product below.
TEST_CASE(
    "every builtin kernel compiles for every constant value and every architecture paired "
    "round robin" *
    doctest::skip()) {
  const std::vector<int> architectures = swept_architectures();
  for (const std::string& kernel : ptxrt::apps::builtin_kernel_names()) {
    SUBCASE(kernel.c_str()) {
      const std::vector<std::vector<ptxrt::Define>> configurations = configurations_of(kernel);
      const std::size_t pairs = std::max(configurations.size(), architectures.size());
      for (std::size_t place = 0; place < architectures.size(); ++place) {
        const int sm = architectures[place];
        SUBCASE(sm_name(sm).c_str()) {
          for (std::size_t pair = place; pair < pairs; pair += architectures.size()) {
            const std::vector<ptxrt::Define>& defines =
                configurations[pair % configurations.size()];
            CAPTURE(ptxrt::format_defines(defines));
            CHECK(compile_outcome(kernel, defines, sm) == sm_name(sm));
          }
        }
      }
    }
  }
}

// The full product; its CTest cases carry the label `exhaustive` (scripts/test.sh --exhaustive).
TEST_CASE("every builtin kernel compiles for every constant value on every architecture" *
          doctest::skip()) {
  const std::vector<int> architectures = swept_architectures();
  for (const std::string& kernel : ptxrt::apps::builtin_kernel_names()) {
    SUBCASE(kernel.c_str()) {
      for (int sm : architectures) {
        SUBCASE(sm_name(sm).c_str()) {
          for (const std::vector<ptxrt::Define>& defines : configurations_of(kernel)) {
            CAPTURE(ptxrt::format_defines(defines));
            CHECK(compile_outcome(kernel, defines, sm) == sm_name(sm));
          }
        }
      }
    }
  }
}
