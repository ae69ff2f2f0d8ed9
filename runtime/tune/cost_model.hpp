// The model strategy's parts (tuner.cpp): an ensemble of regression trees, each grown on a
// bootstrap sample of the configs timed so far, that learns a config's time from its tunables
// and its compiled resources; and the order it makes of the candidates ready to time.
//
// Why trees: tuning landscapes are rugged (a tile that stops dividing the problem, a register
// cap that starts spilling), which trees cut along without smoothing over; the spread of the
// trees' predictions says where the model knows little, which the order uses to explore. SMAC
// does the same with a random forest for algorithm configuration (Hutter et al., 2011).
//
// Both are used from the tune's thread only. Deterministic for a seed.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ptxrt/tune/tuner.hpp"

namespace ptxrt::detail {

// What the model sees of a candidate: each tunable's value (its log2 when all the parameter's
// values are positive), then registers, predicted occupancy, log2 of static shared bytes, of
// block threads and of spilled bytes (0 where unknown).
std::vector<double> candidate_features(const Candidate& candidate,
                                       const std::vector<TuningParameter>& parameters);

class CostModel {
 public:
  struct Prediction {
    double mean = 0.0;
    double spread = 0.0;  // standard deviation over the trees
  };

  CostModel(std::uint64_t seed, int trees = 24);
  // Fits every tree on a bootstrap sample of (features, target) rows.
  void fit(const std::vector<std::vector<double>>& features, const std::vector<double>& targets);
  Prediction predict(const std::vector<double>& features) const;
  bool fitted() const noexcept { return !trees_.empty(); }

 private:
  struct Node {
    int feature = -1;  // -1: a leaf
    double threshold = 0.0;
    int left = -1;
    int right = -1;
    double value = 0.0;
  };
  using Tree = std::vector<Node>;

  int grow(Tree& tree, const std::vector<std::vector<double>>& features,
           const std::vector<double>& targets, std::vector<std::size_t>& rows, std::size_t first,
           std::size_t last, int depth);

  std::mt19937_64 random_;
  int tree_count_;
  std::vector<Tree> trees_;
};

// The candidates ready to time, handed out one at a time: first the highest predicted occupancy
// (then fewest registers), then a few at random among the register counts taken least often so
// the model sees the space and every kind of compiled code, then by the model: the lowest
// predicted log time less a share of its uncertainty.
class ModelGuidedOrder {
 public:
  // `space_size`: how many configs the tune will time at most (sets the random start's length).
  ModelGuidedOrder(std::vector<TuningParameter> parameters, std::size_t space_size,
                   std::uint64_t seed);

  void add(Candidate candidate);
  bool empty() const noexcept { return waiting_.empty(); }
  Candidate take();
  // What a timed candidate took: ok and cut ones teach the model (a cut time is a lower bound,
  // which is all the order needs of a slow config); the rest are no evidence about speed.
  void learn(const Candidate& candidate, const Measurement& measurement);

 private:
  std::size_t pick_by_model();
  std::size_t pick_unseen_code();

  std::vector<TuningParameter> parameters_;
  std::size_t initial_;
  std::mt19937_64 random_;
  CostModel model_;
  std::vector<Candidate> waiting_;
  std::vector<std::vector<double>> waiting_features_;
  std::vector<std::vector<double>> seen_features_;
  std::vector<double> seen_log_ms_;
  std::vector<int> taken_registers_;  // of every candidate handed out, in order
  std::size_t taken_ = 0;
  std::size_t fitted_at_ = 0;  // how many results the model was last fitted on
};

}  // namespace ptxrt::detail
