// choose(): which recorded winner a run takes for its device and size.
#include <cmath>
#include <limits>

#include "ptxrt/tune/tuning_database.hpp"

namespace ptxrt {

namespace {

bool same_tune(const TuningKey& a, const TuningKey& b) {
  return a.kernel == b.kernel && a.source_hash == b.source_hash && a.space == b.space &&
         a.nvrtc_version == b.nvrtc_version;
}

// Squared distance of two sizes on a log scale, per dimension; infinite when they do not compare.
double size_distance(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  double sum = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] <= 0 || b[i] <= 0) return std::numeric_limits<double>::infinity();
    const double difference =
        std::log(static_cast<double>(a[i])) - std::log(static_cast<double>(b[i]));
    sum += difference * difference;
  }
  return sum;
}

// Whether `key` was tuned as `query` asks: timed with its L2 mode, chosen by its objective.
bool same_method(const TuningKey& key, const TuningKey& query) {
  return key.l2 == query.l2 && key.objective == query.objective;
}

// The record with a winner nearest to `query` in size among those `eligible` allows; of records
// at one distance, one tuned as the query asks.
template <typename Eligible>
const TuningRecord* nearest(const std::vector<TuningRecord>& records, const TuningKey& query,
                            Eligible eligible) {
  const TuningRecord* best = nullptr;
  double best_distance = std::numeric_limits<double>::infinity();
  for (const TuningRecord& record : records) {
    if (!record.winner || !same_tune(record.key, query) || !eligible(record.key)) continue;
    const double distance = size_distance(record.key.size, query.size);
    if (distance < best_distance ||
        (best != nullptr && distance == best_distance && same_method(record.key, query) &&
         !same_method(best->key, query))) {
      best = &record;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace

std::string_view to_string(ChoiceLevel level) {
  switch (level) {
    case ChoiceLevel::exact_size:
      return "exact";
    case ChoiceLevel::nearest_size:
      return "nearest-size";
    case ChoiceLevel::same_compute_capability:
      return "same-cc";
    case ChoiceLevel::declared_default:
      return "default";
  }
  return "unknown";
}

std::string TunedChoice::describe() const {
  std::string text = config.describe() + " (" + std::string(to_string(level));
  if (from)
    text += ": tuned for " + from->describe() + ", " + from->describe_method();
  else
    text += ": nothing tuned for this kernel, device and size";
  return text + ")";
}

TunedChoice choose(const std::vector<TuningRecord>& records, const TuningKey& query,
                   const TuningConfig& declared_default) {
  const auto same_device = [&](const TuningKey& key) {
    return key.device == query.device && key.compute_capability == query.compute_capability;
  };
  const auto same_cc = [&](const TuningKey& key) {
    return key.compute_capability == query.compute_capability;
  };
  const TuningRecord* found = nearest(records, query, same_device);
  ChoiceLevel level = ChoiceLevel::nearest_size;
  if (found && found->key.size == query.size) level = ChoiceLevel::exact_size;
  if (!found) {
    found = nearest(records, query, same_cc);
    level = ChoiceLevel::same_compute_capability;
  }
  if (!found) return {declared_default, ChoiceLevel::declared_default, std::nullopt, std::nullopt};
  return {found->winner->config, level, found->key, found->winner};
}

}  // namespace ptxrt
