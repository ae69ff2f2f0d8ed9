#include "ptxrt/tune/kernel_tuner_files.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ptxrt/core/error.hpp"
#include "ptxrt/core/manifest.hpp"
#include "support/bounded_json.hpp"
#include "support/quoted.hpp"
#include "support/regular_file.hpp"
#include "tune/kernel_tuner_values.hpp"

namespace ptxrt {

using json = nlohmann::ordered_json;
using detail::KernelTunerReader;

namespace {

// Kernel Tuner's error markers, in a cache's `time`, and the detail each is imported with: the
// failure's stage first, as ptxrt's own failures say it.
const std::map<std::string, std::string, std::less<>> error_markers{
    {"InvalidConfig", "invalid: Kernel Tuner's InvalidConfig"},
    {"CompilationFailedConfig", "compile: Kernel Tuner's CompilationFailedConfig"},
    {"RuntimeFailedConfig", "runtime: Kernel Tuner's RuntimeFailedConfig"}};

// The time older Kernel Tuner versions wrote for a config that failed, before the markers.
constexpr double legacy_error_time = 1e20;

// T4's invalidity and what it is imported as.
const std::map<std::string, std::pair<MeasurementStatus, std::string>, std::less<>> t4_validity{
    {"correct", {MeasurementStatus::ok, ""}},
    {"correctness", {MeasurementStatus::wrong, "wrong: failed Kernel Tuner's correctness check"}},
    {"compile", {MeasurementStatus::failed, "compile: failed under Kernel Tuner"}},
    {"runtime", {MeasurementStatus::failed, "runtime: failed under Kernel Tuner"}},
    {"timeout", {MeasurementStatus::failed, "runtime: timed out under Kernel Tuner"}},
    {"constraints", {MeasurementStatus::failed, "invalid: Kernel Tuner's InvalidConfig"}}};

// A measurement timed `times` (ms), or `time` alone where the runs are missing.
Measurement timed_measurement(TuningConfig config, double time, std::vector<double> times) {
  Measurement measurement{.config = std::move(config), .status = MeasurementStatus::ok};
  measurement.runs = static_cast<int>(times.size());
  if (times.empty()) {
    measurement.median_ms = time;
    return measurement;
  }
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t middle = sorted.size() / 2;
  measurement.median_ms =
      sorted.size() % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2.0;
  measurement.spread = relative_spread(std::move(times));
  return measurement;
}

void read_objective_rate(const KernelTunerReader& reader, const json& entry,
                         const std::string& field, const std::string& objective,
                         Measurement& measurement) {
  if (objective == "time" || !entry.contains(objective)) return;
  measurement.rate = reader.positive(entry.at(objective), field + "." + objective);
  measurement.rate_unit = objective;
}

// Kernel Tuner writes a cache's header, then one `"key": {...},` per config as it is evaluated,
// and closes the file at the end of the tune; one it never closed is read as if closed.
std::pair<std::string, bool> closed_cache_text(std::string_view text) {
  std::string_view trimmed = text;
  while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.back())))
    trimmed.remove_suffix(1);
  const bool open = trimmed.ends_with(",") || trimmed.ends_with("{");
  if (!open || trimmed.find("\"cache\"") == std::string_view::npos)
    return {std::string(text), false};
  if (trimmed.ends_with(",")) trimmed.remove_suffix(1);
  return {std::string(trimmed) + "}\n}", true};
}

