// Programs of several files linked with nvJitLink, prebuilt device objects and libraries, and
// every way a link can fail: each a clear error naming the symbol or the input. No GPU needed;
// tests/gpu/link_tests.cpp runs what these build.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "apps/common/disassembly.hpp"
#include "disk_cache_test_support.hpp"
#include "error_checks.hpp"
#include "process.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/core/program.hpp"
#include "ptxrt/core/resources.hpp"
#include "ptxrt/core/target.hpp"
#include "support/child_process.hpp"
#include "support/regular_file.hpp"

namespace fs = std::filesystem;
using ptxrt::testing::contains;
using ptxrt::testing::ScratchDirectory;

namespace {

const fs::path link_data = fs::path(PTXRT_SOURCE_DIR) / "tests/data/link";

ptxrt::Program two_file_program() {
  return ptxrt::Program::from_files({link_data / "link_main.cu", link_data / "link_math.cu"});
}

ptxrt::CompileOptions cubin_for(const std::string& arch, bool lto = false) {
  ptxrt::CompileOptions options;
  options.target = {arch, ptxrt::ImageFormat::cubin, {}};
  options.lto = lto;
  return options;
}

std::vector<std::string> kernel_names(const ptxrt::Image& image) {
  std::vector<std::string> names;
  for (const ptxrt::KernelResources& kernel : ptxrt::read_cubin_resources(image.data))
    names.push_back(kernel.name);
  return names;
}

ptxrt::Error link_error(const ptxrt::Program& program, const ptxrt::CompileOptions& options) {
  try {
    ptxrt::compile(program, options);
  } catch (const ptxrt::Error& error) {
    return error;
  }
  FAIL("expected the link to fail");
  return ptxrt::Error(ptxrt::ErrorKind::link, "unreachable");
}

// Runs a toolkit program (nvcc, cuobjdump) through the launcher ptxrt uses for every program it
// starts; returns its output, or nothing (with a message) when the toolkit lacks it.
std::optional<std::string> run_toolkit_program(const std::string& name,
                                               std::vector<std::string> arguments) {
  std::optional<fs::path> program = ptxrt::apps::find_toolkit_program(name);
  if (!program) {
    MESSAGE(name << " is not installed: skipped");
    return std::nullopt;
  }
  arguments.insert(arguments.begin(), program->string());
  ptxrt::detail::ChildProcess child(arguments);
  std::string output;
  while (std::optional<std::string> line = child.read_line(std::chrono::minutes(5)))
    output += *line + "\n";
  const std::string status = child.terminate();
  REQUIRE_MESSAGE(status == "exited with code 0", name << " " << status << ": " << output);
  return output;
}

// link_math.cu as nvcc -dc builds it, archived with nvcc -lib: a static device library.
std::optional<fs::path> build_device_library(const fs::path& folder, const std::string& gencode) {
  const fs::path object = folder / "link_math.o";
  const fs::path library = folder / "liblink_math.a";
  if (!run_toolkit_program(
          "nvcc", {"-dc", gencode, (link_data / "link_math.cu").string(), "-o", object.string()}) ||
      !run_toolkit_program("nvcc", {"-lib", object.string(), "-o", library.string()}))
    return std::nullopt;
  return library;
}

}  // namespace

TEST_CASE("two files link into one CUBIN with and without LTO for sm_80 and sm_90") {
  const ptxrt::Program program = two_file_program();
  CHECK(program.is_linked());
  CHECK(program.manifest().find_entry("affine_clamp") != nullptr);
  for (const std::string arch : {"sm_80", "sm_90"})
    for (const bool lto : {false, true}) {
      CAPTURE(arch);
      CAPTURE(lto);
      const ptxrt::Image image = ptxrt::compile(program, cubin_for(arch, lto));
      CHECK(image.format == ptxrt::ImageFormat::cubin);
      CHECK(image.name == "link_main.cu+link_math.cu");
      CHECK(ptxrt::cubin_sm_version(image.data) == std::stoi(arch.substr(3)));
      CHECK(kernel_names(image) == std::vector<std::string>{"affine_clamp"});
      // Each source's log under its name; ptxas' report (registers) from the sources, or from the
      // link after LTO.
      CHECK(contains(image.compile_log, lto ? "== link ==" : "== link_main.cu =="));
      CHECK(!ptxrt::parse_ptxas_info(image.compile_log).empty());
    }
}

