#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "ptxrt/core/error.hpp"
#include "ptxrt/core/manifest.hpp"

namespace {

constexpr const char* matmul_source =
    "// Tiled matrix multiply.\n"
    "// ptxrt: define TILE_WIDTH in {4, 8, 16, 32} default 16\n"
    "// ptxrt: define ELEMENT in {float, double}\n"
    "// ptxrt: entry matmul_tiled one thread per C element, TILE_WIDTH^2 threads per block\n"
    "extern \"C\" __global__ void matmul_tiled() {}\n";

std::string error_message(const std::string& source) {
  try {
    ptxrt::parse_manifest(source, "matmul_tiled.cu");
  } catch (const ptxrt::Error& error) {
    CHECK(error.kind() == ptxrt::ErrorKind::invalid_argument);
    return error.what();
  }
  return "no error";
}

std::string validation_error(std::vector<ptxrt::Define> defines) {
  ptxrt::Manifest manifest = ptxrt::parse_manifest(matmul_source, "matmul_tiled.cu");
  try {
    ptxrt::validate_defines(manifest, defines);
  } catch (const ptxrt::Error& error) {
    CHECK(error.kind() == ptxrt::ErrorKind::invalid_argument);
    return error.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("parse_manifest reads defines with their values and default, and entries") {
  ptxrt::Manifest manifest = ptxrt::parse_manifest(matmul_source, "matmul_tiled.cu");
  CHECK(manifest.file == "matmul_tiled.cu");
  REQUIRE(manifest.defines.size() == 2);
  CHECK(manifest.defines[0].name == "TILE_WIDTH");
  CHECK(manifest.defines[0].values == std::vector<std::string>{"4", "8", "16", "32"});
  CHECK(manifest.defines[0].default_value == "16");
  CHECK(manifest.defines[0].line == 2);
  CHECK(manifest.defines[1].name == "ELEMENT");
  CHECK(manifest.defines[1].values == std::vector<std::string>{"float", "double"});
  CHECK_FALSE(manifest.defines[1].default_value.has_value());
  REQUIRE(manifest.entries.size() == 1);
  CHECK(manifest.entries[0].name == "matmul_tiled");
  CHECK(manifest.entries[0].description ==
        "one thread per C element, TILE_WIDTH^2 threads per block");
  CHECK(manifest.entries[0].line == 4);
  CHECK(manifest.find_define("ELEMENT") == &manifest.defines[1]);
  CHECK(manifest.find_define("OTHER") == nullptr);
}

TEST_CASE("parse_manifest ignores ordinary comments and code") {
  ptxrt::Manifest manifest =
      ptxrt::parse_manifest("// a comment\nint x; // ptxrt: define X in {1}\n", "k.cu");
  CHECK(manifest.defines.empty());
  CHECK(manifest.entries.empty());
}

TEST_CASE("a malformed manifest line is an error naming the file and the line") {
  CHECK(error_message("\n// ptxrt: define TILE_WIDTH {4, 8}\n") ==
        "matmul_tiled.cu:2: expected 'in {values}' after TILE_WIDTH");
  CHECK(error_message("// ptxrt: define TILE_WIDTH in {4, 8\n") ==
        "matmul_tiled.cu:1: missing '}' after the values of TILE_WIDTH");
  CHECK(error_message("// ptxrt: define TILE_WIDTH in {4, 8} default 3\n") ==
        "matmul_tiled.cu:1: default 3 of TILE_WIDTH is not one of 4, 8");
  CHECK(error_message("// ptxrt: define 2D in {4}\n") ==
        "matmul_tiled.cu:1: define name '2D' is not a C identifier");
  CHECK(error_message("// ptxrt: define A in {4,,8}\n") ==
        "matmul_tiled.cu:1: empty value in the set of A");
  CHECK(error_message("// ptxrt: define A in {4 8}\n") ==
        "matmul_tiled.cu:1: value '4 8' of A contains a space (missing comma?)");
  CHECK(error_message("// ptxrt: define A in {4}\n// ptxrt: define A in {8}\n") ==
        "matmul_tiled.cu:2: A is declared twice");
  CHECK(error_message("\n\n// ptxrt: kernel matmul\n") ==
        "matmul_tiled.cu:3: unknown directive 'kernel' (expected 'define NAME in {...}', "
        "'entry NAME ...', 'tune NAME ...', 'constraint EXPRESSION' or 'problem JSON')");
  CHECK(error_message("// ptxrt: entry\n") == "matmul_tiled.cu:1: entry name '' is not a C identifier");
}

TEST_CASE("validate_defines fills in defaults for missing declared constants") {
  ptxrt::Manifest manifest = ptxrt::parse_manifest(matmul_source, "matmul_tiled.cu");
  std::vector<ptxrt::Define> defines{{"ELEMENT", "float"}};
  ptxrt::validate_defines(manifest, defines);
  CHECK(defines == std::vector<ptxrt::Define>{{"ELEMENT", "float"}, {"TILE_WIDTH", "16"}});
}

TEST_CASE("validate_defines rejects a value outside the declared set") {
  CHECK(validation_error({{"ELEMENT", "float"}, {"TILE_WIDTH", "33"}}) ==
        "TILE_WIDTH=33 is not valid for matmul_tiled.cu: expected one of 4, 8, 16, 32");
}

TEST_CASE("validate_defines rejects a missing constant that has no default") {
  CHECK(validation_error({{"TILE_WIDTH", "8"}}) ==
        "ELEMENT is required by matmul_tiled.cu (one of float, double)");
}

TEST_CASE("validate_defines passes undeclared defines through and rejects duplicates") {
  ptxrt::Manifest manifest = ptxrt::parse_manifest(matmul_source, "matmul_tiled.cu");
  std::vector<ptxrt::Define> defines{{"ELEMENT", "double"}, {"DEBUG", ""}, {"UNROLL", "anything"}};
  ptxrt::validate_defines(manifest, defines);
  CHECK(defines.size() == 4);
  CHECK(validation_error({{"ELEMENT", "float"}, {"ELEMENT", "double"}}) ==
        "ELEMENT is defined twice (float and double) for matmul_tiled.cu");
  CHECK(validation_error({{"ELEMENT", "float"}, {"9LIVES", "1"}}) ==
        "define name '9LIVES' is not a C identifier");
}

TEST_CASE("parse_define splits NAME=VALUE and checks the name") {
  CHECK(ptxrt::parse_define("TILE_WIDTH=16") == ptxrt::Define{"TILE_WIDTH", "16"});
  CHECK(ptxrt::parse_define("EXPR=a=b") == ptxrt::Define{"EXPR", "a=b"});
  CHECK(ptxrt::parse_define("DEBUG") == ptxrt::Define{"DEBUG", ""});
  CHECK_THROWS_WITH_AS(ptxrt::parse_define("TILE-WIDTH=16"),
                       "define 'TILE-WIDTH=16': name 'TILE-WIDTH' is not a C identifier "
                       "(letters, digits and '_', not starting with a digit)",
                       ptxrt::Error);
  CHECK_THROWS_AS(ptxrt::parse_define("=16"), ptxrt::Error);
}

TEST_CASE("format_defines writes NAME=VALUE pairs separated by spaces") {
  CHECK(ptxrt::format_defines({{"A", "1"}, {"DEBUG", ""}}) == "A=1 DEBUG");
  CHECK(ptxrt::format_defines({}) == "(none)");
}
