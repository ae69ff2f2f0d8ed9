#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ptxrt/builtin_kernels.hpp"
#include "ptxrt/error.hpp"
#include "ptxrt/program.hpp"
#include "ptxrt/target.hpp"

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
  std::vector<std::string> names = ptxrt::builtin_kernel_names();
  std::vector<std::string> files = files_on_disk();
  for (const std::string& file : files) {
    CAPTURE(file);
    std::optional<std::string_view> embedded = ptxrt::builtin_file(file);
    REQUIRE(embedded.has_value());
    CHECK(*embedded == read_file(kernel_folder / file));
    if (file.ends_with(".cu"))
      CHECK(std::count(names.begin(), names.end(), file.substr(0, file.size() - 3)) == 1);
  }
  auto is_kernel = [](const std::string& file) { return file.ends_with(".cu"); };
  CHECK(names.size() == static_cast<std::size_t>(std::count_if(files.begin(), files.end(), is_kernel)));
}

TEST_CASE("an unknown builtin kernel is not_found") {
  CHECK_FALSE(ptxrt::builtin_file("no_such_kernel.cu").has_value());
  try {
    ptxrt::Program::builtin("no_such_kernel");
    FAIL("expected an error");
  } catch (const ptxrt::Error& error) {
    CHECK(error.kind() == ptxrt::ErrorKind::not_found);
    CHECK(std::string(error.what()).starts_with("no builtin kernel 'no_such_kernel'; known:"));
  }
}

// Each value of each declared constant, the others at their default (or first value), for every
// architecture from sm_75: the kernels must build wherever ptxrt may run them.
TEST_CASE("every builtin kernel compiles for every supported architecture and constant value") {
  std::vector<int> architectures = ptxrt::supported_architectures();
  for (const std::string& name : ptxrt::builtin_kernel_names()) {
    ptxrt::Program program = ptxrt::Program::builtin(name);
    const ptxrt::Manifest& manifest = program.manifest();
    CHECK_MESSAGE(!manifest.entries.empty(), name << " declares no entry point");
    std::vector<ptxrt::Define> baseline;
    for (const ptxrt::ManifestDefine& declared : manifest.defines)
      baseline.push_back({declared.name, declared.default_value.value_or(declared.values.front())});
    std::vector<std::vector<ptxrt::Define>> variants{baseline};
    for (std::size_t i = 0; i < manifest.defines.size(); ++i)
      for (const std::string& value : manifest.defines[i].values)
        if (value != baseline[i].value) {
          variants.push_back(baseline);
          variants.back()[i].value = value;
        }
    for (int sm : architectures) {
      if (sm < 75) continue;
      for (const std::vector<ptxrt::Define>& defines : variants) {
        CAPTURE(name);
        CAPTURE(sm);
        CAPTURE(ptxrt::format_defines(defines));
        ptxrt::CompileOptions options;
        options.defines = defines;
        options.target = {"sm_" + std::to_string(sm), ptxrt::ImageFormat::cubin, {}};
        ptxrt::Image image = ptxrt::compile(program, options);
        CHECK(ptxrt::cubin_sm_version(image.data) == sm);
      }
    }
  }
}
