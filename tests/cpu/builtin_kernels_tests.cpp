#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "apps/common/builtin_kernels.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/program.hpp"
#include "ptxrt/core/target.hpp"
#include "support/usable_cpus.hpp"

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

// Each value of each declared constant, the others at their default (or first value), for every
// architecture in [lowest_sm, highest_sm] that NVRTC supports: the kernels must build wherever
// ptxrt may run them. Hundreds of NVRTC compiles: they run on every core (NVRTC is thread-safe),
// the checks on this thread; two test cases, so that CTest can run the halves side by side.
void check_every_builtin_kernel_compiles_for(int lowest_sm, int highest_sm) {
  struct Job {
    std::string name;
    int sm = 0;
    std::vector<ptxrt::Define> defines;
    std::string outcome;  // "sm_NN" as the CUBIN says, or the error
  };
  std::vector<Job> jobs;
  for (const std::string& name : ptxrt::apps::builtin_kernel_names()) {
    const ptxrt::Program program = ptxrt::apps::builtin_program(name);
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
    for (int sm : ptxrt::supported_architectures())
      if (sm >= lowest_sm && sm <= highest_sm)
        for (const std::vector<ptxrt::Define>& defines : variants) jobs.push_back({name, sm, defines, {}});
  }
  std::atomic<std::size_t> next{0};
  const auto compile_jobs = [&] {
    for (std::size_t i = next++; i < jobs.size(); i = next++) {
      Job& job = jobs[i];
      try {
        ptxrt::CompileOptions options;
        options.defines = job.defines;
        options.target = {"sm_" + std::to_string(job.sm), ptxrt::ImageFormat::cubin, {}};
        const ptxrt::Image image = ptxrt::compile(ptxrt::apps::builtin_program(job.name), options);
        const std::optional<int> sm = ptxrt::cubin_sm_version(image.data);
        job.outcome = sm ? "sm_" + std::to_string(*sm) : "a CUBIN without an sm version";
      } catch (const std::exception& error) {
        job.outcome = error.what();
      }
    }
  };
  {
    std::vector<std::jthread> workers(ptxrt::usable_cpu_count());
    for (std::jthread& worker : workers) worker = std::jthread(compile_jobs);
  }
  for (const Job& job : jobs) {
    CAPTURE(job.name);
    CAPTURE(ptxrt::format_defines(job.defines));
    CHECK(job.outcome == "sm_" + std::to_string(job.sm));
  }
}

}  // namespace

TEST_CASE("every builtin kernel compiles for every constant value on every architecture from sm_75 to sm_89") {
  check_every_builtin_kernel_compiles_for(75, 89);
}

TEST_CASE("every builtin kernel compiles for every constant value on every architecture from sm_90 on") {
  check_every_builtin_kernel_compiles_for(90, 1000);
}
