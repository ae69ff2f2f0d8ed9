// Internal: the fields of a Kernel Tuner file (ptxrt/tune/kernel_tuner_files.hpp) read one by one,
// each checked for the type, range and size the format gives it; a field that is not refuses
// the file with an Error (invalid_argument) naming the file and the field
// ("Kernel Tuner file 'x.json': cache["16,2"].time: expected ...").
//
// Thread safety: a reader holds only the file's path; use it from any thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ptxrt/tune/kernel_tuner_files.hpp"

namespace ptxrt::detail {

// The most configs, parameters and values a file may hold, and the longest name or value.
inline constexpr std::size_t max_kernel_tuner_configs = 1'000'000;
inline constexpr std::size_t max_kernel_tuner_parameters = 64;
inline constexpr std::size_t max_kernel_tuner_name_bytes = 256;

class KernelTunerReader {
 public:
  using json = nlohmann::ordered_json;

  explicit KernelTunerReader(std::filesystem::path path) : path_(std::move(path)) {}

  [[noreturn]] void refuse(const std::string& field, const std::string& problem) const;

  const json& member(const json& object, const std::string& field, const char* name) const;
  const json& object(const json& value, const std::string& field) const;
  const json& list(const json& value, const std::string& field) const;
  // A non-empty string of at most max_kernel_tuner_name_bytes.
  std::string name(const json& value, const std::string& field) const;
  std::vector<std::string> names(const json& value, const std::string& field) const;
  // [m, n, k], n, "MxNxK" (a results file's) or "callable" (nothing).
  std::vector<std::int64_t> problem_size(const json& value, const std::string& field) const;
  // A finite number above 0.
  double positive(const json& value, const std::string& field) const;
  // A list of positive numbers (run times in ms).
  std::vector<double> times(const json& value, const std::string& field) const;
  void check_count(std::size_t count, const std::string& field) const;

  // tune_params_keys with the values tune_params lists for each.
  std::vector<KernelTunerParameter> cache_parameters(const json& document) const;
  // The config `entry` holds: a value for each of `parameters`, which must be among its values
  // unless `learn` (a file without tune_params), where new ones are added. With `learn`, a
  // name that is not a parameter is refused too.
  TuningConfig config_of(const json& entry, const std::string& field,
                         std::vector<KernelTunerParameter>& parameters, bool learn) const;
  // A cache entry's key is its values joined by commas, as Python prints them.
  void check_cache_key(const std::string& key, const TuningConfig& config,
                       const std::vector<KernelTunerParameter>& parameters,
                       const std::string& field) const;
  // No config measured twice.
  void check_unique(const std::vector<Measurement>& measurements, const std::string& field) const;

  // A T4 result's objectives[0], its correctness (1 when absent), times.runtimes (none when
  // absent) and the value of the measurement named `name`.
  std::string objective_of(const json& result, const std::string& field) const;
  double correctness(const json& result, const std::string& field) const;
  std::vector<double> t4_runtimes(const json& result, const std::string& field) const;
  std::optional<double> t4_measurement(const json& result, const std::string& field,
                                       const std::string& name) const;

 private:
  std::string value_text(const json& value, const std::string& field) const;

  std::filesystem::path path_;
};

// `text` as an integer, when it is one ("16", "-2"; not "16.0").
std::optional<std::int64_t> integer_text(std::string_view text);
// A config value as Kernel Tuner writes it: an integer or a finite number as a number, True
// and False as booleans, anything else as a string.
nlohmann::ordered_json kernel_tuner_value(const std::string& text);

}  // namespace ptxrt::detail
