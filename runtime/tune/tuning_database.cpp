#include "ptxrt/tune/tuning_database.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "ptxrt/core/disk_cache.hpp"
#include "ptxrt/core/error.hpp"
#include "support/bounded_json.hpp"
#include "support/regular_file.hpp"
#include "tune/database_file.hpp"

namespace ptxrt {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::string_view file_format = "ptxrt-tuning-1";
// 256 MiB holds some 800,000 measurements; the parsed document takes several times the text.
constexpr detail::ReadLimits database_limits{.max_bytes = std::uint64_t{256} << 20};

constexpr std::pair<MeasurementStatus, std::string_view> status_names[] = {
    {MeasurementStatus::started, "started"},
    {MeasurementStatus::ok, "ok"},
    {MeasurementStatus::cut, "cut"},
    {MeasurementStatus::wrong, "wrong"},
    {MeasurementStatus::failed, "failed"},
    {MeasurementStatus::crashed, "crashed"},
    {MeasurementStatus::compile_timeout, "compile_timeout"},
};

// A field of the wrong shape or out of range, with its path in the file
// ("tunes[2].measurements[7].runs: ..."). It becomes one Error naming the file (parse) or the
// text (measurement_from_json).
class Malformed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void malformed(const std::string& path, const std::string& what) {
  throw Malformed(path + ": " + what);
}

std::string field_path(const std::string& object, std::string_view name) {
  const std::string field = detail::printable(name);
  return object.empty() ? field : object + "." + field;
}

// The member `name` of the object at `path`, or nothing when it has none.
const json* find_member(const json& object, const std::string& path, const char* name) {
  if (!object.is_object())
    malformed(path.empty() ? "(the top)" : path,
              "expected an object, got " + detail::describe_json(object));
  const auto found = object.find(name);
  return found == object.end() ? nullptr : &*found;
}

const json& member(const json& object, const std::string& path, const char* name) {
  const json* found = find_member(object, path, name);
  if (found == nullptr) malformed(field_path(path, name), "missing");
  return *found;
}

std::string text_of(const json& value, const std::string& path) {
  if (!value.is_string()) malformed(path, "expected a string, got " + detail::describe_json(value));
  return value.get<std::string>();
}

std::string text_or(const json& object, const std::string& path, const char* name) {
  const json* found = find_member(object, path, name);
  return found == nullptr ? std::string() : text_of(*found, field_path(path, name));
}

MeasurementStatus parse_status(const json& value, const std::string& path) {
  const std::string name = text_of(value, path);
  for (const auto& [status, spelling] : status_names)
    if (spelling == name) return status;
  malformed(path, "unknown measurement status " + detail::quoted(name));
}

// JSON has no infinity or NaN: those are written as null and read back as `absent`. (The parser
// refuses a number that overflows a double.)
json number(double value) { return std::isfinite(value) ? json(value) : json(); }
double number_or(const json& object, const std::string& path, const char* name, double absent) {
  const json* found = find_member(object, path, name);
  if (found == nullptr || found->is_null()) return absent;
  if (!found->is_number())
    malformed(field_path(path, name), "expected a number, got " + detail::describe_json(*found));
  return found->get<double>();
}

// A JSON integer within Integer's range. nlohmann's get<int>() would convert 2.5 silently and
// 1e300 with undefined behaviour, and wrap 3000000000.
template <typename Integer>
Integer integer_of(const json& value, const std::string& path) {
  if (value.is_number_unsigned()) {
    if (const auto number = value.get<std::uint64_t>(); std::in_range<Integer>(number))
      return static_cast<Integer>(number);
  } else if (value.is_number_integer()) {
    if (const auto number = value.get<std::int64_t>(); std::in_range<Integer>(number))
      return static_cast<Integer>(number);
  }
  malformed(path, detail::describe_json(value) + " is not an integer from " +
                      std::to_string(std::numeric_limits<Integer>::min()) + " to " +
                      std::to_string(std::numeric_limits<Integer>::max()));
}

// nlohmann iterates a number or an object as if it were a list; the file's lists must be lists.
const json& list_of(const json& value, const std::string& path) {
  if (!value.is_array()) malformed(path, "expected a list, got " + detail::describe_json(value));
  return value;
}

json config_to_json(const TuningConfig& config) {
  json object = json::object();
  for (const Define& define : config.defines()) object[define.name] = define.value;
  return object;
}

TuningConfig config_from(const json& object, const std::string& path) {
  if (!object.is_object())
    malformed(path, "expected an object, got " + detail::describe_json(object));
  std::vector<Define> defines;
  for (const auto& [name, value] : object.items())
    defines.push_back({name, text_of(value, field_path(path, name))});
  return TuningConfig(std::move(defines));
}

json to_json(const Measurement& measurement) {
  json object{{"config", config_to_json(measurement.config)},
              {"status", to_string(measurement.status)},
              {"median_ms", number(measurement.median_ms)},
              {"spread", number(measurement.spread)},
              {"runs", measurement.runs},
              {"rate", number(measurement.rate)},
              {"rate_unit", measurement.rate_unit},
              {"max_error", number(measurement.max_error)},
              {"detail", measurement.detail}};
  if (measurement.device) object["device"] = *measurement.device;
  if (const std::optional<PowerObservation>& power = measurement.power)
    object["power"] = {{"energy_j", number(power->energy_j)},
                       {"power_w", number(power->power_w)},
                       {"sm_clock_mhz", number(power->sm_clock_mhz)},
                       {"temperature_c", number(power->temperature_c)}};
  if (!measurement.metrics.empty()) {
    json metrics = json::object();
    for (const auto& [name, value] : measurement.metrics) metrics[name] = number(value);
    object["metrics"] = std::move(metrics);
  }
  return object;
}

PowerObservation power_from(const json& object, const std::string& path) {
  const auto value = [&](const char* name) {
    return number_or(object, path, name, std::numeric_limits<double>::quiet_NaN());
  };
  return {.energy_j = value("energy_j"),
          .power_w = value("power_w"),
          .sm_clock_mhz = value("sm_clock_mhz"),
          .temperature_c = value("temperature_c")};
}

std::map<std::string, double> metrics_from(const json& object, const std::string& path) {
  if (!object.is_object())
    malformed(path, "expected an object, got " + detail::describe_json(object));
  std::map<std::string, double> metrics;
  for (const auto& [name, value] : object.items())
    metrics[name] = number_or(object, path, name.c_str(), std::numeric_limits<double>::quiet_NaN());
  return metrics;
}

Measurement measurement_from(const json& object, const std::string& path) {
  Measurement measurement;
  measurement.config = config_from(member(object, path, "config"), field_path(path, "config"));
  measurement.status = parse_status(member(object, path, "status"), field_path(path, "status"));
  measurement.median_ms = number_or(object, path, "median_ms", 0.0);
  measurement.spread = number_or(object, path, "spread", 0.0);
  if (const json* runs = find_member(object, path, "runs"))
    measurement.runs = integer_of<int>(*runs, field_path(path, "runs"));
  measurement.rate = number_or(object, path, "rate", 0.0);
  measurement.rate_unit = text_or(object, path, "rate_unit");
  measurement.max_error =
      number_or(object, path, "max_error", std::numeric_limits<double>::infinity());
  measurement.detail = text_or(object, path, "detail");
  if (const json* device = find_member(object, path, "device"))
    measurement.device = integer_of<int>(*device, field_path(path, "device"));
  // Files written before power was observed, or by a tune that did not observe it, have none.
  if (const json* power = find_member(object, path, "power"))
    measurement.power = power_from(*power, field_path(path, "power"));
  if (const json* metrics = find_member(object, path, "metrics"))
    measurement.metrics = metrics_from(*metrics, field_path(path, "metrics"));
  // An ok measurement without a time would read as 0 ms and win every choice.
  if (measurement.status == MeasurementStatus::ok &&
      !(std::isfinite(measurement.median_ms) && measurement.median_ms > 0.0))
    malformed(field_path(path, "median_ms"), "an ok measurement needs a positive median_ms");
  return measurement;
}

json to_json(const TuningKey& key) {
  return {{"kernel", key.kernel},
          {"source_hash", key.source_hash},
          {"space", key.space},
          {"device", key.device},
          {"compute_capability", key.compute_capability},
          {"nvrtc_version", key.nvrtc_version},
          {"size", key.size},
          {"l2", to_string(key.l2)},
          {"objective",
           {{"name", key.objective.name}, {"higher_is_better", key.objective.higher_is_better}}}};
}

// The member `name` of the object at `path`, true or false.
bool truth_of(const json& object, const std::string& path, const char* name) {
  const json& value = member(object, path, name);
  if (!value.is_boolean())
    malformed(field_path(path, name),
              "expected true or false, got " + detail::describe_json(value));
  return value.get<bool>();
}

Objective objective_from(const json& object, const std::string& path) {
  return {.name = text_of(member(object, path, "name"), field_path(path, "name")),
          .higher_is_better = truth_of(object, path, "higher_is_better")};
}

TuningKey key_from(const json& object, const std::string& path) {
  const auto text = [&](const char* name) {
    return text_of(member(object, path, name), field_path(path, name));
  };
  TuningKey key{.kernel = text("kernel"),
                .source_hash = text("source_hash"),
                .space = text("space"),
                .device = text("device"),
                .compute_capability = text("compute_capability"),
                .nvrtc_version = integer_of<int>(member(object, path, "nvrtc_version"),
                                                 field_path(path, "nvrtc_version"))};
  // Keys written before tunes recorded how they timed and what they chose by: flush and time.
  if (const json* l2 = find_member(object, path, "l2")) {
    const std::string mode = text_of(*l2, field_path(path, "l2"));
    if (mode != to_string(L2Mode::flush) && mode != to_string(L2Mode::warm))
      malformed(field_path(path, "l2"), "unknown L2 mode " + detail::quoted(mode));
    key.l2 = mode == to_string(L2Mode::warm) ? L2Mode::warm : L2Mode::flush;
  }
  if (const json* objective = find_member(object, path, "objective"))
    key.objective = objective_from(*objective, field_path(path, "objective"));
  const std::string size = field_path(path, "size");
  const json& extents = list_of(member(object, path, "size"), size);
  for (std::size_t i = 0; i < extents.size(); ++i)
    key.size.push_back(integer_of<std::int64_t>(extents[i], size + "[" + std::to_string(i) + "]"));
  return key;
}

// Text from outside (a compile log, an exception message) need not be UTF-8, which JSON requires
// and nlohmann's dump refuses with its own exception: such bytes are written as U+FFFD instead.
std::string dump_text(const json& value, int indent = -1) {
  return value.dump(indent, ' ', false, json::error_handler_t::replace);
}

// The file's text; nothing when it does not exist. Only a regular file is read: a FIFO or a
// device at the path is one clear error, not a hang or an endless read.
std::optional<std::string> read_text(const fs::path& path) {
  return detail::read_regular_file_if_exists(path, "tuning database", database_limits);
}

TuningRecord record_from(const json& tune, const std::string& path) {
  TuningRecord record{
      key_from(member(tune, path, "key"), field_path(path, "key")), {}, std::nullopt};
  const std::string measurements = field_path(path, "measurements");
  const json& list = list_of(member(tune, path, "measurements"), measurements);
  record.measurements.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i)
    record.measurements.push_back(
        measurement_from(list[i], measurements + "[" + std::to_string(i) + "]"));
  record.winner = best_measurement(record.measurements, record.key.objective);
  return record;
}