KernelTunerTune read_cache(const KernelTunerReader& reader, const json& document) {
  KernelTunerTune tune;
  tune.kernel = reader.name(reader.member(document, "", "kernel_name"), "kernel_name");
  tune.device = reader.name(reader.member(document, "", "device_name"), "device_name");
  tune.size = reader.problem_size(reader.member(document, "", "problem_size"), "problem_size");
  tune.objective = document.contains("objective")
                       ? reader.name(document.at("objective"), "objective")
                       : std::string("time");
  tune.parameters = reader.cache_parameters(document);
  const json& cache = reader.object(reader.member(document, "", "cache"), "cache");
  reader.check_count(cache.size(), "cache");
  for (const auto& [key, entry] : cache.items()) {
    const std::string field = "cache[" + detail::quoted(key) + "]";
    reader.object(entry, field);
    TuningConfig config = reader.config_of(entry, field, tune.parameters, false);
    reader.check_cache_key(key, config, tune.parameters, field);
    const json& time = reader.member(entry, field, "time");
    const auto marker = time.is_string() ? error_markers.find(time.get_ref<const std::string&>())
                                         : error_markers.end();
    if (!time.is_number() && marker == error_markers.end())
      reader.refuse(field + ".time",
                    "expected a time in ms or InvalidConfig, CompilationFailedConfig or "
                    "RuntimeFailedConfig, got " +
                        detail::describe_json(time));
    if (marker != error_markers.end() ||
        (time.is_number() && time.get<double>() >= legacy_error_time)) {
      tune.measurements.push_back({.config = std::move(config),
                                   .status = MeasurementStatus::failed,
                                   .detail = marker != error_markers.end()
                                                 ? marker->second
                                                 : "runtime: Kernel Tuner's error time 1e20"});
      continue;
    }
    Measurement measurement = timed_measurement(
        std::move(config), reader.positive(time, field + ".time"),
        entry.contains("times") ? reader.times(entry.at("times"), field + ".times")
                                : std::vector<double>{});
    read_objective_rate(reader, entry, field, tune.objective, measurement);
    tune.measurements.push_back(std::move(measurement));
  }
  return tune;
}

std::vector<KernelTunerTune> read_results(const KernelTunerReader& reader, const json& document) {
  const json& version = reader.member(document, "", "version_number");
  if (version != "1.0")
    reader.refuse("version_number", "expected \"1.0\", the version Kernel Tuner writes, got " +
                                        detail::describe_json(version));
  const std::string kernel = reader.name(reader.member(document, "", "kernel_name"), "kernel_name");
  const std::string objective = reader.name(reader.member(document, "", "objective"), "objective");
  const std::vector<std::string> names =
      reader.names(reader.member(document, "", "tunable_parameters"), "tunable_parameters");
  const json& data = reader.list(reader.member(document, "", "data"), "data");
  reader.check_count(data.size(), "data");
  // One tune per device and problem size, in the order first seen.
  std::vector<KernelTunerTune> tunes;
  for (std::size_t i = 0; i < data.size(); ++i) {
    const std::string field = "data[" + std::to_string(i) + "]";
    const json& entry = reader.object(data[i], field);
    const std::string device =
        reader.name(reader.member(entry, field, "device_name"), field + ".device_name");
    const std::vector<std::int64_t> size =
        reader.problem_size(reader.member(entry, field, "problem_size"), field + ".problem_size");
    auto tune = std::find_if(tunes.begin(), tunes.end(), [&](const KernelTunerTune& known) {
      return known.device == device && known.size == size;
    });
    if (tune == tunes.end()) {
      tunes.push_back({.kernel = kernel,
                       .device = device,
                       .size = size,
                       .objective = objective,
                       .whole = false});
      for (const std::string& name : names) tunes.back().parameters.push_back({name, {}});
      tune = tunes.end() - 1;
    }
    const std::string values_field = field + ".tunable_parameters";
    TuningConfig config = reader.config_of(
        reader.object(reader.member(entry, field, "tunable_parameters"), values_field),
        values_field, tune->parameters, true);
    const double value =
        reader.positive(reader.member(entry, field, objective.c_str()), field + "." + objective);
    Measurement measurement = objective == "time" ? timed_measurement(std::move(config), value, {})
                                                  : Measurement{.config = std::move(config),
                                                                .status = MeasurementStatus::ok,
                                                                .rate = value,
                                                                .rate_unit = objective};
    tune->measurements.push_back(std::move(measurement));
  }
  for (const KernelTunerTune& tune : tunes) reader.check_unique(tune.measurements, "data");
  return tunes;
}

