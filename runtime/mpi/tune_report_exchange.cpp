#include "mpi/tune_report_exchange.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "ptxrt/core/error.hpp"

namespace ptxrt::mpi::detail {

using nlohmann::json;

namespace {

json measurement_json(const Measurement& measurement) {
  return json::parse(measurement_to_json(measurement));
}

Measurement measurement_of(const json& object) { return measurement_from_json(object.dump()); }

// A pruned config travels as a measurement (the database's own form of a config) whose detail is
// the reason.
json pruned_json(const PrunedConfig& pruned) {
  Measurement carrier;
  carrier.config = pruned.config;
  carrier.status = MeasurementStatus::failed;
  carrier.detail = pruned.reason;
  return measurement_json(carrier);
}

PrunedConfig pruned_of(const json& object) {
  Measurement carrier = measurement_of(object);
  return {std::move(carrier.config), std::move(carrier.detail)};
}

json optional_size(const std::optional<std::size_t>& value) {
  return value ? json(*value) : json();
}

std::optional<std::size_t> optional_size_of(const json& value) {
  if (value.is_null()) return std::nullopt;
  return value.get<std::size_t>();
}

json resources_json(const KernelResources& resources) {
  return {{"name", resources.name},
          {"sm", resources.sm},
          {"registers", resources.registers},
          {"barriers", resources.barriers},
          {"max_threads_per_block", resources.max_threads_per_block},
          {"static_shared_bytes", resources.static_shared_bytes},
          {"reserved_shared_bytes", resources.reserved_shared_bytes},
          {"user_constant_bytes", resources.user_constant_bytes},
          {"param_bytes", resources.param_bytes},
          {"param_bank_bytes", resources.param_bank_bytes},
          {"stack_frame_bytes", resources.stack_frame_bytes},
          {"cumulative_stack_bytes", resources.cumulative_stack_bytes},
          {"spill_store_bytes", optional_size(resources.spill_store_bytes)},
          {"spill_load_bytes", optional_size(resources.spill_load_bytes)}};
}

KernelResources resources_of(const json& object) {
  KernelResources resources;
  resources.name = object.at("name").get<std::string>();
  resources.sm = object.at("sm").get<int>();
  resources.registers = object.at("registers").get<int>();
  resources.barriers = object.at("barriers").get<int>();
  resources.max_threads_per_block = object.at("max_threads_per_block").get<int>();
  resources.static_shared_bytes = object.at("static_shared_bytes").get<std::size_t>();
  resources.reserved_shared_bytes = object.at("reserved_shared_bytes").get<std::size_t>();
  resources.user_constant_bytes = object.at("user_constant_bytes").get<std::size_t>();
  resources.param_bytes = object.at("param_bytes").get<std::size_t>();
  resources.param_bank_bytes = object.at("param_bank_bytes").get<std::size_t>();
  resources.stack_frame_bytes = object.at("stack_frame_bytes").get<std::size_t>();
  resources.cumulative_stack_bytes = object.at("cumulative_stack_bytes").get<std::size_t>();
  resources.spill_store_bytes = optional_size_of(object.at("spill_store_bytes"));
  resources.spill_load_bytes = optional_size_of(object.at("spill_load_bytes"));
  return resources;
}

json occupancy_json(const Occupancy& occupancy) {
  return {{"active_blocks_per_sm", occupancy.active_blocks_per_sm},
          {"active_warps_per_sm", occupancy.active_warps_per_sm},
          {"fraction", occupancy.fraction},
          {"limit", static_cast<int>(occupancy.limit)},
          {"reason", occupancy.reason},
          {"blocks_by_warps", occupancy.blocks_by_warps},
          {"blocks_by_registers", occupancy.blocks_by_registers},
          {"blocks_by_shared_memory", occupancy.blocks_by_shared_memory},
          {"blocks_by_barriers", occupancy.blocks_by_barriers},
          {"registers_per_block", occupancy.registers_per_block},
          {"shared_bytes_per_block", occupancy.shared_bytes_per_block},
          {"shared_carveout_bytes", occupancy.shared_carveout_bytes}};
}

Occupancy occupancy_of(const json& object) {
  Occupancy occupancy;
  occupancy.active_blocks_per_sm = object.at("active_blocks_per_sm").get<int>();
  occupancy.active_warps_per_sm = object.at("active_warps_per_sm").get<int>();
  occupancy.fraction = object.at("fraction").get<double>();
  occupancy.limit = static_cast<OccupancyLimit>(object.at("limit").get<int>());
  occupancy.reason = object.at("reason").get<std::string>();
  occupancy.blocks_by_warps = object.at("blocks_by_warps").get<int>();
  occupancy.blocks_by_registers = object.at("blocks_by_registers").get<int>();
  occupancy.blocks_by_shared_memory = object.at("blocks_by_shared_memory").get<int>();
  occupancy.blocks_by_barriers = object.at("blocks_by_barriers").get<int>();
  occupancy.registers_per_block = object.at("registers_per_block").get<int>();
  occupancy.shared_bytes_per_block = object.at("shared_bytes_per_block").get<std::size_t>();
  occupancy.shared_carveout_bytes = object.at("shared_carveout_bytes").get<std::size_t>();
  return occupancy;
}

template <typename T, typename Convert>
json list_json(const std::vector<T>& values, Convert convert) {
  json list = json::array();
  for (const T& value : values) list.push_back(convert(value));
  return list;
}

template <typename T, typename Convert>
std::vector<T> list_of(const json& list, Convert convert) {
  std::vector<T> values;
  for (const json& value : list) values.push_back(convert(value));
  return values;
}

json result_json(const TuneResult& result) {
  return {{"measurement", measurement_json(result.measurement)},
          {"resources", result.resources ? resources_json(*result.resources) : json()},
          {"occupancy", result.occupancy ? occupancy_json(*result.occupancy) : json()}};
}

TuneResult result_of(const json& object) {
  TuneResult result{measurement_of(object.at("measurement")), std::nullopt, std::nullopt};
  if (!object.at("resources").is_null()) result.resources = resources_of(object.at("resources"));
  if (!object.at("occupancy").is_null()) result.occupancy = occupancy_of(object.at("occupancy"));
  return result;
}

// Puts `values` in enumeration order, the position of each found by `config_of`.
template <typename T, typename ConfigOf>
void sort_by_enumeration(std::vector<T>& values, const std::map<std::string, std::size_t>& position,
                         ConfigOf config_of) {
  const auto at = [&](const T& value) {
    const auto found = position.find(config_of(value).describe());
    return found == position.end() ? position.size() : found->second;
  };
  std::stable_sort(values.begin(), values.end(),
                   [&](const T& a, const T& b) { return at(a) < at(b); });
}

template <typename T>
void append(std::vector<T>& to, const std::vector<T>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

}  // namespace

std::string share_report_to_text(const TuneReport& share) {
  return json{{"compiled", share.compiled},
              {"not_reached", share.not_reached},
              {"wall_seconds", share.wall_seconds},
              {"pruned_by_resources", list_json(share.pruned_by_resources, pruned_json)},
              {"compile_failures", list_json(share.compile_failures, pruned_json)},
              {"results", list_json(share.results, result_json)},
              {"resumed", list_json(share.resumed, measurement_json)}}
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

TuneReport share_report_from_text(const std::string& text) {
  try {
    const json object = json::parse(text);
    TuneReport share;
    share.compiled = object.at("compiled").get<std::size_t>();
    share.not_reached = object.at("not_reached").get<std::size_t>();
    share.wall_seconds = object.at("wall_seconds").get<double>();
    share.pruned_by_resources = list_of<PrunedConfig>(object.at("pruned_by_resources"), pruned_of);
    share.compile_failures = list_of<PrunedConfig>(object.at("compile_failures"), pruned_of);
    share.results = list_of<TuneResult>(object.at("results"), result_of);
    share.resumed = list_of<Measurement>(object.at("resumed"), measurement_of);
    return share;
  } catch (const json::exception& error) {
    throw Error(ErrorKind::invalid_argument,
                std::string("a rank's tune report is malformed: ") + error.what());
  }
}

TuneReport merge_share_reports(const TuneReport& space_report,
                               const std::vector<TuneReport>& shares,
                               const std::vector<TuningConfig>& allowed,
                               const Objective& objective) {
  TuneReport merged;
  merged.space_size = space_report.space_size;
  merged.pruned_by_constraints = space_report.pruned_by_constraints;
  for (const TuneReport& share : shares) {
    append(merged.pruned_by_resources, share.pruned_by_resources);
    append(merged.compile_failures, share.compile_failures);
    append(merged.results, share.results);
    append(merged.resumed, share.resumed);
    merged.compiled += share.compiled;
    merged.not_reached += share.not_reached;
    merged.wall_seconds = std::max(merged.wall_seconds, share.wall_seconds);
  }
  std::map<std::string, std::size_t> position;
  for (std::size_t k = 0; k < allowed.size(); ++k) position.emplace(allowed[k].describe(), k);
  const auto pruned_config = [](const PrunedConfig& pruned) { return pruned.config; };
  sort_by_enumeration(merged.pruned_by_resources, position, pruned_config);
  sort_by_enumeration(merged.compile_failures, position, pruned_config);
  sort_by_enumeration(merged.results, position,
                      [](const TuneResult& result) { return result.measurement.config; });
  sort_by_enumeration(merged.resumed, position,
                      [](const Measurement& measurement) { return measurement.config; });
  std::vector<Measurement> finished = merged.resumed;
  for (const TuneResult& result : merged.results) finished.push_back(result.measurement);
  merged.winner = best_measurement(finished, objective);
  return merged;
}

}  // namespace ptxrt::mpi::detail