constexpr std::size_t max_request_id_bytes = 64;

json to_json(const TuneRequest& request) {
  return {{"id", request.id},
          {"request", json::parse(request.request)},
          {"finished", request.finished}};
}

TuneRequest request_from(const json& object, const std::string& path) {
  TuneRequest request;
  request.id = text_of(member(object, path, "id"), field_path(path, "id"));
  if (request.id.empty() || request.id.size() > max_request_id_bytes)
    malformed(field_path(path, "id"), "expected 1 to " + std::to_string(max_request_id_bytes) +
                                          " characters, got " + std::to_string(request.id.size()));
  const json& asked = member(object, path, "request");
  if (!asked.is_object())
    malformed(field_path(path, "request"),
              "expected an object, got " + detail::describe_json(asked));
  request.request = dump_text(asked);
  request.finished = truth_of(object, path, "finished");
  return request;
}

// A database file's whole content.
struct DatabaseContent {
  std::vector<TuningRecord> records;
  std::vector<TuneRequest> requests;
};

DatabaseContent content_from(std::string_view text, const fs::path& path) {
  const auto corrupt = [&](const std::string& what) {
    return Error(ErrorKind::io,
                 "tuning database " + detail::quoted_path(path) + " is corrupt: " + what);
  };
  detail::JsonFault fault;
  const std::optional<json> file = detail::try_parse_json<json>(text, fault);
  if (!file)
    throw corrupt("line " + std::to_string(fault.line) + ", column " +
                  std::to_string(fault.column) + ": " + fault.problem);
  const auto format = file->is_object() ? file->find("format") : file->end();
  if (format == file->end() || !format->is_string() ||
      format->get_ref<const std::string&>() != file_format)
    throw Error(ErrorKind::io,
                detail::quoted_path(path) + " is not a tuning database (format " +
                    (format == file->end() ? "missing" : detail::describe_json(*format)) +
                    ", expected '" + std::string(file_format) + "')");
  try {
    DatabaseContent content;
    // A pointer, not a reference: g++ 13 takes the field names' temporaries for the referent.
    const json* tunes = &list_of(member(*file, "", "tunes"), "tunes");
    content.records.reserve(tunes->size());
    for (std::size_t i = 0; i < tunes->size(); ++i)
      content.records.push_back(record_from((*tunes)[i], "tunes[" + std::to_string(i) + "]"));
    // Files written before tunes recorded their requests have none.
    if (const json* requests = find_member(*file, "", "requests"))
      for (std::size_t i = 0; i < list_of(*requests, "requests").size(); ++i)
        content.requests.push_back(
            request_from((*requests)[i], "requests[" + std::to_string(i) + "]"));
    return content;
  } catch (const Malformed& error) {
    throw corrupt(error.what());
  }
}

