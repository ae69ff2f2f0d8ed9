// Links in a child process (CompileOptions::isolated_link): the same image and the same errors as
// a link in this process, and one error naming the caller's LTO-IR when the child ends without
// an answer. Stand-ins that crash, hang or print "LLVM ERROR" play a nvJitLink that a damaged
// input took down, since no intact toolkit does that on demand.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "error_checks.hpp"
#include "jit/isolated_link.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/program.hpp"

namespace fs = std::filesystem;
using ptxrt::ErrorKind;
using ptxrt::testing::check_error;

namespace {

const fs::path link_data = fs::path(PTXRT_SOURCE_DIR) / "tests/data/link";

std::string math_ltoir() {
  ptxrt::CompileOptions options;
  options.target = {"sm_90", ptxrt::ImageFormat::ltoir, {}};
  return ptxrt::compile(ptxrt::Program::from_file(link_data / "link_math.cu"), options).data;
}

ptxrt::CompileOptions linked_cubin(bool isolated) {
  ptxrt::CompileOptions options;
  options.target = {"sm_90", ptxrt::ImageFormat::cubin, {}};
  options.lto = true;
  options.isolated_link = isolated;
  return options;
}

// link_main.cu and the caller's `objects`, as compile() would hand them to the linker.
ptxrt::detail::LinkRequest request_with(std::vector<ptxrt::detail::LinkInput> objects) {
  ptxrt::detail::LinkRequest request{"link_main.cu+objects", "sm_90", ptxrt::ImageFormat::cubin,
                                     true, false, {}, {}};
  request.inputs.push_back({NVJITLINK_INPUT_LTOIR, "IR", "link_main.cu", false});
  for (ptxrt::detail::LinkInput& object : objects) request.inputs.push_back(std::move(object));
  return request;
}

std::vector<std::string> shell(const std::string& script) { return {"/bin/sh", "-c", script}; }

}  // namespace

TEST_CASE("an isolated link gives the image and the errors a link in this process gives") {
  ptxrt::Program program = ptxrt::Program::from_file(link_data / "link_main.cu");
  program.add_device_object(ptxrt::DeviceObject::from_bytes(math_ltoir(), "math.ltoir"));
  const ptxrt::Image here = ptxrt::compile(program, linked_cubin(false));
  const ptxrt::Image isolated = ptxrt::compile(program, linked_cubin(true));
  CHECK(isolated.data == here.data);
  // The same report but for ptxas' own compile time.
  CHECK(isolated.compile_log.find("Used 16 registers") != std::string::npos);

  // link_main.cu alone leaves affine_clamp's helper undefined.
  const ptxrt::Program alone = ptxrt::Program::from_file(link_data / "link_main.cu");
  std::string expected;
  try {
    ptxrt::compile(alone, linked_cubin(false));
  } catch (const ptxrt::Error& error) {
    expected = error.what();
    try {
      ptxrt::compile(alone, linked_cubin(true));
      FAIL("the isolated link of " << alone.name() << " succeeded");
    } catch (const ptxrt::Error& isolated_error) {
      CHECK(isolated_error.kind() == error.kind());
      CHECK(std::string(isolated_error.what()) == expected);
      CHECK(isolated_error.call() == error.call());
      CHECK(isolated_error.code() == error.code());
    }
  }
  CHECK(expected.find("undefined") != std::string::npos);

  // A damaged CUBIN is refused by the child's checks, in their words.
  std::string cubin = "\x7f" "ELF";
  cubin.resize(64, '\0');
  check_error(
      [&] {
        ptxrt::detail::link_in_child_process(
            {"cut.cubin", "sm_90", ptxrt::ImageFormat::cubin, false, false, {},
             {{NVJITLINK_INPUT_CUBIN, cubin, "cut.cubin", true}}},
            ptxrt::detail::isolated_link_command(), std::chrono::seconds(60));
      },
      ErrorKind::invalid_argument, "cut.cubin: malformed ELF");
}

TEST_CASE("a link process that crashes, hangs or ends in LLVM ERROR is one error naming the "
          "caller's LTO-IR") {
  const auto request = request_with({{NVJITLINK_INPUT_LTOIR, "IR", "b.ltoir", true}});
  auto link_with = [&](const std::vector<std::string>& command, std::chrono::milliseconds limit) {
    return [&request, command, limit] {
      ptxrt::detail::link_in_child_process(request, command, limit);
    };
  };
  check_error(link_with(shell("kill -SEGV $$"), std::chrono::seconds(60)),
              ErrorKind::invalid_argument,
              "b.ltoir: damaged LTO-IR: nvJitLink crashed linking it (SIGSEGV)");
  check_error(link_with(shell("echo 'some trace' >&2; echo 'LLVM ERROR: Invalid record' >&2; "
                              "exit 1"),
                        std::chrono::seconds(60)),
              ErrorKind::invalid_argument,
              "b.ltoir: damaged LTO-IR: nvJitLink failed linking it (LLVM ERROR: Invalid record)");
  check_error(link_with(shell("exit 3"), std::chrono::seconds(60)), ErrorKind::invalid_argument,
              "b.ltoir: damaged LTO-IR: the link process exited with code 3 without an answer");

  const auto started = std::chrono::steady_clock::now();
  check_error(link_with(shell("exec sleep 30"), std::chrono::milliseconds(300)),
              ErrorKind::invalid_argument,
              "b.ltoir: damaged LTO-IR: nvJitLink ran past 300 ms linking it");
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));

  // An answer cut short is no answer.
  check_error(link_with(shell("printf 'ok\\n100\\nabc'"), std::chrono::seconds(60)),
              ErrorKind::invalid_argument, "b.ltoir: damaged LTO-IR: the link process exited");
}

TEST_CASE("with several inputs that may hold LTO-IR, a crashed link names each of them") {
  const auto request = request_with({{NVJITLINK_INPUT_LTOIR, "IR", "b.ltoir", true},
                                     {NVJITLINK_INPUT_CUBIN, "ELF", "c.cubin", true},
                                     {NVJITLINK_INPUT_LIBRARY, "!<arch>", "libd.a", true}});
  check_error(
      [&] {
        ptxrt::detail::link_in_child_process(request, shell("kill -ABRT $$"),
                                             std::chrono::seconds(60));
      },
      ErrorKind::invalid_argument,
      "linking link_main.cu+objects for sm_90: b.ltoir, libd.a may be damaged: nvJitLink crashed "
      "linking them (SIGABRT)");
}
