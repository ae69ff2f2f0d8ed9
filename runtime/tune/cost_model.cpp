#include "tune/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ptxrt::detail {

namespace {

constexpr int max_depth = 12;
constexpr std::size_t min_leaf = 2;
// How much of the model's uncertainty a pick counts in its favour: the lower confidence bound
// mean - kappa × spread, in log time. 0.5 came closest soonest on made-up landscapes with the
// structure of tuning spaces (tests/cpu/strategy_tests.cpp); 0 explores too little, 2 too much.
constexpr double kappa = 0.5;

double log2_or_zero(double value) { return value > 0.0 ? std::log2(value) : 0.0; }

int registers_of(const Candidate& candidate) {
  return candidate.resources ? candidate.resources->registers : 0;
}

double mean_of(const std::vector<double>& targets, const std::vector<std::size_t>& rows,
               std::size_t first, std::size_t last) {
  double sum = 0.0;
  for (std::size_t i = first; i < last; ++i) sum += targets[rows[i]];
  return sum / static_cast<double>(last - first);
}

}  // namespace

std::vector<double> candidate_features(const Candidate& candidate,
                                       const std::vector<TuningParameter>& parameters) {
  std::vector<double> features;
  for (const TuningParameter& parameter : parameters) {
    const double value = static_cast<double>(candidate.config.find(parameter.name).value_or(0));
    const bool positive = std::all_of(parameter.values.begin(), parameter.values.end(),
                                      [](std::int64_t v) { return v > 0; });
    features.push_back(positive ? log2_or_zero(value) : value);
  }
  const std::optional<KernelResources>& resources = candidate.resources;
  features.push_back(resources ? resources->registers : 0.0);
  features.push_back(candidate.occupancy ? candidate.occupancy->fraction : 0.0);
  features.push_back(
      resources ? log2_or_zero(1.0 + static_cast<double>(resources->static_shared_bytes)) : 0.0);
  features.push_back(candidate.shape ? log2_or_zero(candidate.shape->block_threads) : 0.0);
  features.push_back(log2_or_zero(1.0 + static_cast<double>(candidate.spill_bytes())));
  return features;
}

CostModel::CostModel(std::uint64_t seed, int trees) : random_(seed), tree_count_(trees) {}

int CostModel::grow(Tree& tree, const std::vector<std::vector<double>>& features,
                    const std::vector<double>& targets, std::vector<std::size_t>& rows,
                    std::size_t first, std::size_t last, int depth) {
  const int index = static_cast<int>(tree.size());
  tree.push_back({-1, 0.0, -1, -1, mean_of(targets, rows, first, last)});
  const std::size_t count = last - first;
  if (depth >= max_depth || count < 2 * min_leaf) return index;
  // Every feature competes for each split: with a dozen features and a few dozen rows, a random
  // subset (a random forest's) lost the one that mattered too often; the bootstrap alone makes
  // the trees differ.
  const std::size_t width = features[rows[first]].size();
  double best_score = std::numeric_limits<double>::infinity();
  int best_feature = -1;
  double best_threshold = 0.0;
  std::vector<std::pair<double, double>> column(count);
  for (std::size_t feature = 0; feature < width; ++feature) {
    for (std::size_t i = 0; i < count; ++i)
      column[i] = {features[rows[first + i]][feature], targets[rows[first + i]]};
    std::sort(column.begin(), column.end());
    double total = 0.0, total_squares = 0.0;
    for (const auto& [x, y] : column) {
      total += y;
      total_squares += y * y;
    }
    double left = 0.0, left_squares = 0.0;
    for (std::size_t i = 0; i + 1 < count; ++i) {
      left += column[i].second;
      left_squares += column[i].second * column[i].second;
      const std::size_t left_count = i + 1, right_count = count - left_count;
      if (column[i].first == column[i + 1].first || left_count < min_leaf || right_count < min_leaf)
        continue;
      // Sum of squared deviations on both sides: what the split leaves unexplained.
      const double right = total - left, right_squares = total_squares - left_squares;
      const double score = (left_squares - left * left / static_cast<double>(left_count)) +
                           (right_squares - right * right / static_cast<double>(right_count));
      if (score < best_score) {
        best_score = score;
        best_feature = static_cast<int>(feature);
        best_threshold = (column[i].first + column[i + 1].first) / 2.0;
      }
    }
  }
  if (best_feature < 0) return index;
  const auto middle = std::partition(
      rows.begin() + static_cast<std::ptrdiff_t>(first),
      rows.begin() + static_cast<std::ptrdiff_t>(last), [&](std::size_t row) {
        return features[row][static_cast<std::size_t>(best_feature)] < best_threshold;
      });
  const auto split = static_cast<std::size_t>(middle - rows.begin());
  const int left = grow(tree, features, targets, rows, first, split, depth + 1);
  const int right = grow(tree, features, targets, rows, split, last, depth + 1);
  tree[static_cast<std::size_t>(index)].feature = best_feature;
  tree[static_cast<std::size_t>(index)].threshold = best_threshold;
  tree[static_cast<std::size_t>(index)].left = left;
  tree[static_cast<std::size_t>(index)].right = right;
  return index;
}