std::string serialize_content(const DatabaseContent& content) {
  json tunes = json::array();
  for (const TuningRecord& record : content.records) {
    json measurements = json::array();
    for (const Measurement& measurement : record.measurements)
      measurements.push_back(to_json(measurement));
    tunes.push_back({{"key", to_json(record.key)},
                     {"measurements", std::move(measurements)},
                     {"winner", record.winner ? to_json(*record.winner) : json()}});
  }
  json file{{"format", file_format}, {"tunes", std::move(tunes)}};
  if (!content.requests.empty()) {
    json requests = json::array();
    for (const TuneRequest& request : content.requests) requests.push_back(to_json(request));
    file["requests"] = std::move(requests);
  }
  return dump_text(file, 1) + "\n";
}

// How every database file begins, up to its format (nlohmann writes the members in name order).
std::string file_beginning() {
  const std::string empty = serialize_content({});
  return empty.substr(0, empty.find(file_format) + file_format.size());
}

DatabaseContent read_content(const fs::path& path) {
  const std::optional<std::string> text = read_text(path);
  return text ? content_from(*text, path) : DatabaseContent{};
}

// Unique among the tunes of one database, written by any process: the time, the process and
// random bits.
std::string new_request_id() {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
  std::random_device random;
  char id[max_request_id_bytes];
  std::snprintf(id, sizeof id, "%lld-%d-%08x", static_cast<long long>(seconds),
                static_cast<int>(::getpid()), static_cast<unsigned>(random()));
  return id;
}

