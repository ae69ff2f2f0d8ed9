#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "ptxrt/core/error.hpp"
#include "ptxrt/core/program.hpp"
#include "ptxrt/core/target.hpp"

namespace {

ptxrt::Image tiny_image(const std::string& arch, ptxrt::ImageFormat format) {
  ptxrt::CompileOptions options;
  options.target = {arch, format, {}};
  return ptxrt::compile(
      ptxrt::Program::from_string("extern \"C\" __global__ void fill(float* p) { p[0] = 1.0f; }\n",
                                  "tiny.cu"),
      options);
}

std::string driver_error(const ptxrt::Image& image, int driver_version, int major, int minor) {
  try {
    ptxrt::check_image_for_driver(image, driver_version, major, minor);
  } catch (const ptxrt::Error& error) {
    CHECK(error.kind() == ptxrt::ErrorKind::invalid_argument);
    return error.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("supported_architectures lists NVRTC's architectures in ascending order") {
  std::vector<int> architectures = ptxrt::supported_architectures();
  REQUIRE_FALSE(architectures.empty());
  CHECK(std::is_sorted(architectures.begin(), architectures.end()));
  CHECK(std::find(architectures.begin(), architectures.end(), 90) != architectures.end());
}

TEST_CASE("select_target picks the device's exact CUBIN, or its PTX on request") {
  ptxrt::Target cubin = ptxrt::select_target(9, 0);
  CHECK(cubin.arch == "sm_90");
  CHECK(cubin.format == ptxrt::ImageFormat::cubin);
  CHECK(cubin.note.empty());
  ptxrt::Target ptx = ptxrt::select_target(8, 6, ptxrt::ImageFormat::ptx);
  CHECK(ptx.arch == "compute_86");
  CHECK(ptx.format == ptxrt::ImageFormat::ptx);
}

TEST_CASE("a device newer than NVRTC gets PTX for the newest supported architecture") {
  const int newest = ptxrt::supported_architectures().back();
  ptxrt::Target target = ptxrt::select_target(15, 0);
  CHECK(target.arch == "compute_" + std::to_string(newest));
  CHECK(target.format == ptxrt::ImageFormat::ptx);
  CHECK(target.note.find("compute capability 15.0 is unknown to NVRTC") == 0);
  CHECK(target.note.find("which the driver JIT-compiles") != std::string::npos);

  ptxrt::CompileOptions options;
  options.target = target;
  ptxrt::Image image =
      ptxrt::compile(ptxrt::Program::from_string("extern \"C\" __global__ void k() {}\n"), options);
  CHECK(image.format == ptxrt::ImageFormat::ptx);
  CHECK(image.compile_log.starts_with(target.note));
}

TEST_CASE("a device between known architectures falls back to the one below it") {
  ptxrt::Target target = ptxrt::select_target(10, 1, ptxrt::ImageFormat::cubin, {75, 80, 100, 120});
  CHECK(target.arch == "compute_100");
  CHECK(target.format == ptxrt::ImageFormat::ptx);
  CHECK_THROWS_AS(ptxrt::select_target(7, 0, ptxrt::ImageFormat::cubin, {75, 80}), ptxrt::Error);
}

TEST_CASE("parse_architecture reads sm_XY, its a and f variants and compute_XY") {
  const std::optional<ptxrt::Architecture> cubin = ptxrt::parse_architecture("sm_90a");
  REQUIRE(cubin.has_value());
  CHECK(cubin->sm == 90);
  CHECK(cubin->suffix == 'a');
  CHECK_FALSE(cubin->virtual_architecture);
  CHECK(cubin->compute_capability() == "9.0");

  const std::optional<ptxrt::Architecture> family = ptxrt::parse_architecture("sm_121f");
  REQUIRE(family.has_value());
  CHECK(family->cc_major() == 12);
  CHECK(family->cc_minor() == 1);
  CHECK(family->suffix == 'f');

  const std::optional<ptxrt::Architecture> ptx = ptxrt::parse_architecture("compute_80");
  REQUIRE(ptx.has_value());
  CHECK(ptx->sm == 80);
  CHECK(ptx->suffix == '\0');
  CHECK(ptx->virtual_architecture);
}

TEST_CASE("parse_architecture refuses what is not an architecture name") {
  for (const char* name : {"", "sm_", "sm_9", "sm_1000", "sm_90b", "sm_9x", "compute_", "sm90",
                           "gfx90a", "sm_90,sm_80", " sm_90", "sm_-90"}) {
    CAPTURE(name);
    CHECK_FALSE(ptxrt::parse_architecture(name).has_value());
  }
}

TEST_CASE("cuda_version_for_ptx_isa follows the PTX ISA release history") {
  CHECK(ptxrt::cuda_version_for_ptx_isa(9, 0) == 13000);
  CHECK(ptxrt::cuda_version_for_ptx_isa(8, 8) == 12090);
  CHECK(ptxrt::cuda_version_for_ptx_isa(8, 7) == 12080);
  CHECK(ptxrt::cuda_version_for_ptx_isa(8, 6) == 12070);
  CHECK(ptxrt::cuda_version_for_ptx_isa(8, 5) == 12050);
  CHECK(ptxrt::cuda_version_for_ptx_isa(8, 4) == 12040);
  CHECK(ptxrt::cuda_version_for_ptx_isa(7, 8) == 11080);
  CHECK_FALSE(ptxrt::cuda_version_for_ptx_isa(9, 9).has_value());
}

TEST_CASE("cubin_sm_version reads the SM version from the ELF flags") {
  for (int sm : {75, 80, 90, 120}) {
    CAPTURE(sm);
    CHECK(ptxrt::cubin_sm_version(
              tiny_image("sm_" + std::to_string(sm), ptxrt::ImageFormat::cubin).data) == sm);
  }
  CHECK_FALSE(ptxrt::cubin_sm_version("not an elf").has_value());
}

TEST_CASE("check_image_for_driver rejects PTX newer than the driver can JIT") {
  ptxrt::Image image = tiny_image("compute_80", ptxrt::ImageFormat::ptx);
  REQUIRE(image.data.find(".version 9.0") != std::string::npos);
  CHECK(driver_error(image, 13000, 9, 0) == "accepted");
  CHECK(driver_error(image, 12080, 9, 0) ==
        "the PTX of tiny.cu is PTX ISA 9.0, which needs a driver for CUDA 13.0 or newer, but this "
        "driver is CUDA 12.8 (loading would fail with CUDA_ERROR_UNSUPPORTED_PTX_VERSION): update "
        "the NVIDIA driver, or compile with an NVRTC no newer than CUDA 12.8");
}

TEST_CASE("check_image_for_driver rejects PTX for a newer architecture than the device") {
  ptxrt::Image image = tiny_image("compute_90", ptxrt::ImageFormat::ptx);
  CHECK(driver_error(image, 13000, 12, 0) == "accepted");
  CHECK(driver_error(image, 13000, 8, 6) ==
        "PTX of tiny.cu was built for compute_90 (compute capability 9.0) and cannot run on a "
        "device of compute capability 8.6: compile it for sm_86 (CUBIN) or compute_86 (PTX) "
        "instead");
}

TEST_CASE("check_image_for_driver rejects a CUBIN built for another architecture") {
  ptxrt::Image image = tiny_image("sm_80", ptxrt::ImageFormat::cubin);
  CHECK(driver_error(image, 13000, 8, 0) == "accepted");
  CHECK(driver_error(image, 13000, 8, 6) == "accepted");  // same major, newer minor
  CHECK(driver_error(image, 13000, 9, 0) ==
        "CUBIN of tiny.cu was built for sm_80 (compute capability 8.0) and cannot run on a device "
        "of compute capability 9.0: compile it for sm_90 (CUBIN) or compute_90 (PTX) instead");
  ptxrt::Image specific = tiny_image("sm_90a", ptxrt::ImageFormat::cubin);
  CHECK(driver_error(specific, 13000, 9, 0) == "accepted");
  ptxrt::Image blackwell_specific = tiny_image("sm_100a", ptxrt::ImageFormat::cubin);
  CHECK(driver_error(blackwell_specific, 13000, 10, 0) == "accepted");
  CHECK(driver_error(blackwell_specific, 13000, 10, 3)
            .starts_with("CUBIN of tiny.cu was built for sm_100a (compute capability 10.0a) and "
                         "cannot run on a "
                         "device of compute capability 10.3"));
  image.data = "garbage";
  CHECK(driver_error(image, 13000, 8, 0) ==
        "the CUBIN of tiny.cu is not a CUDA ELF image (7 bytes)");
}
