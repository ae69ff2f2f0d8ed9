#include <doctest/doctest.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "apps/common/builtin_kernels.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/program.hpp"
#include "ptxrt/core/resources.hpp"
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
  CHECK(names.size() ==
        static_cast<std::size_t>(std::count_if(files.begin(), files.end(), is_kernel)));
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
// How hard NVRTC works on a sweep's compile: the sample (every suite but CI's) compiles as the
// library does; the full product (CI's, in place of the sample), which repeats each value on every
// architecture, in NVRTC's fast-compile mode (--Ofast-compile=max, a seventh of the time for sgemm
// on sm_100): the same front end, so the same errors for a value that does not build, and a CUBIN
// that keeps its device functions apart (calls, sections of their own), which ptxrt's reader must
// read too, since a user may compile that way. The library's own optimisation is then the sample's
// (each value on one architecture, each architecture for several kernels), the spill check's
// (every listed sgemm config on sm_90) and the other tests' that compile builtin kernels.
enum class Optimisation { as_the_library, fast_compile };

std::string compile_outcome(const std::string& kernel, const std::vector<ptxrt::Define>& defines,
                            int sm, Optimisation optimisation = Optimisation::as_the_library) {
  try {
    ptxrt::CompileOptions options;
    options.defines = defines;
    // The option is NVRTC's from 12.8; an older one compiles as the library does.
    if (optimisation == Optimisation::fast_compile && ptxrt::nvrtc_version() >= 12080)
      options.extra_options.push_back("--Ofast-compile=max");
    options.target = {sm_name(sm), ptxrt::ImageFormat::cubin, {}};
    const ptxrt::Image image = ptxrt::compile(ptxrt::apps::builtin_program(kernel), options);
    // What `ptxrt resources` reads: every CUBIN NVRTC makes must pass ptxrt's own checks.
    ptxrt::image_resources(image);
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

// The sample that every suite compiles: each kernel's configurations of the full product (its
// defaults, then each other value of one constant at a time), and the compiles of all kernels, in
// name order, taking the architectures in turn. So each value compiles once, on some
// architecture, and each architecture compiles several kernels: a twelfth of the full product,
// which CI runs (below). A kernel's compiles are cut into CTest cases of at most this many:
constexpr std::size_t sampled_compiles_per_case = 6;

std::size_t sampled_case_count(std::size_t compiles) {
  return (compiles + sampled_compiles_per_case - 1) / sampled_compiles_per_case;
}

struct SampledCompile {
  std::string kernel;
  std::vector<ptxrt::Define> defines;
  int sm;
};

std::vector<SampledCompile> sampled_compiles() {
  const std::vector<int> architectures = swept_architectures();
  std::vector<std::string> kernels = ptxrt::apps::builtin_kernel_names();
  std::sort(kernels.begin(), kernels.end());
  std::vector<SampledCompile> compiles;
  for (const std::string& kernel : kernels)
    for (std::vector<ptxrt::Define>& defines : configurations_of(kernel))
      compiles.push_back(
          {kernel, std::move(defines), architectures[compiles.size() % architectures.size()]});
  return compiles;
}

// "kernel:cases kernel:cases ...", as tests/CMakeLists.txt registers the sample's cases.
std::string sampled_cases() {
  std::vector<std::string> kernels = ptxrt::apps::builtin_kernel_names();
  std::sort(kernels.begin(), kernels.end());
  std::vector<std::string> cases;
  for (const std::string& kernel : kernels)
    cases.push_back(kernel + ":" +
                    std::to_string(sampled_case_count(configurations_of(kernel).size())));
  return space_separated(cases);
}

}  // namespace

// The sweeps below are a hundred NVRTC compiles (the sample) and a thousand (the full product).
// CTest runs the sample in cases of a few compiles of one kernel and the full product one kernel
// and architecture per case (tests/CMakeLists.txt registers them, each selecting its subcases), so
// that its -j spreads them over the cores and no case runs long; run whole, they are skipped. This
// test keeps those cases in step with the kernels, their manifests and NVRTC.
TEST_CASE("the sweeps' CTest cases cover every builtin kernel and every architecture from sm_75") {
  std::vector<std::string> kernels = ptxrt::apps::builtin_kernel_names();
  std::sort(kernels.begin(), kernels.end());
  CHECK(std::string(PTXRT_SWEPT_KERNELS) == space_separated(kernels));
  std::vector<std::string> architectures;
  for (int sm : swept_architectures()) architectures.push_back(std::to_string(sm));
  CHECK_MESSAGE(std::string(PTXRT_SWEPT_ARCHITECTURES) == space_separated(architectures),
                "CMake took the architectures from nvcc --list-gpu-arch, which differs from NVRTC");
  CHECK_MESSAGE(std::string(PTXRT_SAMPLED_CASES) == sampled_cases(),
                "CMake counts a kernel's configurations from its 'ptxrt: define' lines");
}

TEST_CASE("the sample compiles each constant value of each kernel and on each architecture") {
  const std::vector<SampledCompile> compiles = sampled_compiles();
  std::set<int> architectures;
  std::set<std::string> values;
  for (const SampledCompile& compile : compiles) {
    architectures.insert(compile.sm);
    for (const ptxrt::Define& define : compile.defines)
      values.insert(compile.kernel + " " + define.name + "=" + define.value);
  }
  const std::vector<int> all_architectures = swept_architectures();
  CHECK(architectures == std::set<int>(all_architectures.begin(), all_architectures.end()));
  for (const std::string& kernel : ptxrt::apps::builtin_kernel_names()) {
    const ptxrt::Manifest manifest = ptxrt::apps::builtin_program(kernel).manifest();
    for (const ptxrt::ManifestDefine& declared : manifest.defines)
      for (const std::string& value : declared.values) {
        CAPTURE(kernel);
        CHECK(values.contains(kernel + " " + declared.name + "=" + value));
      }
  }
}

// The sample, cases of at most sampled_compiles_per_case compiles (tests/CMakeLists.txt); run
// whole, it is skipped.
TEST_CASE("every builtin kernel compiles for a sample of its constant values and architectures" *
          doctest::skip()) {
  const std::vector<SampledCompile> compiles = sampled_compiles();
  for (const std::string& kernel : ptxrt::apps::builtin_kernel_names()) {
    SUBCASE(kernel.c_str()) {
      std::vector<const SampledCompile*> of_kernel;
      for (const SampledCompile& compile : compiles)
        if (compile.kernel == kernel) of_kernel.push_back(&compile);
      const std::size_t cases = sampled_case_count(of_kernel.size());
      for (std::size_t part = 0; part < cases; ++part) {
        const std::string name =
            "part " + std::to_string(part + 1) + " of " + std::to_string(cases);
        SUBCASE(name.c_str()) {
          for (std::size_t i = part * sampled_compiles_per_case;
               i < std::min(of_kernel.size(), (part + 1) * sampled_compiles_per_case); ++i) {
            const SampledCompile& compile = *of_kernel[i];
            CAPTURE(ptxrt::format_defines(compile.defines));
            CHECK(compile_outcome(kernel, compile.defines, compile.sm) == sm_name(compile.sm));
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
            CHECK(compile_outcome(kernel, defines, sm, Optimisation::fast_compile) == sm_name(sm));
          }
        }
      }
    }
  }
}