TEST_CASE("LTO of two files gives PTX for a virtual architecture, which without LTO is refused") {
  ptxrt::CompileOptions options = cubin_for("compute_90", true);
  options.target.format = ptxrt::ImageFormat::ptx;
  const ptxrt::Image ptx = ptxrt::compile(two_file_program(), options);
  CHECK(contains(ptx.data, ".entry affine_clamp"));
  options.lto = false;
  const ptxrt::Error error = link_error(two_file_program(), options);
  CHECK(error.kind() == ptxrt::ErrorKind::invalid_argument);
  CHECK(contains(error.what(), "needs link-time optimisation"));
}

TEST_CASE("the cache key covers every source, device object, lto and the link options") {
  const ptxrt::Program program = two_file_program();
  const ptxrt::CompileOptions plain = cubin_for("sm_90");
  const std::string key = ptxrt::cache_key(program, plain);
  CHECK(ptxrt::cache_key(two_file_program(), plain) == key);
  CHECK(ptxrt::cache_key(program, cubin_for("sm_90", true)) != key);
  ptxrt::CompileOptions with_option = plain;
  with_option.link_options = {"-maxrregcount=32"};
  CHECK(ptxrt::cache_key(program, with_option) != key);
  ptxrt::Program edited = ptxrt::Program::from_file(link_data / "link_main.cu");
  edited.add_source("// edited\n" + program.sources()[1].text, "link_math.cu", link_data);
  CHECK(ptxrt::cache_key(edited, plain) != key);
  ptxrt::Program with_object = program;
  const ptxrt::Image math =
      ptxrt::compile(ptxrt::Program::from_file(link_data / "link_math.cu"), cubin_for("sm_90"));
  with_object.add_device_object(ptxrt::DeviceObject::from_bytes(math.data, "extra.cubin"));
  CHECK(ptxrt::cache_key(with_object, plain) != key);
  // A single source keeps the key it had before linking existed: lto off adds nothing.
  const ptxrt::Program single = ptxrt::Program::from_file(link_data / "link_math.cu");
  CHECK(ptxrt::cache_key(single, plain) != ptxrt::cache_key(single, cubin_for("sm_90", true)));
}

TEST_CASE(
    "a static device library and an object built by nvcc -dc link in, recognised by content") {
  ScratchDirectory scratch;
  const std::optional<fs::path> library = build_device_library(scratch.path(), "-arch=sm_90");
  if (!library) return;
  const ptxrt::DeviceObject archive = ptxrt::DeviceObject::from_file(*library);
  CHECK(archive.kind == ptxrt::DeviceObjectKind::library);
  CHECK(archive.architectures() == std::vector<std::string>{"sm_90", "compute_90"});
  // The object under a misleading name is still an object.
  fs::copy_file(scratch.path() / "link_math.o", scratch.path() / "math.cubin");
  const ptxrt::DeviceObject object = ptxrt::DeviceObject::from_file(scratch.path() / "math.cubin");
  CHECK(object.kind == ptxrt::DeviceObjectKind::object);
  for (const ptxrt::DeviceObject& input : {archive, object}) {
    ptxrt::Program program = ptxrt::Program::from_file(link_data / "link_main.cu");
    program.add_device_object(input);
    const ptxrt::Image image = ptxrt::compile(program, cubin_for("sm_90"));
    CHECK(kernel_names(image) == std::vector<std::string>{"affine_clamp"});
    CHECK(image.name == "link_main.cu+" + input.name);
  }
}

TEST_CASE("a static library of LTO-IR from nvcc -dlto links in with lto, recognised by content") {
  ScratchDirectory scratch;
  const std::optional<fs::path> library =
      build_device_library(scratch.path(), "-gencode=arch=compute_90,code=lto_90");
  if (!library) return;
  const ptxrt::DeviceObject archive = ptxrt::DeviceObject::from_file(*library);
  CHECK(archive.kind == ptxrt::DeviceObjectKind::library);
  ptxrt::Program program = ptxrt::Program::from_file(link_data / "link_main.cu");
  program.add_device_object(archive);
  const ptxrt::Image image = ptxrt::compile(program, cubin_for("sm_90", true));
  CHECK(kernel_names(image) == std::vector<std::string>{"affine_clamp"});
}

