#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "apps/common/builtin_kernels.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/program.hpp"
#include "ptxrt/tune/tuning_space.hpp"

namespace {

std::vector<std::string> described(const std::vector<ptxrt::TuningConfig>& configs) {
  std::vector<std::string> texts;
  for (const ptxrt::TuningConfig& config : configs) texts.push_back(config.describe());
  return texts;
}

std::string space_error(const std::function<void(ptxrt::TuningSpace&)>& build) {
  ptxrt::TuningSpace space;
  try {
    build(space);
  } catch (const ptxrt::Error& error) {
    CHECK(error.kind() == ptxrt::ErrorKind::invalid_argument);
    return error.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a space enumerates the cartesian product, the last parameter fastest") {
  ptxrt::TuningSpace space;
  space.add_parameter("A", {1, 2}).add_parameter("B", {10, 20, 30});
  CHECK(space.size() == 6);
  const ptxrt::SpaceEnumeration all = space.enumerate();
  CHECK(described(all.allowed) == std::vector<std::string>{"A=1 B=10", "A=1 B=20", "A=1 B=30",
                                                           "A=2 B=10", "A=2 B=20", "A=2 B=30"});
  CHECK(all.pruned.empty());
}

TEST_CASE("constraints prune configs with the first broken constraint as the reason") {
  ptxrt::TuningSpace space;
  space.add_parameter("A", {1, 2, 4}).add_parameter("B", {1, 2, 4});
  space.add_constraint(ptxrt::Expression::parse("A * B <= 4"));
  space.add_constraint("A is not B", [](const ptxrt::TuningConfig& config) {
    return config.at("A") == config.at("B") ? ptxrt::Verdict::refused("A equals B")
                                            : ptxrt::Verdict();
  });
  const ptxrt::SpaceEnumeration result = space.enumerate();
  CHECK(described(result.allowed) ==
        std::vector<std::string>{"A=1 B=2", "A=1 B=4", "A=2 B=1", "A=4 B=1"});
  REQUIRE(result.pruned.size() == 5);
  CHECK(result.pruned[0].config.describe() == "A=1 B=1");
  CHECK(result.pruned[0].reason == "A equals B");
  CHECK(result.pruned[2].config.describe() == "A=2 B=4");
  CHECK(result.pruned[2].reason == "breaks constraint A * B <= 4");
}

TEST_CASE("admits answers yes, or no with the first constraint a config breaks") {
  ptxrt::TuningSpace space;
  space.add_parameter("A", {1, 2, 4});
  space.add_constraint(ptxrt::Expression::parse("A <= 2"));
  space.add_constraint("A is not 2", [](const ptxrt::TuningConfig& config) {
    return config.at("A") == 2 ? ptxrt::Verdict::refused("A is 2") : ptxrt::Verdict();
  });
  CHECK(space.admits(ptxrt::TuningConfig(std::vector<ptxrt::Define>{{"A", "1"}})));
  CHECK(space.admits(ptxrt::TuningConfig(std::vector<ptxrt::Define>{{"A", "2"}})) ==
        ptxrt::Verdict::refused("A is 2"));
  const ptxrt::Verdict four =
      space.admits(ptxrt::TuningConfig(std::vector<ptxrt::Define>{{"A", "4"}}));
  CHECK_FALSE(four.allowed());
  CHECK(four.reason() == "breaks constraint A <= 2");
}

TEST_CASE("contains answers whether a config is a point of the space, whatever its constraints") {
  ptxrt::TuningSpace space;
  space.add_parameter("A", {1, 2, 4}).add_parameter("B", {8, 16});
  space.add_constraint(ptxrt::Expression::parse("A <= 2"));
  const auto config = [](std::vector<ptxrt::Define> defines) {
    return ptxrt::TuningConfig(std::move(defines));
  };
  CHECK(space.contains(config({{"A", "4"}, {"B", "8"}})));
  CHECK(space.contains(config({{"A", "3"}, {"B", "8"}})) ==
        ptxrt::Verdict::refused("A=3 is not one of {1,2,4}"));
  CHECK(space.contains(config({{"A", "1"}})) ==
        ptxrt::Verdict::refused("it gives no integer value of B"));
  CHECK(space.contains(config({{"A", "1"}, {"B", "x"}})) ==
        ptxrt::Verdict::refused("it gives no integer value of B"));
  CHECK(space.contains(config({{"A", "1"}, {"B", "8"}, {"C", "1"}})) ==
        ptxrt::Verdict::refused("C is not a parameter of the space"));
}

TEST_CASE("a constraint that cannot be evaluated prunes the config with the error") {
  ptxrt::TuningSpace space;
  space.add_parameter("A", {0, 2});
  space.add_constraint(ptxrt::Expression::parse("8 / A >= 1"));
  const ptxrt::SpaceEnumeration result = space.enumerate();
  CHECK(described(result.allowed) == std::vector<std::string>{"A=2"});
  REQUIRE(result.pruned.size() == 1);
  CHECK(result.pruned[0].reason == "expression '8 / A >= 1': 8 / 0 divides by zero");
}

TEST_CASE("a space from a manifest varies its tunable defines and fixes the others") {
  const ptxrt::Program program = ptxrt::Program::from_string(
      "// ptxrt: define TILE in {8, 16, 32} default 16\n"
      "// ptxrt: define VEC in {1, 2, 4} default 2\n"
      "// ptxrt: define UNROLL in {1, 4} default 4\n"
      "// ptxrt: tune TILE VEC\n"
      "// ptxrt: constraint TILE * VEC * UNROLL <= 128\n",
      "k.cu");
  const ptxrt::TuningSpace space = ptxrt::TuningSpace::from_manifest(program.manifest());
  CHECK(space.describe() == "TILE in {8,16,32}; VEC in {1,2,4}; TILE * VEC * UNROLL <= 128");
  CHECK(space.default_config().describe() == "TILE=16 VEC=2");
  CHECK(described(space.enumerate().allowed) ==
        std::vector<std::string>{"TILE=8 VEC=1", "TILE=8 VEC=2", "TILE=8 VEC=4", "TILE=16 VEC=1",
                                 "TILE=16 VEC=2", "TILE=32 VEC=1"});
}

TEST_CASE("the builtin kernels declare their tuning spaces") {
  const auto space_of = [](const char* name) {
    return ptxrt::TuningSpace::from_manifest(ptxrt::apps::builtin_program(name).manifest());
  };
  CHECK(space_of("matmul_tiled").describe() == "TILE_WIDTH in {4,8,16,32}");
  CHECK(space_of("closest_pair").describe() == "BASE in {32,64,128,256,512,1024}");
  const ptxrt::TuningSpace sgemm = space_of("sgemm");
  CHECK(sgemm.parameters().size() == 11);
  // 4·4·2·3·3·3·3·4 combinations of the tiles and the ring, 2 loads of A, 14 splits of K, by
  // FFMA or on the tensor cores.
  CHECK(sgemm.size() == 580608);
  const ptxrt::SpaceEnumeration configs = sgemm.enumerate();
  CHECK(configs.allowed.size() + configs.pruned.size() == 580608);
  // The default config is in the space the manifest's constraints allow.
  const ptxrt::TuningConfig default_config = sgemm.default_config();
  CHECK(std::find(configs.allowed.begin(), configs.allowed.end(), default_config) !=
        configs.allowed.end());
}

TEST_CASE("configs compare by value whatever the order their defines were given in") {
  const ptxrt::TuningConfig a({{"B", "2"}, {"A", "1"}});
  const ptxrt::TuningConfig b({{"A", "1"}, {"B", "2"}});
  CHECK(a == b);
  CHECK(a.describe() == "A=1 B=2");
  CHECK(a.find("A") == 1);
  CHECK_FALSE(a.find("C"));
  CHECK_THROWS_WITH_AS(a.at("C"), "tuning config A=1 B=2 has no integer C", ptxrt::Error);
}

TEST_CASE("bad parameters and constraints are errors naming them") {
  CHECK(space_error([](ptxrt::TuningSpace& s) { s.add_parameter("2X", {1}); }) ==
        "tuning parameter '2X' is not a C identifier");
  CHECK(space_error([](ptxrt::TuningSpace& s) { s.add_parameter("X", {}); }) ==
        "tuning parameter X has no values");
  CHECK(space_error([](ptxrt::TuningSpace& s) {
          s.add_parameter("X", {1, 2, 1});
        }) == "tuning parameter X lists 1 twice");
  CHECK(space_error([](ptxrt::TuningSpace& s) {
          s.add_parameter("X", {1}).add_parameter("X", {2});
        }) == "tuning parameter X is added twice");
  CHECK(space_error([](ptxrt::TuningSpace& s) {
          s.add_parameter("X", {1, 2}, 3);
        }) == "default 3 of X is not one of {1,2}");
  CHECK(space_error([](ptxrt::TuningSpace& s) {
          s.add_parameter("X", {1}).add_constraint(ptxrt::Expression::parse("X < Y"));
        }) == "constraint 'X < Y' names Y, which is neither a tuning parameter nor a fixed value");
  CHECK(space_error([](ptxrt::TuningSpace& s) {
          for (char p = '0'; p < '7'; ++p)
            s.add_parameter(std::string{'P', p}, {1, 2, 3, 4, 5, 6, 7, 8});
          s.enumerate();
        }) ==
        "the tuning space has 2097152 configs, over the limit of 1000000 (P0: 8 values, "
        "P1: 8 values, P2: 8 values, P3: 8 values, P4: 8 values, P5: 8 values, P6: 8 "
        "values)");
}
