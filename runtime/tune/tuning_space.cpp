#include "ptxrt/tune/tuning_space.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <numeric>

#include "ptxrt/core/error.hpp"
#include "support/quoted.hpp"

namespace ptxrt {

namespace {

std::optional<std::int64_t> parse_integer(std::string_view text) {
  std::int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string join(const std::vector<std::int64_t>& values) {
  std::string text;
  for (std::int64_t value : values) {
    if (!text.empty()) text += ',';
    text += std::to_string(value);
  }
  return text;
}

}  // namespace

TuningConfig::TuningConfig(std::vector<Define> defines) : defines_(std::move(defines)) {
  std::sort(defines_.begin(), defines_.end(),
            [](const Define& a, const Define& b) { return a.name < b.name; });
}

std::optional<std::int64_t> TuningConfig::find(std::string_view name) const {
  for (const Define& define : defines_)
    if (define.name == name) return parse_integer(define.value);
  return std::nullopt;
}

std::int64_t TuningConfig::at(std::string_view name) const {
  std::optional<std::int64_t> value = find(name);
  if (!value)
    throw Error(ErrorKind::not_found,
                "tuning config " + describe() + " has no integer " + std::string(name));
  return *value;
}

std::string TuningConfig::describe() const { return format_defines(defines_); }

TuningSpace TuningSpace::from_manifest(const Manifest& manifest) {
  TuningSpace space;
  for (const ManifestDefine& declared : manifest.defines) {
    if (declared.tunable) {
      std::vector<std::int64_t> values;
      for (const std::string& value : declared.values) values.push_back(*parse_integer(value));
      std::optional<std::int64_t> fallback;
      if (declared.default_value) fallback = parse_integer(*declared.default_value);
      space.add_parameter(declared.name, std::move(values), fallback);
    } else if (declared.default_value) {
      if (std::optional<std::int64_t> value = parse_integer(*declared.default_value))
        space.add_fixed_value(declared.name, *value);
    }
  }
  for (const ManifestConstraint& constraint : manifest.constraints)
    space.add_constraint(constraint.expression);
  return space;
}

TuningSpace& TuningSpace::add_parameter(std::string name, std::vector<std::int64_t> values,
                                        std::optional<std::int64_t> default_value) {
  if (!is_identifier(name))
    throw Error(ErrorKind::invalid_argument,
                "tuning parameter " + detail::quoted(name) + " is not a C identifier");
  for (const TuningParameter& parameter : parameters_)
    if (parameter.name == name)
      throw Error(ErrorKind::invalid_argument, "tuning parameter " + name + " is added twice");
  if (values.empty())
    throw Error(ErrorKind::invalid_argument, "tuning parameter " + name + " has no values");
  // Sorted, a repeat sits beside itself: n log n, where a search of the values before each one
  // took minutes for a list of a million.
  std::vector<std::int64_t> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  if (const auto repeated = std::adjacent_find(sorted.begin(), sorted.end());
      repeated != sorted.end())
    throw Error(ErrorKind::invalid_argument,
                "tuning parameter " + name + " lists " + std::to_string(*repeated) + " twice");
  if (default_value && std::find(values.begin(), values.end(), *default_value) == values.end())
    throw Error(ErrorKind::invalid_argument, "default " + std::to_string(*default_value) + " of " +
                                                 name + " is not one of {" +
                                                 detail::printable(join(values), 200) + "}");
  parameters_.push_back({std::move(name), std::move(values), default_value});
  return *this;
}

TuningSpace& TuningSpace::add_fixed_value(std::string name, std::int64_t value) {
  fixed_.emplace_back(std::move(name), value);
  return *this;
}

TuningSpace& TuningSpace::add_constraint(const Expression& expression) {
  for (const std::string& name : expression.names()) {
    const bool parameter = std::any_of(parameters_.begin(), parameters_.end(),
                                       [&](const TuningParameter& p) { return p.name == name; });
    const bool fixed = std::any_of(fixed_.begin(), fixed_.end(),
                                   [&](const auto& entry) { return entry.first == name; });
    if (!parameter && !fixed)
      throw Error(ErrorKind::invalid_argument,
                  "constraint " + detail::quoted(expression.text()) + " names " +
                      detail::printable(name) +
                      ", which is neither a tuning parameter nor a fixed value");
  }
  // The check captures a copy of the lookup state it needs, not `this`: spaces are copied.
  auto fixed = fixed_;
  return add_constraint(expression.text(), [expression, fixed](const TuningConfig& config) {
    const auto lookup = [&](std::string_view name) -> std::optional<std::int64_t> {
      if (std::optional<std::int64_t> value = config.find(name)) return value;
      for (const auto& [fixed_name, value] : fixed)
        if (fixed_name == name) return value;
      return std::nullopt;
    };
    try {
      if (expression.evaluate(lookup) != 0) return Verdict();
      return Verdict::refused("breaks constraint " + expression.text());
    } catch (const Error& error) {
      return Verdict::refused(error.what());
    }
  });
}

TuningSpace& TuningSpace::add_constraint(std::string description, ConstraintCheck check) {
  constraints_.push_back({std::move(description), std::move(check)});
  return *this;
}

std::uint64_t TuningSpace::size() const {
  std::uint64_t product = 1;
  for (const TuningParameter& parameter : parameters_)
    if (__builtin_mul_overflow(product, parameter.values.size(), &product))
      return std::numeric_limits<std::uint64_t>::max();
  return product;
}

Verdict TuningSpace::admits(const TuningConfig& config) const {
  for (const TuningConstraint& constraint : constraints_)
    if (Verdict allowed = constraint.check(config); !allowed) return allowed;
  return {};
}

Verdict TuningSpace::contains(const TuningConfig& config) const {
  for (const Define& define : config.defines())
    if (std::none_of(parameters_.begin(), parameters_.end(),
                     [&](const TuningParameter& p) { return p.name == define.name; }))
      return Verdict::refused(detail::printable(define.name) + " is not a parameter of the space");
  for (const TuningParameter& parameter : parameters_) {
    const std::optional<std::int64_t> value = config.find(parameter.name);
    if (!value) return Verdict::refused("it gives no integer value of " + parameter.name);
    if (std::find(parameter.values.begin(), parameter.values.end(), *value) ==
        parameter.values.end())
      return Verdict::refused(parameter.name + "=" + std::to_string(*value) + " is not one of {" +
                              detail::printable(join(parameter.values), 200) + "}");
  }
  return {};
}

SpaceEnumeration TuningSpace::enumerate() const {
  const std::uint64_t count = size();
  if (count > max_configs) {
    // The parameters by their number of values, not every value: a space this large lists
    // megabytes of them.
    std::string counts;
    for (const TuningParameter& parameter : parameters_)
      counts += (counts.empty() ? "" : ", ") + parameter.name + ": " +
                std::to_string(parameter.values.size()) + " values";
    throw Error(ErrorKind::invalid_argument,
                "the tuning space has " +
                    (count == std::numeric_limits<std::uint64_t>::max() ? std::string("over 2^64")
                                                                        : std::to_string(count)) +
                    " configs, over the limit of " + std::to_string(max_configs) + " (" +
                    detail::printable(counts, 300) + ")");
  }
  // Each value's text once, and the parameters in the order a config keeps its defines (by
  // name), so that the hundreds of thousands of configs of a large space are only copies.
  std::vector<std::vector<std::string>> texts;
  for (const TuningParameter& parameter : parameters_) {
    std::vector<std::string> text;
    for (std::int64_t value : parameter.values) text.push_back(std::to_string(value));
    texts.push_back(std::move(text));
  }
  std::vector<std::size_t> by_name(parameters_.size());
  std::iota(by_name.begin(), by_name.end(), std::size_t{0});
  std::sort(by_name.begin(), by_name.end(), [&](std::size_t a, std::size_t b) {
    return parameters_[a].name < parameters_[b].name;
  });
  SpaceEnumeration result;
  std::vector<std::size_t> digits(parameters_.size(), 0);
  for (std::uint64_t index = 0; index < count; ++index) {
    std::vector<Define> defines;
    defines.reserve(parameters_.size());
    for (std::size_t p : by_name) defines.push_back({parameters_[p].name, texts[p][digits[p]]});
    TuningConfig config(std::move(defines));
    if (const Verdict allowed = admits(config); !allowed)
      result.pruned.push_back({std::move(config), allowed.reason()});
    else
      result.allowed.push_back(std::move(config));
    // Odometer: the last parameter turns fastest.
    for (std::size_t p = parameters_.size(); p-- > 0;) {
      if (++digits[p] < parameters_[p].values.size()) break;
      digits[p] = 0;
    }
  }
  return result;
}

TuningConfig TuningSpace::default_config() const {
  std::vector<Define> defines;
  for (const TuningParameter& parameter : parameters_)
    defines.push_back({parameter.name,
                       std::to_string(parameter.default_value.value_or(parameter.values.front()))});
  return TuningConfig(std::move(defines));
}

std::string TuningSpace::describe() const {
  std::vector<std::string> parts;
  for (const TuningParameter& parameter : parameters_)
    parts.push_back(parameter.name + " in {" + join(parameter.values) + "}");
  for (const TuningConstraint& constraint : constraints_) parts.push_back(constraint.description);
  std::string text;
  for (const std::string& part : parts) {
    if (!text.empty()) text += "; ";
    text += part;
  }
  return text.empty() ? "(empty)" : text;
}

}  // namespace ptxrt