void CostModel::fit(const std::vector<std::vector<double>>& features,
                    const std::vector<double>& targets) {
  trees_.clear();
  if (features.empty()) return;
  std::uniform_int_distribution<std::size_t> pick(0, features.size() - 1);
  for (int t = 0; t < tree_count_; ++t) {
    std::vector<std::size_t> rows(features.size());
    for (std::size_t& row : rows) row = pick(random_);
    Tree tree;
    grow(tree, features, targets, rows, 0, rows.size(), 0);
    trees_.push_back(std::move(tree));
  }
}

CostModel::Prediction CostModel::predict(const std::vector<double>& features) const {
  double sum = 0.0, squares = 0.0;
  for (const Tree& tree : trees_) {
    std::size_t node = 0;
    while (tree[node].feature >= 0)
      node = static_cast<std::size_t>(features[static_cast<std::size_t>(tree[node].feature)] <
                                              tree[node].threshold
                                          ? tree[node].left
                                          : tree[node].right);
    sum += tree[node].value;
    squares += tree[node].value * tree[node].value;
  }
  const double count = static_cast<double>(trees_.size());
  const double mean = sum / count;
  return {mean, std::sqrt(std::max(0.0, squares / count - mean * mean))};
}

ModelGuidedOrder::ModelGuidedOrder(std::vector<TuningParameter> parameters, std::size_t space_size,
                                   std::uint64_t seed)
    : parameters_(std::move(parameters)),
      // Enough random picks to see every parameter move, few enough to leave the rest to the
      // model: 4 to 8, about 1.5 % of the space.
      initial_(std::clamp<std::size_t>(space_size * 3 / 200, 4, 8)),
      random_(seed),
      model_(seed ^ 0x9e3779b97f4a7c15ull) {}

void ModelGuidedOrder::add(Candidate candidate) {
  waiting_features_.push_back(candidate_features(candidate, parameters_));
  waiting_.push_back(std::move(candidate));
}

void ModelGuidedOrder::learn(const Candidate& candidate, const Measurement& measurement) {
  const bool timed =
      measurement.status == MeasurementStatus::ok || measurement.status == MeasurementStatus::cut;
  if (!timed || !(measurement.median_ms > 0.0)) return;
  seen_features_.push_back(candidate_features(candidate, parameters_));
  seen_log_ms_.push_back(std::log(measurement.median_ms));
}

std::size_t ModelGuidedOrder::pick_by_model() {
  // Refitting after every result costs little early and little is gained by it late.
  const std::size_t seen = seen_log_ms_.size();
  if (!model_.fitted() || seen >= fitted_at_ + std::max<std::size_t>(1, fitted_at_ / 16)) {
    model_.fit(seen_features_, seen_log_ms_);
    fitted_at_ = seen;
  }
  std::size_t best = 0;
  double best_bound = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < waiting_.size(); ++i) {
    const CostModel::Prediction prediction = model_.predict(waiting_features_[i]);
    const double bound = prediction.mean - kappa * prediction.spread;
    if (bound < best_bound) {
      best_bound = bound;
      best = i;
    }
  }
  return best;
}

std::size_t ModelGuidedOrder::pick_unseen_code() {
  // A config's register count is what its compiled code tells before any timing: configs whose
  // constants unroll or keep more in registers compile to other counts. The start takes, at
  // random, among the configs whose count the tune has taken least often, so that each kind of
  // code is timed early, however few configs compile to it (on a convolution whose two fastest
  // of 113 configs were among the 8 of 47 and 71 registers, the median seed came within 3 % of
  // the best after 7 configs instead of 56).
  std::vector<std::size_t> least_seen;
  std::size_t fewest = std::numeric_limits<std::size_t>::max();
  for (std::size_t i = 0; i < waiting_.size(); ++i) {
    const auto taken = static_cast<std::size_t>(
        std::count(taken_registers_.begin(), taken_registers_.end(), registers_of(waiting_[i])));
    if (taken < fewest) {
      fewest = taken;
      least_seen.clear();
    }
    if (taken == fewest) least_seen.push_back(i);
  }
  return least_seen[std::uniform_int_distribution<std::size_t>(0, least_seen.size() - 1)(random_)];
}

Candidate ModelGuidedOrder::take() {
  std::size_t chosen = 0;
  if (taken_ == 0) {
    // The occupancy strategy's first pick: a fair guess before anything is known.
    const auto rank = [&](std::size_t i) {
      const Candidate& c = waiting_[i];
      return std::make_pair(-(c.occupancy ? c.occupancy->fraction : 0.0),
                            c.resources ? c.resources->registers : 0);
    };
    for (std::size_t i = 1; i < waiting_.size(); ++i)
      if (rank(i) < rank(chosen)) chosen = i;
  } else if (taken_ < initial_ || seen_log_ms_.size() < 2) {
    chosen = pick_unseen_code();
  } else {
    chosen = pick_by_model();
  }
  ++taken_;
  taken_registers_.push_back(registers_of(waiting_[chosen]));
  Candidate candidate = std::move(waiting_[chosen]);
  waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(chosen));
  waiting_features_.erase(waiting_features_.begin() + static_cast<std::ptrdiff_t>(chosen));
  return candidate;
}

}  // namespace ptxrt::detail
