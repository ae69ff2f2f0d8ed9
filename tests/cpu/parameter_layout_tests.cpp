// Parameter layouts read from images without a GPU: from CUBINs for sm_80 and sm_90, from PTX,
// and from a fatbin, each compared with the host compiler's layout of the same parameter lists
// (tests/support/parameter_layout_kernels.hpp). tests/gpu/parameter_layout_tests.cpp compares the
// same layouts with the driver's.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "error_checks.hpp"
#include "parameter_layout_kernels.hpp"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/core/parameter_layout.hpp"

using namespace ptxrt;
using ptxrt::testing::check_error;
using ptxrt::testing::layouts::entry_symbol;
using ptxrt::testing::layouts::expected_entries;
using ptxrt::testing::layouts::ExpectedEntry;
using ptxrt::testing::layouts::make_fatbin;

namespace {

Image compile_layout_kernels(const std::string& arch, ImageFormat format) {
  CompileOptions options{.name_expressions = {ptxrt::testing::layouts::template_expression}};
  options.target = {arch, format, {}};
  return compile(Program::from_string(ptxrt::testing::layouts::source, "layouts.cu"), options);
}

void check_layouts(const std::vector<EntryParameters>& read, const Image& image) {
  REQUIRE(read.size() == expected_entries().size());
  for (const ExpectedEntry& expected : expected_entries()) {
    const std::string name = entry_symbol(image, expected.name);
    CAPTURE(name);
    auto found = std::find_if(read.begin(), read.end(),
                              [&](const EntryParameters& entry) { return entry.name == name; });
    REQUIRE(found != read.end());
    REQUIRE(found->parameters.size() == expected.parameters.size());
    for (std::size_t i = 0; i < expected.parameters.size(); ++i) {
      CAPTURE(i);
      CHECK(found->parameters[i].offset == expected.parameters[i].offset);
      CHECK(found->parameters[i].bytes == expected.parameters[i].bytes);
    }
  }
}

std::vector<EntryParameters> read_present(std::string_view image) {
  std::optional<std::vector<EntryParameters>> read = read_parameter_layouts(image);
  REQUIRE(read.has_value());
  return *read;
}

}  // namespace

TEST_CASE("parameter layouts read from sm_80 and sm_90 CUBINs are the host's struct layouts") {
  for (const char* arch : {"sm_80", "sm_90"}) {
    CAPTURE(arch);
    const Image cubin = compile_layout_kernels(arch, ImageFormat::cubin);
    check_layouts(read_present(cubin.data), cubin);
  }
}

TEST_CASE("parameter layouts computed from PTX .entry lists are the host's struct layouts") {
  const Image ptx = compile_layout_kernels("compute_90", ImageFormat::ptx);
  check_layouts(read_present(ptx.data), ptx);
}

TEST_CASE(
    "a fatbin's layouts come from its CUBIN, and with every member compressed there are none") {
  const Image cubin = compile_layout_kernels("sm_90", ImageFormat::cubin);
  const Image ptx = compile_layout_kernels("compute_90", ImageFormat::ptx);
  check_layouts(read_present(make_fatbin(cubin, ptx)), cubin);
  CHECK_FALSE(read_parameter_layouts(make_fatbin(cubin, ptx, "--compress-all")).has_value());
}

TEST_CASE(
    "PTX layouts: comments and strings are skipped, and a pointee's .align is not the "
    "parameter's") {
  struct Arguments {
    std::uint32_t count;
    std::uint32_t pointer;  // .u32 .ptr .align 16: aligned as a .u32, not to 16
    std::uint8_t flag;
    double value;
  };
  const std::string ptx = R"(
.version 8.0
.target sm_90
.address_size 64
.file 1 "/* not a comment .entry fake( */"
// .entry commented_out(.param .u8 x)
/* .entry also_commented_out(.param .u8 y) */
.visible .entry k(.param .u32 k_count, .param .u32 .ptr .global .align 16 k_pointer,
                  .param .u8 k_flag /* trailing */, .param .f64 k_value)
{
  ret;
}
.entry bare
{
  ret;
}
)";
  const std::vector<EntryParameters> read = read_present(ptx);
  REQUIRE(read.size() == 2);
  CHECK(read[0].name == "k");
  CHECK(read[0].parameters ==
        std::vector<ParameterInfo>{{offsetof(Arguments, count), sizeof(std::uint32_t)},
                                   {offsetof(Arguments, pointer), sizeof(std::uint32_t)},
                                   {offsetof(Arguments, flag), sizeof(std::uint8_t)},
                                   {offsetof(Arguments, value), sizeof(double)}});
  CHECK(read[1].name == "bare");
  CHECK(read[1].parameters.empty());
}

TEST_CASE("PTX that ptxrt cannot lay out is an invalid_argument naming the entry and parameter") {
  check_error([] { read_parameter_layouts(".entry k(.param .texref t)"); },
              ErrorKind::invalid_argument,
              "malformed PTX: .entry 'k' parameter 0 has type .texref, which ptxrt cannot lay out");
  check_error([] { read_parameter_layouts(".entry k(.param .u32 a, .param .u64 b"); },
              ErrorKind::invalid_argument, ".entry 'k' parameter 1 is not closed with ')'");
  check_error([] { read_parameter_layouts(".entry k(.param .align 4 .b8 a[40000])"); },
              ErrorKind::invalid_argument,
              "40000 is over the 32764 bytes of parameters a kernel can take");
  check_error([] { read_parameter_layouts(".entry k(.param .b8 a[30000], .param .b8 b[3000])"); },
              ErrorKind::invalid_argument,
              ".entry 'k' parameter 1 ends at byte 33000, over the 32764 bytes of parameters");
  check_error([] { read_parameter_layouts(".entry k(.param .align 3 .b8 a[6])"); },
              ErrorKind::invalid_argument, ".align 3 is not a power of two");
  check_error([] { read_parameter_layouts(".entry k(.reg .u32 a)"); }, ErrorKind::invalid_argument,
              "parameter 0 starts with '.reg', not .param");
  check_error([] { read_parameter_layouts(".entry (.param .u32 a)"); }, ErrorKind::invalid_argument,
              ".entry without a name (found '(')");
}

TEST_CASE("a CUBIN whose parameter records skip an ordinal is refused as malformed") {
  Image cubin = compile_layout_kernels("sm_90", ImageFormat::cubin);
  // An EIATTR_KPARAM_INFO record: format 4 (sized), id 0x17, 12 bytes, then u32 index and the
  // u16 ordinal this test raises out of sequence.
  const std::size_t record = cubin.data.find(std::string("\x04\x17\x0c\x00", 4));
  REQUIRE(record != std::string::npos);
  cubin.data[record + 8] = 0x7f;
  check_error([&] { read_parameter_layouts(cubin.data); }, ErrorKind::invalid_argument,
              "malformed CUBIN: kernel '");
  check_error([&] { read_parameter_layouts(cubin.data); }, ErrorKind::invalid_argument,
              "records parameter 127 where parameter");
}