// merge()'s lookups.
void hash_into(std::size_t& seed, std::string_view text) {
  seed ^= std::hash<std::string_view>{}(text) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
}

struct KeyHash {
  std::size_t operator()(const TuningKey& key) const {
    std::size_t seed = 0;
    for (std::string_view text : {std::string_view(key.kernel), std::string_view(key.source_hash),
                                  std::string_view(key.space), std::string_view(key.device),
                                  std::string_view(key.compute_capability)})
      hash_into(seed, text);
    hash_into(seed, std::to_string(key.nvrtc_version));
    for (std::int64_t extent : key.size) hash_into(seed, std::to_string(extent));
    hash_into(seed, to_string(key.l2));
    hash_into(seed, key.objective.name);
    return seed;
  }
};

struct ConfigHash {
  std::size_t operator()(const TuningConfig& config) const {
    std::size_t seed = 0;
    for (const Define& define : config.defines()) {
      hash_into(seed, define.name);
      hash_into(seed, define.value);
    }
    return seed;
  }
};

// merge()'s rule: whether `candidate` is kept in place of `kept`, a measurement of the same
// config from an earlier source.
bool supersedes(const Measurement& candidate, const Measurement& kept) {
  if (candidate.finished() != kept.finished()) return candidate.finished();
  const bool candidate_ok = candidate.status == MeasurementStatus::ok;
  if (candidate_ok != (kept.status == MeasurementStatus::ok)) return candidate_ok;
  return candidate_ok && candidate.median_ms < kept.median_ms;
}

}  // namespace