TEST_CASE("a device library for another architecture is refused naming it and both architectures") {
  ScratchDirectory scratch;
  const std::optional<fs::path> library =
      build_device_library(scratch.path(), "-gencode=arch=compute_80,code=sm_80");
  if (!library) return;
  ptxrt::Program program = ptxrt::Program::from_file(link_data / "link_main.cu");
  program.add_device_object(ptxrt::DeviceObject::from_file(*library));
  const ptxrt::Error error = link_error(program, cubin_for("sm_90"));
  CHECK(error.kind() == ptxrt::ErrorKind::link);
  CHECK(contains(error.what(), "liblink_math.a (device library) holds device code for sm_80 only"));
  CHECK(contains(error.what(), "cannot link into sm_90"));
}

TEST_CASE("an undefined symbol is one link error naming the symbol and the inputs") {
  for (const bool lto : {false, true}) {
    CAPTURE(lto);
    ptxrt::Program program = ptxrt::Program::from_file(link_data / "link_main.cu");
    program.add_source("__device__ int unrelated = 1;\n", "unrelated.cu");
    const ptxrt::Error error = link_error(program, cubin_for("sm_90", lto));
    CHECK(error.kind() == ptxrt::ErrorKind::link);
    CHECK(error.call() == "nvJitLinkComplete");
    CHECK(contains(error.what(), "undefined symbol scale_value(float) (_Z11scale_valuef)"));
    CHECK(contains(error.what(), "link_main.cu+unrelated.cu for sm_90"));
    if (!lto) CHECK(contains(error.what(), "used in link_main.cu and defined in no input"));
  }
}

TEST_CASE("a symbol defined in two files is one link error naming it and both files") {
  ptxrt::Program program = two_file_program();
  program.add_source(program.sources()[1].text, "link_math_copy.cu", link_data);
  const ptxrt::Error error = link_error(program, cubin_for("sm_90"));
  CHECK(error.kind() == ptxrt::ErrorKind::link);
  CHECK(contains(error.what(),
                 "symbol scale_value(float) (_Z11scale_valuef) is defined twice: in link_math.cu "
                 "and in link_math_copy.cu"));
  const ptxrt::Error with_lto = link_error(program, cubin_for("sm_90", true));
  CHECK(with_lto.kind() == ptxrt::ErrorKind::link);
  CHECK(contains(with_lto.what(), "is defined twice, again in link_math_copy.cu"));
}

TEST_CASE("inputs that are not device objects are refused naming them") {
  using ptxrt::testing::check_error;
  ScratchDirectory scratch;
  check_error([&] { ptxrt::DeviceObject::from_file(scratch.path() / "absent.a"); },
              ptxrt::ErrorKind::io,
              "device object '" + (scratch.path() / "absent.a").string() + "': no such file");
  // A FIFO where a library should be: refused at once, not read until a writer comes.
  REQUIRE(::mkfifo((scratch.path() / "fifo.a").c_str(), 0600) == 0);
  check_error([&] { ptxrt::DeviceObject::from_file(scratch.path() / "fifo.a"); },
              ptxrt::ErrorKind::io, "is a FIFO, not a regular file");
  // A host program (the CLI) and a text file, each under a device-library name.
  fs::copy_file(PTXRT_CLI_PATH, scratch.path() / "host.a");
  check_error([&] { ptxrt::DeviceObject::from_file(scratch.path() / "host.a"); },
              ptxrt::ErrorKind::invalid_argument,
              "host.a is not a device object: it is an ELF file for the host (machine 62) without "
              "device code");
  fs::copy_file(link_data / "link_shared.cuh", scratch.path() / "text.a");
  check_error([&] { ptxrt::DeviceObject::from_file(scratch.path() / "text.a"); },
              ptxrt::ErrorKind::invalid_argument,
              "text.a is not a device object: it is a text file, and not PTX");
}

TEST_CASE("a failed link leaves nothing in the disk cache") {
  ScratchDirectory scratch;
  ptxrt::Jit jit({.cache_directory = scratch.path() / "cache"});
  ptxrt::Program program = ptxrt::Program::from_file(link_data / "link_main.cu");
  program.add_source("__device__ int unrelated = 1;\n", "unrelated.cu");
  CHECK_THROWS_AS(jit.image(program, cubin_for("sm_90")), ptxrt::Error);
  CHECK(jit.disk_cache()->entries().empty());
  const auto linked = jit.image(two_file_program(), cubin_for("sm_90", true));
  CHECK(jit.disk_cache()->entries().size() == 1);
  CHECK(jit.disk_cache()->load(linked->key)->data == linked->data);
}