KernelTunerTune read_t4(const KernelTunerReader& reader, const json& document) {
  if (document.contains("schema_version")) {
    const json& version = document.at("schema_version");
    if (!version.is_string() || !version.get_ref<const std::string&>().starts_with("1."))
      reader.refuse("schema_version", "expected a 1.x.y version, the T4 schema ptxrt reads, got " +
                                          detail::describe_json(version));
  }
  const json& results = reader.list(reader.member(document, "", "results"), "results");
  reader.check_count(results.size(), "results");
  KernelTunerTune tune{.objective = "time"};
  for (std::size_t i = 0; i < results.size(); ++i) {
    const std::string field = "results[" + std::to_string(i) + "]";
    const json& result = reader.object(results[i], field);
    const json& configuration =
        reader.object(reader.member(result, field, "configuration"), field + ".configuration");
    if (i == 0) {
      for (const auto& [name, value] : configuration.items())
        tune.parameters.push_back({reader.name(name, field + ".configuration"), {}});
      if (tune.parameters.size() > detail::max_kernel_tuner_parameters)
        reader.refuse(field + ".configuration",
                      std::to_string(tune.parameters.size()) + " parameters exceed the cap of " +
                          std::to_string(detail::max_kernel_tuner_parameters));
      if (result.contains("objectives")) tune.objective = reader.objective_of(result, field);
    }
    TuningConfig config =
        reader.config_of(configuration, field + ".configuration", tune.parameters, true);
    const json& invalidity = reader.member(result, field, "invalidity");
    const auto validity = invalidity.is_string()
                              ? t4_validity.find(invalidity.get_ref<const std::string&>())
                              : t4_validity.end();
    if (validity == t4_validity.end())
      reader.refuse(field + ".invalidity",
                    "expected correct, correctness, compile, runtime, timeout or constraints, "
                    "got " +
                        detail::describe_json(invalidity));
    const bool correct = reader.correctness(result, field) != 0.0;
    if (validity->second.first != MeasurementStatus::ok || !correct) {
      const auto& [status, reason] = correct ? validity->second : t4_validity.at("correctness");
      tune.measurements.push_back(
          {.config = std::move(config), .status = status, .detail = reason});
      continue;
    }
    const std::vector<double> runtimes = reader.t4_runtimes(result, field);
    const std::optional<double> time = reader.t4_measurement(result, field, "time");
    if (runtimes.empty() && !time)
      reader.refuse(field, "a correct config needs times.runtimes or a time measurement");
    Measurement measurement = timed_measurement(std::move(config), time.value_or(0.0), runtimes);
    if (tune.objective != "time")
      if (const std::optional<double> rate = reader.t4_measurement(result, field, tune.objective)) {
        measurement.rate = *rate;
        measurement.rate_unit = tune.objective;
      }
    tune.measurements.push_back(std::move(measurement));
  }
  reader.check_unique(tune.measurements, "results");
  return tune;
}

// Duplicate keys: nlohmann keeps the last of them silently, and a config listed twice would be
// two measurements of one config.
void refuse_duplicate_keys(const KernelTunerReader& reader, std::string_view text) {
  struct Finder {
    std::vector<std::set<std::string>> open;
    std::optional<std::string> duplicate;
    bool null() { return true; }
    bool boolean(bool) { return true; }
    bool number_integer(json::number_integer_t) { return true; }
    bool number_unsigned(json::number_unsigned_t) { return true; }
    bool number_float(json::number_float_t, const std::string&) { return true; }
    bool string(std::string&) { return true; }
    bool binary(json::binary_t&) { return true; }
    bool start_object(std::size_t) {
      open.emplace_back();
      return true;
    }
    bool key(std::string& name) {
      if (open.back().insert(name).second) return true;
      duplicate = name;
      return false;
    }
    bool end_object() {
      open.pop_back();
      return true;
    }
    bool start_array(std::size_t) { return true; }
    bool end_array() { return true; }
    bool parse_error(std::size_t, const std::string&, const json::exception&) { return false; }
  } finder;
  json::sax_parse(text, &finder);
  if (finder.duplicate)
    reader.refuse("key " + detail::quoted(*finder.duplicate), "appears twice in one object");
}

}  // namespace

