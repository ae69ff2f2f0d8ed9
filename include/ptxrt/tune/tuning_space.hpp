// What a tuner may vary in a kernel: integer compile-time constants, each with its values, and
// constraints that rule combinations out. Built from a kernel's manifest ("tune" and
// "constraint" lines) or through this API for a user's own kernel:
//
//   TuningSpace space;
//   space.add_parameter("TILE", {8, 16, 32}).add_parameter("VEC", {1, 2, 4});
//   space.add_constraint(Expression::parse("TILE * VEC <= 64"));
//   space.add_constraint("fits the device", [&](const TuningConfig& config) { ... });
//
// Plain values: copy them, and share a built space between threads (the callbacks given to
// add_constraint must then be thread-safe themselves).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ptxrt/core/expression.hpp"
#include "ptxrt/core/image.hpp"
#include "ptxrt/core/manifest.hpp"
#include "ptxrt/core/verdict.hpp"
#include "ptxrt/export.hpp"

namespace ptxrt {

// One point of a space: a value for every parameter, as defines sorted by name, so that two
// configs with the same values compare (and print, and key a database) the same.
class PTXRT_API TuningConfig {
 public:
  TuningConfig() = default;
  explicit TuningConfig(std::vector<Define> defines);

  const std::vector<Define>& defines() const noexcept { return defines_; }
  // The integer value of `name`, or nothing when the config has no such parameter or its value
  // is not an integer.
  std::optional<std::int64_t> find(std::string_view name) const;
  // The same, throwing Error (not_found) naming the config when absent.
  std::int64_t at(std::string_view name) const;
  // "TILE_WIDTH=16 VEC=4" (format_defines).
  std::string describe() const;

  bool operator==(const TuningConfig&) const = default;

 private:
  std::vector<Define> defines_;
};

struct PTXRT_API TuningParameter {
  std::string name;
  std::vector<std::int64_t> values;
  std::optional<std::int64_t> default_value;  // the manifest's default, when it has one
};

// Whether the constraint allows `config`, and if not why.
using ConstraintCheck = std::function<Verdict(const TuningConfig& config)>;

struct PTXRT_API TuningConstraint {
  std::string description;  // "TM * TN <= 128", or what a C++ check says it checks
  ConstraintCheck check;
};

struct PTXRT_API PrunedConfig {
  TuningConfig config;
  std::string reason;
};

struct PTXRT_API SpaceEnumeration {
  std::vector<TuningConfig> allowed;  // in enumeration order
  std::vector<PrunedConfig> pruned;   // with the first constraint each one broke
};

class PTXRT_API TuningSpace {
 public:
  // The most configs enumerate() will list: beyond it a space is a mistake, not a tuning job.
  static constexpr std::uint64_t max_configs = 1'000'000;

  // The manifest's tunable defines with their values and defaults, and its constraints. A
  // constraint may read a define that is not tunable: it sees that define's default.
  static TuningSpace from_manifest(const Manifest& manifest);

  // Throws Error (invalid_argument) for a name that is not a C identifier or is already a
  // parameter, and for an empty or repeated value list.
  TuningSpace& add_parameter(std::string name, std::vector<std::int64_t> values,
                             std::optional<std::int64_t> default_value = std::nullopt);
  // A config is valid where the expression is not 0; a config on which it cannot be evaluated
  // (division by zero, overflow) is pruned with that error as the reason. Throws Error
  // (invalid_argument) when it names neither a parameter nor a fixed value.
  TuningSpace& add_constraint(const Expression& expression);
  TuningSpace& add_constraint(std::string description, ConstraintCheck check);
  // A value the constraints may read that is not varied (a non-tunable define's default).
  TuningSpace& add_fixed_value(std::string name, std::int64_t value);

  const std::vector<TuningParameter>& parameters() const noexcept { return parameters_; }
  const std::vector<TuningConstraint>& constraints() const noexcept { return constraints_; }
  // The number of combinations before constraints; saturates at UINT64_MAX.
  std::uint64_t size() const;
  // Every combination in order (the last parameter added varies fastest), split by the
  // constraints. Throws Error (invalid_argument) when size() exceeds max_configs.
  SpaceEnumeration enumerate() const;
  // Each parameter at its default (else its first value): what an untuned launch uses.
  TuningConfig default_config() const;
  // Whether the constraints allow `config`; if not, the reason is the first one it breaks.
  Verdict admits(const TuningConfig& config) const;
  // Whether `config` is a point of the space: one of each parameter's values for every
  // parameter, and no other define. The constraints are admits()'s to check.
  Verdict contains(const TuningConfig& config) const;
  // "TILE_WIDTH in {4,8,16,32}; TILE_WIDTH * TILE_WIDTH <= 1024": names the space in a tuning
  // database, so that results are not reused once the space changes.
  std::string describe() const;

 private:
  std::vector<TuningParameter> parameters_;
  std::vector<TuningConstraint> constraints_;
  std::vector<std::pair<std::string, std::int64_t>> fixed_;
};

}  // namespace ptxrt
