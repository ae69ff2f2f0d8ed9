// KernelProblem::validate: every name, expression and reference of a problem checked against
// what the problem declares, before anything is compiled or allocated.
#include <algorithm>
#include <string>
#include <vector>

#include "ptxrt/core/manifest.hpp"
#include "ptxrt/tune/kernel_problem.hpp"
#include "support/quoted.hpp"
#include "tune/problem_checks.hpp"
#include "tune/problem_fields.hpp"

namespace ptxrt {

namespace {

using detail::argument_field;
using detail::join_names;
using detail::symbol_field;

// What an expression of one field may read, for the check and its message.
struct Scope {
  std::vector<std::string> sizes;
  std::vector<std::string> defines;
  std::vector<std::string> tunables;  // empty where the field may not depend on the config
  bool config_allowed = true;

  bool knows(const std::string& name) const {
    for (const auto* list : {&sizes, &defines, &tunables}) {
      if (list == &tunables && !config_allowed) continue;
      if (std::find(list->begin(), list->end(), name) != list->end()) return true;
    }
    return false;
  }
  std::string listing() const {
    std::string text = "sizes: " + join_names(sizes) + "; defines: " + join_names(defines);
    if (config_allowed) text += "; tunables: " + join_names(tunables);
    return text;
  }
};

[[noreturn]] void invalid(const std::string& origin, const std::string& what) {
  throw Error(ErrorKind::invalid_argument, origin + ": " + what);
}

void check_names(const std::string& origin, const Expression& expression, const Scope& scope,
                 const std::string& field) {
  for (const std::string& name : expression.names()) {
    if (scope.knows(name)) continue;
    std::string what = field + ": " + detail::quoted(expression.text()) + " names " +
                       detail::printable(name) + ", which is ";
    const bool tunable =
        std::find(scope.tunables.begin(), scope.tunables.end(), name) != scope.tunables.end();
    what += tunable ? "a tunable: this value must not change with the config"
                    : "not among the problem's names";
    invalid(origin, what + " (" + scope.listing() + ")");
  }
}

void check_identifier(const std::string& origin, const std::string& name, const std::string& field,
                      std::vector<std::string>& seen) {
  if (!is_identifier(name))
    invalid(origin, field + ": " + detail::quoted(name) + " is not a C identifier");
  if (std::find(seen.begin(), seen.end(), name) != seen.end())
    invalid(origin, field + ": the name " + name + " is used twice");
  seen.push_back(name);
}

template <typename Item>
const Item* find_named(const std::vector<Item>& items, std::string_view name) {
  for (const Item& item : items)
    if (item.name == name) return &item;
  return nullptr;
}
}  // namespace

void KernelProblem::validate() const {
  const std::string origin = this->origin();
  std::vector<std::string> seen;
  Scope scope;
  for (const auto& [size, fallback] : sizes_) {
    check_identifier(origin, size, "sizes", seen);
    if (fallback && (*fallback < 1 || *fallback > max_problem_size))
      invalid(origin, "sizes." + detail::printable(size) + ": the default " +
                          std::to_string(*fallback) + " is not a whole number from 1 to 2^62");
    scope.sizes.push_back(size);
  }
  Scope fixed = scope;
  fixed.config_allowed = false;
  for (const auto& [define, value] : defines_) {
    check_identifier(origin, define, "defines", seen);
    check_names(origin, value, fixed, "defines." + define);
    fixed.defines.push_back(define);
  }
  scope.defines = fixed.defines;
  for (const TuningParameter& tunable : tunables_) {
    check_identifier(origin, tunable.name, "tune", seen);
    scope.tunables.push_back(tunable.name);
  }
  fixed.tunables = scope.tunables;
  if (tunables_.empty()) invalid(origin, "tune: the problem has no tunable to vary");
  for (std::size_t i = 0; i < constraints_.size(); ++i)
    check_names(origin, constraints_[i], scope, "constraints[" + std::to_string(i) + "]");
  const auto check_geometry = [&](const LaunchGeometry& geometry, const std::string& prefix,
                                  const Scope& names) {
    for (int d = 0; d < 3; ++d) {
      check_names(origin, geometry.block[d], names, prefix + "block[" + std::to_string(d) + "]");
      check_names(origin, geometry.grid[d], names, prefix + "grid[" + std::to_string(d) + "]");
    }
    check_names(origin, geometry.shared_bytes, names, prefix + "shared_memory");
  };
  // The block first: a grid divisor that nobody wrote defaults to the block's dimension.
  for (int d = 0; d < 3; ++d)
    check_names(origin, geometry_.block[d], scope, "block[" + std::to_string(d) + "]");
  for (const auto& [field, part] : grid_divide_parts_) check_names(origin, part, scope, field);
  check_geometry(geometry_, "", scope);
  std::vector<std::string> argument_names;
  for (std::size_t i = 0; i < arguments_.size(); ++i) {
    const ProblemArgument& argument = arguments_[i];
    const std::string field = argument_field(i);
    check_identifier(origin, argument.name, field + ".name", argument_names);
    if (argument.kind == ProblemArgument::Kind::buffer) {
      if (!argument.count) invalid(origin, field + ": a buffer needs a count");
      check_names(origin, *argument.count, fixed, field + ".count");
      if (const Verdict fits = argument.init.suits(argument.type); !fits)
        invalid(origin, field + ": " + fits.reason());
    } else if (argument.value) {
      check_names(origin, *argument.value, scope, field + ".value");
    } else if (!argument.number) {
      invalid(origin, field + ": a scalar needs a value");
    }
  }
  if (arguments_.empty()) invalid(origin, "arguments: the kernel is given no argument");
  std::vector<std::string> symbol_names;
  for (std::size_t i = 0; i < symbols_.size(); ++i) {
    const ProblemSymbol& symbol = symbols_[i];
    const std::string field = symbol_field(i);
    if (std::find(symbol_names.begin(), symbol_names.end(), symbol.name) != symbol_names.end())
      invalid(origin, field + ": the symbol " + symbol.name + " is filled twice");
    symbol_names.push_back(symbol.name);
    if (!symbol.from_argument.empty()) {
      const ProblemArgument* source = find_named(arguments_, symbol.from_argument);
      if (source == nullptr || source->kind != ProblemArgument::Kind::buffer)
        invalid(origin, field + ".from: '" + symbol.from_argument +
                            "' is not a buffer argument (arguments: " + join_names(argument_names) +
                            ")");
    } else if (!symbol.count) {
      invalid(origin, field + ": a symbol needs 'from' an argument or a count of its own");
    } else {
      check_names(origin, *symbol.count, fixed, field + ".count");
      if (const Verdict fits = symbol.init.suits(symbol.type); !fits)
        invalid(origin, field + ": " + fits.reason());
    }
  }
  const bool any_output = std::any_of(arguments_.begin(), arguments_.end(),
                                      [](const ProblemArgument& a) { return a.is_output(); });
  if (verification_.kind != ProblemVerification::Kind::none && !any_output)
    invalid(origin, "verify: no argument has the role output, so there is nothing to compare");
  if (verification_.kind == ProblemVerification::Kind::reference_kernel) {
    const ReferenceKernel& reference = verification_.kernel;
    if (reference.entry.empty()) invalid(origin, "verify.reference: no kernel named");
    Scope with_defines = scope;
    for (const auto& [define, value] : reference.defines) {
      check_names(origin, value, scope, "verify.reference.defines." + define);
      with_defines.defines.push_back(define);
    }
    check_geometry(reference.geometry, "verify.reference.", with_defines);
    for (const std::string& argument : reference.arguments)
      if (!find_named(arguments_, argument))
        invalid(origin, "verify.reference.arguments: '" + argument +
                            "' is not an argument (arguments: " + join_names(argument_names) + ")");
  } else if (verification_.kind == ProblemVerification::Kind::reference_config) {
    for (const TuningParameter& tunable : tunables_) {
      const std::optional<std::int64_t> value = verification_.config.find(tunable.name);
      if (!value ||
          std::find(tunable.values.begin(), tunable.values.end(), *value) == tunable.values.end())
        invalid(origin, "verify.config: " + tunable.name +
                            " needs one of its values (the config is " +
                            verification_.config.describe() + ")");
    }
  } else if (verification_.kind == ProblemVerification::Kind::files) {
    for (const auto& [output, file] : verification_.files) {
      const ProblemArgument* argument = find_named(arguments_, output);
      if (argument == nullptr || !argument->is_output())
        invalid(origin, "verify.files: '" + output + "' is not an output argument");
    }
  }
  check_names(origin, rate_.work, scope, rate_field_);
  for (const ProblemMetric& metric : metrics_)
    check_names(origin, metric.work, scope, "metrics." + metric.name + ".work");
  detail::validate_checks_and_sources(
      *this, [&](const Expression& expression, const std::string& field, detail::NameScope names) {
        check_names(origin, expression, names == detail::NameScope::fixed ? fixed : scope, field);
      });
}

}  // namespace ptxrt