std::string_view to_string(KernelTunerFormat format) {
  switch (format) {
    case KernelTunerFormat::cache:
      return "cache";
    case KernelTunerFormat::results:
      return "results";
    case KernelTunerFormat::t4_results:
      return "T4 results";
  }
  return "unknown";
}

KernelTunerFile parse_kernel_tuner_file(std::string_view text, const std::filesystem::path& path) {
  const KernelTunerReader reader(path);
  if (text.size() > max_kernel_tuner_file_bytes)
    reader.refuse("its size", std::to_string(text.size()) + " bytes exceeds the cap of " +
                                  std::to_string(max_kernel_tuner_file_bytes));
  const auto [closed, left_open] = closed_cache_text(text);
  detail::JsonFault fault;
  const std::optional<json> document = detail::try_parse_json<json>(closed, fault);
  if (!document)
    reader.refuse("line " + std::to_string(fault.line) + ", column " + std::to_string(fault.column),
                  fault.problem + (left_open ? " (read closed, as Kernel Tuner reads a cache it "
                                               "left open)"
                                             : ""));
  refuse_duplicate_keys(reader, closed);
  reader.object(*document, "the file");
  KernelTunerFile file{.left_open = left_open};
  if (document->contains("cache") && document->contains("tune_params_keys")) {
    file.format = KernelTunerFormat::cache;
    file.tunes.push_back(read_cache(reader, *document));
  } else if (document->contains("version_number") && document->contains("data")) {
    file.format = KernelTunerFormat::results;
    file.tunes = read_results(reader, *document);
  } else if (document->contains("results")) {
    file.format = KernelTunerFormat::t4_results;
    file.tunes.push_back(read_t4(reader, *document));
  } else {
    reader.refuse("the file",
                  "neither a Kernel Tuner cache (cache, tune_params_keys), results "
                  "(version_number, data) nor T4 results file (results)");
  }
  return file;
}

KernelTunerFile read_kernel_tuner_file(const std::filesystem::path& path) {
  const std::string text = detail::read_regular_file(path, "Kernel Tuner file",
                                                     {.max_bytes = max_kernel_tuner_file_bytes});
  return parse_kernel_tuner_file(text, path);
}

RecordedTune recorded_tune(const KernelTunerTune& tune) {
  const std::string name = tune.kernel.empty() ? std::string("Kernel Tuner tune") : tune.kernel;
  if (!tune.whole)
    throw Error(ErrorKind::invalid_argument,
                "replay of " + detail::quoted(name) +
                    ": a results file keeps only each tune's best configs; replay the tune's "
                    "cache or T4 results file");
  // Each parameter's values as integers: their own, or their positions in its list.
  std::map<std::string, std::map<std::string, std::string>, std::less<>> integer_of;
  for (const KernelTunerParameter& parameter : tune.parameters) {
    if (!is_identifier(parameter.name))
      throw Error(ErrorKind::invalid_argument, "replay of " + detail::quoted(name) +
                                                   ": parameter " + detail::quoted(parameter.name) +
                                                   " is not a C identifier");
    const bool integers = std::all_of(
        parameter.values.begin(), parameter.values.end(),
        [](const std::string& value) { return detail::integer_text(value).has_value(); });
    auto& values = integer_of[parameter.name];
    for (std::size_t i = 0; i < parameter.values.size(); ++i)
      values[parameter.values[i]] = integers ? parameter.values[i] : std::to_string(i);
  }
  RecordedTune recorded{.name = name};
  for (const Measurement& measurement : tune.measurements) {
    std::vector<Define> defines;
    for (const Define& define : measurement.config.defines())
      defines.push_back({define.name, integer_of.at(define.name).at(define.value)});
    recorded.configs.push_back(
        {.config = TuningConfig(std::move(defines)),
         .status = measurement.status == MeasurementStatus::ok      ? MeasurementStatus::ok
                   : measurement.status == MeasurementStatus::wrong ? MeasurementStatus::wrong
                                                                    : MeasurementStatus::failed,
         .median_ms = measurement.median_ms});
  }
  return recorded;
}

