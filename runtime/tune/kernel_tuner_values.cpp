#include "tune/kernel_tuner_values.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <string>

#include "ptxrt/core/error.hpp"
#include "support/bounded_json.hpp"
#include "support/quoted.hpp"

namespace ptxrt::detail {

using json = KernelTunerReader::json;

void KernelTunerReader::refuse(const std::string& field, const std::string& problem) const {
  throw Error(ErrorKind::invalid_argument,
              "Kernel Tuner file " + quoted_path(path_) + ": " + field + ": " + problem);
}

const json& KernelTunerReader::member(const json& object, const std::string& field,
                                      const char* name) const {
  const auto found = object.find(name);
  if (found == object.end())
    refuse(field.empty() ? std::string(name) : field + "." + name, "missing");
  return *found;
}

const json& KernelTunerReader::object(const json& value, const std::string& field) const {
  if (!value.is_object()) refuse(field, "expected an object, got " + describe_json(value));
  return value;
}

const json& KernelTunerReader::list(const json& value, const std::string& field) const {
  if (!value.is_array()) refuse(field, "expected a list, got " + describe_json(value));
  return value;
}

namespace {

// Names and values reach terminals and tables: no control bytes.
bool printable_text(std::string_view text) {
  return std::none_of(text.begin(), text.end(),
                      [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == '\x7f'; });
}

}  // namespace

std::string KernelTunerReader::name(const json& value, const std::string& field) const {
  if (!value.is_string() || value.get_ref<const std::string&>().empty() ||
      value.get_ref<const std::string&>().size() > max_kernel_tuner_name_bytes ||
      !printable_text(value.get_ref<const std::string&>()))
    refuse(field, "expected a name of 1 to " + std::to_string(max_kernel_tuner_name_bytes) +
                      " bytes without control characters, got " + describe_json(value));
  return value.get<std::string>();
}

std::vector<std::string> KernelTunerReader::names(const json& value,
                                                  const std::string& field) const {
  list(value, field);
  if (value.empty() || value.size() > max_kernel_tuner_parameters)
    refuse(field, "expected 1 to " + std::to_string(max_kernel_tuner_parameters) +
                      " parameters, got " + std::to_string(value.size()));
  std::vector<std::string> result;
  for (std::size_t i = 0; i < value.size(); ++i) {
    result.push_back(name(value[i], field + "[" + std::to_string(i) + "]"));
    if (std::count(result.begin(), result.end(), result.back()) > 1)
      refuse(field, ptxrt::detail::quoted(result.back()) + " is listed twice");
  }
  return result;
}

std::vector<std::int64_t> KernelTunerReader::problem_size(const json& value,
                                                          const std::string& field) const {
  const auto extent = [&](const json& item, const std::string& at) {
    if (!item.is_number_integer() || item.get<std::int64_t>() < 0)
      refuse(at, "expected a count of 0 or more, got " + describe_json(item));
    return item.get<std::int64_t>();
  };
  std::vector<std::int64_t> size;
  if (value.is_array()) {
    if (value.size() > 8)
      refuse(field, "expected at most 8 dimensions, got " + describe_json(value));
    for (std::size_t i = 0; i < value.size(); ++i)
      size.push_back(extent(value[i], field + "[" + std::to_string(i) + "]"));
  } else if (value.is_number()) {
    size.push_back(extent(value, field));
  } else if (value.is_string() && value != "callable") {
    std::string_view text = value.get_ref<const std::string&>();
    while (!text.empty() && size.size() <= 8) {
      const std::size_t cross = std::min(text.find('x'), text.size());
      const std::optional<std::int64_t> dimension = integer_text(text.substr(0, cross));
      if (!dimension || *dimension < 0)
        refuse(field, "expected dimensions such as \"1024x1024\", got " + describe_json(value));
      size.push_back(*dimension);
      text.remove_prefix(std::min(cross + 1, text.size()));
    }
  } else if (!value.is_string()) {
    refuse(field, "expected a list of counts, a count or a string, got " + describe_json(value));
  }
  return size;
}

double KernelTunerReader::positive(const json& value, const std::string& field) const {
  if (!value.is_number() || !std::isfinite(value.get<double>()) || !(value.get<double>() > 0.0))
    refuse(field, "expected a finite number above 0, got " + describe_json(value));
  return value.get<double>();
}

std::vector<double> KernelTunerReader::times(const json& value, const std::string& field) const {
  list(value, field);
  std::vector<double> result;
  for (std::size_t i = 0; i < value.size(); ++i)
    result.push_back(positive(value[i], field + "[" + std::to_string(i) + "]"));
  return result;
}

void KernelTunerReader::check_count(std::size_t count, const std::string& field) const {
  if (count > max_kernel_tuner_configs)
    refuse(field, std::to_string(count) + " configs exceed the cap of " +
                      std::to_string(max_kernel_tuner_configs));
}

std::string KernelTunerReader::value_text(const json& value, const std::string& field) const {
  if (value.is_boolean()) return value.get<bool>() ? "True" : "False";
  if (value.is_number_integer() || value.is_number_unsigned()) return value.dump();
  if (value.is_number_float() && std::isfinite(value.get<double>())) return value.dump();
  if (value.is_string() &&
      value.get_ref<const std::string&>().size() <= max_kernel_tuner_name_bytes &&
      printable_text(value.get_ref<const std::string&>()))
    return value.get<std::string>();
  refuse(field, "expected a number, true/false or a string of at most " +
                    std::to_string(max_kernel_tuner_name_bytes) +
                    " bytes without control characters, got " + describe_json(value));
}

std::vector<KernelTunerParameter> KernelTunerReader::cache_parameters(const json& document) const {
  const std::vector<std::string> keys =
      names(member(document, "", "tune_params_keys"), "tune_params_keys");
  const json& values = object(member(document, "", "tune_params"), "tune_params");
  for (const auto& [name, list] : values.items())
    if (std::find(keys.begin(), keys.end(), name) == keys.end())
      refuse("tune_params." + printable(name), "is not among tune_params_keys");
  std::vector<KernelTunerParameter> parameters;
  for (const std::string& key : keys) {
    const std::string field = "tune_params." + key;
    const json& listed = list(member(values, "tune_params", key.c_str()), field);
    if (listed.empty() || listed.size() > max_kernel_tuner_configs)
      refuse(field, "expected 1 to " + std::to_string(max_kernel_tuner_configs) + " values, got " +
                        std::to_string(listed.size()));
    KernelTunerParameter parameter{.name = key};
    for (std::size_t i = 0; i < listed.size(); ++i) {
      parameter.values.push_back(value_text(listed[i], field + "[" + std::to_string(i) + "]"));
      if (std::count(parameter.values.begin(), parameter.values.end(), parameter.values.back()) > 1)
        refuse(field, ptxrt::detail::quoted(parameter.values.back()) + " is listed twice");
    }
    parameters.push_back(std::move(parameter));
  }
  return parameters;
}

TuningConfig KernelTunerReader::config_of(const json& entry, const std::string& field,
                                          std::vector<KernelTunerParameter>& parameters,
                                          bool learn) const {
  if (learn)
    for (const auto& item : entry.items()) {
      const std::string& name = item.key();
      if (std::none_of(parameters.begin(), parameters.end(),
                       [&](const KernelTunerParameter& p) { return p.name == name; }))
        refuse(field + "." + printable(name), "is not a tuned parameter");
    }
  std::vector<Define> defines;
  for (KernelTunerParameter& parameter : parameters) {
    const std::string at = field + "." + parameter.name;
    std::string text = value_text(member(entry, field, parameter.name.c_str()), at);
    if (std::find(parameter.values.begin(), parameter.values.end(), text) ==
        parameter.values.end()) {
      if (!learn) refuse(at, ptxrt::detail::quoted(text) + " is not among tune_params' values");
      if (parameter.values.size() >= max_kernel_tuner_configs)
        refuse(at, "more values than the cap of " + std::to_string(max_kernel_tuner_configs));
      parameter.values.push_back(text);
    }
    defines.push_back({parameter.name, std::move(text)});
  }
  return TuningConfig(std::move(defines));
}

void KernelTunerReader::check_cache_key(const std::string& key, const TuningConfig& config,
                                        const std::vector<KernelTunerParameter>& parameters,
                                        const std::string& field) const {
  std::vector<std::string> values;
  for (const KernelTunerParameter& parameter : parameters)
    for (const Define& define : config.defines())
      if (define.name == parameter.name) values.push_back(define.value);
  std::string joined;
  for (const std::string& value : values) joined += (joined.empty() ? "" : ",") + value;
  if (joined == key) return;
  // Python may print a float otherwise than JSON does (1e-05, 1.0): the same number still matches.
  std::vector<std::string> parts;
  std::string_view rest = key;
  for (std::size_t comma; (comma = rest.find(',')) != std::string_view::npos;
       rest.remove_prefix(comma + 1))
    parts.emplace_back(rest.substr(0, comma));
  parts.emplace_back(rest);
  const auto same_number = [](const std::string& a, const std::string& b) {
    double x = 0.0, y = 0.0;
    const auto [end_a, error_a] = std::from_chars(a.data(), a.data() + a.size(), x);
    const auto [end_b, error_b] = std::from_chars(b.data(), b.data() + b.size(), y);
    return error_a == std::errc() && error_b == std::errc() && end_a == a.data() + a.size() &&
           end_b == b.data() + b.size() && x == y;
  };
  if (parts.size() == values.size() &&
      std::equal(parts.begin(), parts.end(), values.begin(),
                 [&](const std::string& part, const std::string& value) {
                   return part == value || same_number(part, value);
                 }))
    return;
  refuse(field,
         "the key does not match the entry's values (" + ptxrt::detail::quoted(joined) + ")");
}

void KernelTunerReader::check_unique(const std::vector<Measurement>& measurements,
                                     const std::string& field) const {
  std::set<std::string> seen;
  for (const Measurement& measurement : measurements)
    if (!seen.insert(measurement.config.describe()).second)
      refuse(field, ptxrt::detail::quoted(measurement.config.describe()) + " is listed twice");
}

std::string KernelTunerReader::objective_of(const json& result, const std::string& field) const {
  const json& objectives = list(result.at("objectives"), field + ".objectives");
  if (objectives.empty()) return "time";
  return name(objectives[0], field + ".objectives[0]");
}

double KernelTunerReader::correctness(const json& result, const std::string& field) const {
  if (!result.contains("correctness")) return 1.0;
  const json& value = result.at("correctness");
  if (!value.is_number() || !std::isfinite(value.get<double>()))
    refuse(field + ".correctness", "expected a number, got " + describe_json(value));
  return value.get<double>();
}

std::vector<double> KernelTunerReader::t4_runtimes(const json& result,
                                                   const std::string& field) const {
  if (!result.contains("times")) return {};
  const json& times_object = object(result.at("times"), field + ".times");
  if (!times_object.contains("runtimes")) return {};
  return times(times_object.at("runtimes"), field + ".times.runtimes");
}

std::optional<double> KernelTunerReader::t4_measurement(const json& result,
                                                        const std::string& field,
                                                        const std::string& name) const {
  if (!result.contains("measurements")) return std::nullopt;
  const json& measurements = list(result.at("measurements"), field + ".measurements");
  for (std::size_t i = 0; i < measurements.size(); ++i) {
    const std::string at = field + ".measurements[" + std::to_string(i) + "]";
    const json& measurement = object(measurements[i], at);
    if (member(measurement, at, "name") == name)
      return positive(member(measurement, at, "value"), at + ".value");
  }
  return std::nullopt;
}

std::optional<std::int64_t> integer_text(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

json kernel_tuner_value(const std::string& text) {
  if (const std::optional<std::int64_t> integer = integer_text(text)) return *integer;
  if (text == "True" || text == "False") return text == "True";
  double number = 0.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error == std::errc() && end == text.data() + text.size() && !text.empty() &&
      std::isfinite(number))
    return number;
  return text;
}

}  // namespace ptxrt::detail