std::string_view to_string(MeasurementStatus status) {
  for (const auto& [value, spelling] : status_names)
    if (value == status) return spelling;
  return "unknown";
}

std::string measurement_to_json(const Measurement& measurement) {
  return dump_text(to_json(measurement));
}

Measurement measurement_from_json(std::string_view text) {
  const auto refuse = [&](const std::string& what) {
    return Error(ErrorKind::invalid_argument,
                 "not a measurement: " + what + " in " + detail::quoted(text));
  };
  detail::JsonFault fault;
  const std::optional<json> object = detail::try_parse_json<json>(text, fault);
  if (!object) throw refuse("column " + std::to_string(fault.column) + ": " + fault.problem);
  try {
    return measurement_from(*object, "");
  } catch (const Malformed& error) {
    throw refuse(error.what());
  }
}

std::string format_size(const std::vector<std::int64_t>& size) {
  std::string text;
  for (std::int64_t value : size) {
    if (!text.empty()) text += 'x';
    text += std::to_string(value);
  }
  return text;
}

std::string TuningKey::describe() const {
  return kernel + " " + format_size(size) + " on " + device + " (" + compute_capability + ")";
}

std::string TuningKey::describe_method() const {
  return "L2 " + std::string(to_string(l2)) + ", objective " + objective.describe();
}

fs::path TuningDatabase::default_path() {
  if (const char* path = std::getenv("PTXRT_TUNING_DB"); path != nullptr && *path != '\0')
    return path;
  const fs::path cache = DiskCache::default_directory();
  return cache.empty() ? fs::path() : cache / "tuning.json";
}

TuningDatabase::TuningDatabase(fs::path path) : path_(std::move(path)) {
  if (path_.empty())
    throw Error(ErrorKind::invalid_argument,
                "no tuning database path: set PTXRT_TUNING_DB or HOME, or name a file");
}

std::vector<TuningRecord> TuningDatabase::parse(std::string_view text, const fs::path& path) {
  return content_from(text, path).records;
}

std::string TuningDatabase::serialize(const std::vector<TuningRecord>& records) {
  return serialize_content({records, {}});
}