TEST_CASE("a link error is one line naming each problem and every input") {
  ptxrt::Program program = ptxrt::Program::from_file(link_data / "link_main.cu");
  program.add_source("__device__ int unrelated = 1;\n", "unrelated.cu");
  const ptxrt::Error error = link_error(program, cubin_for("sm_90"));
  CHECK(std::string(error.what()).find('\n') == std::string::npos);
  CHECK(contains(error.what(), "used in link_main.cu and defined in no input; undefined symbol"));
  CHECK(contains(error.what(), "(inputs: link_main.cu (CUBIN), unrelated.cu (CUBIN))"));
}

TEST_CASE("a DeviceObject whose fields were set by hand is checked before nvJitLink reads it") {
  const ptxrt::Image math =
      ptxrt::compile(ptxrt::Program::from_file(link_data / "link_math.cu"), cubin_for("sm_90"));
  ptxrt::Program program = ptxrt::Program::from_file(link_data / "link_main.cu");
  program.add_device_object({"cut.cubin", math.data.substr(0, 64), ptxrt::DeviceObjectKind::cubin});
  ptxrt::testing::check_error([&] { ptxrt::compile(program, cubin_for("sm_90")); },
                              ptxrt::ErrorKind::invalid_argument,
                              "cut.cubin: malformed CUBIN: program header table");
  ptxrt::Program mislabelled = ptxrt::Program::from_file(link_data / "link_main.cu");
  mislabelled.add_device_object({"math.ptx", math.data, ptxrt::DeviceObjectKind::ptx});
  ptxrt::testing::check_error([&] { ptxrt::compile(mislabelled, cubin_for("sm_90")); },
                              ptxrt::ErrorKind::invalid_argument,
                              "math.ptx is given to the device linker as PTX, but its content is "
                              "CUBIN");
}

TEST_CASE(
    "ptxrt's own --emit ltoir output links in with --lto, and without it is refused naming it") {
  ScratchDirectory scratch;
  const fs::path ltoir = scratch.path() / "math.ltoir";
  const std::vector<std::string> environment{"PTXRT_CACHE_DIR=" +
                                             (scratch.path() / "cache").string()};
  auto cli = [&](std::vector<std::string> arguments) {
    arguments.insert(arguments.begin(), PTXRT_CLI_PATH);
    return ptxrt::testing::run_process(arguments, environment);
  };
  auto result = cli({"compile", (link_data / "link_math.cu").string(), "--arch", "sm_90", "--emit",
                     "ltoir", "-o", ltoir.string()});
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  CHECK(ptxrt::DeviceObject::from_file(ltoir).kind == ptxrt::DeviceObjectKind::ltoir);
  const fs::path cubin = scratch.path() / "linked.cubin";
  result = cli({"compile", (link_data / "link_main.cu").string(), "--lto", "--link", ltoir.string(),
                "--arch", "sm_90", "--emit", "cubin", "-o", cubin.string()});
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  CHECK(ptxrt::read_cubin_resources(ptxrt::detail::read_regular_file(cubin, "CUBIN")).at(0).name ==
        "affine_clamp");
  result = cli({"compile", (link_data / "link_main.cu").string(), "--link", ltoir.string(),
                "--arch", "sm_90", "--emit", "cubin", "-o", cubin.string()});
  CHECK(result.exit_code == 1);
  CHECK(contains(result.output,
                 "math.ltoir is LTO-IR, which links only with link-time "
                 "optimisation (--lto, CompileOptions::lto)"));
}

TEST_CASE("an object from nvcc -dlto links in with ptxrt compile --lto") {
  ScratchDirectory scratch;
  const fs::path object = scratch.path() / "link_math.o";
  if (!run_toolkit_program("nvcc", {"-dc", "-gencode=arch=compute_90,code=lto_90",
                                    (link_data / "link_math.cu").string(), "-o", object.string()}))
    return;
  const fs::path cubin = scratch.path() / "linked.cubin";
  const auto result = ptxrt::testing::run_process(
      {PTXRT_CLI_PATH, "compile", (link_data / "link_main.cu").string(), "--lto", "--link",
       object.string(), "--arch", "sm_90", "--emit", "cubin", "-o", cubin.string()},
      {"PTXRT_CACHE_DIR=" + (scratch.path() / "cache").string()});
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  CHECK(ptxrt::read_cubin_resources(ptxrt::detail::read_regular_file(cubin, "CUBIN")).at(0).name ==
        "affine_clamp");
}