TuningRecord tuning_record(const KernelTunerTune& tune) {
  const auto refuse = [](const std::string& problem) {
    throw Error(ErrorKind::invalid_argument, "import of a Kernel Tuner tune: " + problem);
  };
  if (tune.kernel.empty()) refuse("the file names no kernel; name the one it tunes");
  if (tune.device.empty()) refuse("the file names no device; name the one it was tuned on");
  if (std::any_of(tune.measurements.begin(), tune.measurements.end(), [](const Measurement& m) {
        return m.status == MeasurementStatus::ok && !(m.median_ms > 0.0);
      }))
    refuse("the file records " + tune.objective +
           ", not times, which the tuning database ranks by");
  std::string space;
  for (const KernelTunerParameter& parameter : tune.parameters) {
    if (!space.empty()) space += "; ";
    space += parameter.name + " in {";
    for (std::size_t i = 0; i < parameter.values.size(); ++i)
      space += (i == 0 ? "" : ",") + parameter.values[i];
    space += "}";
  }
  TuningRecord record{.key = {.kernel = tune.kernel,
                              .source_hash = std::string(kernel_tuner_source_hash),
                              .space = space,
                              .device = tune.device,
                              .size = tune.size,
                              // Kernel Tuner times its runs back to back.
                              .l2 = L2Mode::warm},
                      .measurements = tune.measurements};
  record.winner = fastest(record.measurements);
  return record;
}

std::string kernel_tuner_t4_results(const TuningRecord& record) {
  json results = json::array();
  for (const Measurement& measurement : record.measurements) {
    if (!measurement.finished()) continue;
    json configuration = json::object();
    for (const Define& define : measurement.config.defines())
      configuration[define.name] = detail::kernel_tuner_value(define.value);
    const bool timed =
        measurement.status == MeasurementStatus::ok || measurement.status == MeasurementStatus::cut;
    json measurements = json::array();
    json runtimes = json::array();
    if (timed) {
      measurements.push_back({{"name", "time"}, {"value", measurement.median_ms}, {"unit", "ms"}});
      runtimes.push_back(measurement.median_ms);
      if (!measurement.rate_unit.empty() && std::isfinite(measurement.rate))
        measurements.push_back(
            {{"name", measurement.rate_unit}, {"value", measurement.rate}, {"unit", ""}});
    }
    std::string invalidity = "correct";
    if (measurement.status == MeasurementStatus::wrong)
      invalidity = "correctness";
    else if (measurement.status == MeasurementStatus::compile_timeout ||
             (!timed && measurement.detail.starts_with("compile")))
      invalidity = "compile";
    else if (!timed && measurement.detail.starts_with("invalid"))
      invalidity = "constraints";
    else if (!timed)
      invalidity = "runtime";
    results.push_back({{"timestamp", ""},
                       {"configuration", std::move(configuration)},
                       {"times", {{"runtimes", std::move(runtimes)}}},
                       {"invalidity", invalidity},
                       {"correctness", measurement.status == MeasurementStatus::wrong ? 0 : 1},
                       {"measurements", std::move(measurements)},
                       {"objectives", json::array({"time"})}});
  }
  const json document{{"schema_version", "1.0.0"}, {"results", std::move(results)}};
  return document.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace ptxrt