std::vector<TuningRecord> TuningDatabase::merge(
    const std::vector<std::vector<TuningRecord>>& sources) {
  std::vector<TuningRecord> merged;
  // Where each key's record and each of its configs' measurement are in `merged`: one lookup per
  // measurement, so that merging is linear in the measurements.
  std::unordered_map<TuningKey, std::size_t, KeyHash> record_at;
  std::vector<std::unordered_map<TuningConfig, std::size_t, ConfigHash>> measurement_at;
  for (const std::vector<TuningRecord>& source : sources) {
    for (const TuningRecord& record : source) {
      const auto [found, added] = record_at.try_emplace(record.key, merged.size());
      if (added) {
        merged.push_back({record.key, {}, std::nullopt});
        measurement_at.emplace_back();
      }
      std::vector<Measurement>& kept = merged[found->second].measurements;
      auto& position = measurement_at[found->second];
      for (const Measurement& measurement : record.measurements) {
        const auto [same, first] = position.try_emplace(measurement.config, kept.size());
        if (first)
          kept.push_back(measurement);
        else if (supersedes(measurement, kept[same->second]))
          kept[same->second] = measurement;
      }
    }
  }
  for (TuningRecord& record : merged)
    record.winner = best_measurement(record.measurements, record.key.objective);
  return merged;
}

void TuningDatabase::merge_from(const std::vector<TuningRecord>& records) const {
  const detail::LockedDatabaseFile file(path_);
  DatabaseContent content = read_content(path_);
  content.records = merge({content.records, records});
  file.replace(serialize_content(content), file_beginning());
}

void TuningDatabase::record(const TuningKey& key, const Measurement& measurement) const {
  const detail::LockedDatabaseFile file(path_);
  DatabaseContent content = read_content(path_);
  std::vector<TuningRecord>& all = content.records;
  auto tune = std::find_if(all.begin(), all.end(),
                           [&](const TuningRecord& record) { return record.key == key; });
  if (tune == all.end()) tune = all.insert(all.end(), {key, {}, std::nullopt});
  auto same = std::find_if(tune->measurements.begin(), tune->measurements.end(),
                           [&](const Measurement& m) { return m.config == measurement.config; });
  if (same != tune->measurements.end())
    *same = measurement;
  else
    tune->measurements.push_back(measurement);
  tune->winner = best_measurement(tune->measurements, key.objective);
  file.replace(serialize_content(content), file_beginning());
}

std::vector<TuningRecord> TuningDatabase::records() const { return read_content(path_).records; }

std::vector<Measurement> TuningDatabase::measurements(const TuningKey& key) const {
  for (TuningRecord& record : records())
    if (record.key == key) return std::move(record.measurements);
  return {};
}

std::string TuningDatabase::begin_request(std::string_view request) const {
  detail::JsonFault fault;
  const std::optional<json> asked = detail::try_parse_json<json>(request, fault);
  if (!asked || !asked->is_object())
    throw Error(ErrorKind::invalid_argument,
                "tune request: expected a JSON object, got " +
                    (asked ? detail::describe_json(*asked)
                           : "column " + std::to_string(fault.column) + ": " + fault.problem));
  const detail::LockedDatabaseFile file(path_);
  DatabaseContent content = read_content(path_);
  content.requests.push_back({new_request_id(), dump_text(*asked), false});
  file.replace(serialize_content(content), file_beginning());
  return content.requests.back().id;
}

void TuningDatabase::finish_request(std::string_view id) const {
  const detail::LockedDatabaseFile file(path_);
  DatabaseContent content = read_content(path_);
  const auto found = std::find_if(content.requests.begin(), content.requests.end(),
                                  [&](const TuneRequest& request) { return request.id == id; });
  if (found == content.requests.end())
    throw Error(ErrorKind::not_found, "tuning database " + detail::quoted_path(path_) +
                                          " holds no tune request " + detail::quoted(id));
  found->finished = true;
  file.replace(serialize_content(content), file_beginning());
}

std::vector<TuneRequest> TuningDatabase::requests() const { return read_content(path_).requests; }

}  // namespace ptxrt
