#include "tune/candidate_order.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <iterator>
#include <optional>
#include <random>
#include <utility>

#include "tune/compile_pool.hpp"
#include "tune/cost_model.hpp"

namespace ptxrt::detail {

namespace {

// Exhaustive and random: the configs in their given order, compiled one at a time when asked
// for, or on a pool and handed out as the compiles land.
class CompiledOrder final : public CandidateOrder {
 public:
  CompiledOrder(std::vector<TuningConfig> configs, const CandidateCompiler& compile,
                unsigned compile_threads)
      : configs_(std::move(configs)), compile_(compile), compile_threads_(compile_threads) {}

  std::optional<Candidate> next() override {
    if (compile_threads_ == 0) {
      if (next_ == configs_.size()) return std::nullopt;
      return compile_safely(compile_, configs_[next_++]);
    }
    if (!pool_) pool_.emplace(configs_, compile_, compile_threads_);
    return pool_->next();
  }

  void learn(const Candidate&, const Measurement&) override {}

 private:
  const std::vector<TuningConfig> configs_;
  const CandidateCompiler& compile_;
  const unsigned compile_threads_;
  std::size_t next_ = 0;
  std::optional<CompilePool> pool_;  // last: it reads configs_
};

// Occupancy: everything compiled first, then the failures (they cost nothing to record and must
// not wait behind a budget), then the highest predicted occupancy first, then the fewest
// registers.
class OccupancyOrder final : public CandidateOrder {
 public:
  OccupancyOrder(std::vector<TuningConfig> configs, const CandidateCompiler& compile,
                 const TuneOptions& options)
      : configs_(std::move(configs)),
        compile_(compile),
        compile_threads_(options.compile_threads),
        stop_(options.stop) {}

  std::optional<Candidate> next() override {
    if (!ranked_) ranked_ = rank(compile_all(configs_, compile_, compile_threads_, stop_));
    if (ranked_->empty()) return std::nullopt;
    Candidate candidate = std::move(ranked_->front());
    ranked_->pop_front();
    return candidate;
  }

  void learn(const Candidate&, const Measurement&) override {}

 private:
  static std::deque<Candidate> rank(std::vector<Candidate> candidates) {
    const auto key = [](const Candidate& c) {
      const double fraction = c.occupancy ? c.occupancy->fraction : 0.0;
      const int registers = c.resources ? c.resources->registers : 0;
      return std::make_pair(-fraction, registers);
    };
    std::stable_sort(candidates.begin(), candidates.end(),
                     [&](const Candidate& a, const Candidate& b) { return key(a) < key(b); });
    std::stable_partition(candidates.begin(), candidates.end(),
                          [](const Candidate& c) { return c.state != Candidate::State::ready; });
    return {std::make_move_iterator(candidates.begin()), std::make_move_iterator(candidates.end())};
  }

  const std::vector<TuningConfig> configs_;
  const CandidateCompiler& compile_;
  const unsigned compile_threads_;
  const std::atomic<bool>* stop_;
  std::optional<std::deque<Candidate>> ranked_;  // once compiled
};

// Model: compiled in a random order; a failure is handed out as soon as it lands, a ready
// candidate joins the ModelGuidedOrder, which picks among what has landed when a measurer is
// free and learns from every measurement. Compiles land slower than configs are timed, so picking
// from the first to land would be picking at random: the first pick waits for about 32 rounds
// of the compile threads (the whole of a space that small, which compiling inline always does),
// or a tenth of the time limit (kFirstPickWaitWithoutLimit where there is none), whichever ends
// first, and later picks take what has landed since. The bound matters where a compile takes
// seconds: 32 rounds of SGEMM configs on 16 threads take a minute or more, longer than a minute's
// tune, which then timed one config, and longer than a budget of a few configs calls for.
class ModelOrder final : public CandidateOrder {
 public:
  static constexpr std::chrono::seconds kFirstPickWaitWithoutLimit{10};

  ModelOrder(const TuningSpace& space, std::vector<TuningConfig> configs,
             const CandidateCompiler& compile, const TuneOptions& options)
      : configs_(shuffled(std::move(configs), options.seed)),
        compile_(compile),
        compile_threads_(options.compile_threads),
        stop_(options.stop),
        first_pick_deadline_(first_pick_deadline(options)),
        order_(space.parameters(), configs_.size(), options.seed) {}

  std::optional<Candidate> next() override {
    if (compile_threads_ == 0) {
      if (!compiled_inline_)
        for (Candidate& candidate : compile_all(configs_, compile_, 0, stop_))
          take(std::move(candidate));
      compiled_inline_ = true;
    } else {
      if (!pool_) {
        pool_.emplace(configs_, compile_, compile_threads_);
        wait_for_first_pick();
      }
      for (Candidate& candidate : pool_->finished_now()) take(std::move(candidate));
      while (not_ready_.empty() && order_.empty()) {
        std::optional<Candidate> candidate = pool_->next();
        if (!candidate) break;
        take(std::move(*candidate));
      }
    }
    if (!not_ready_.empty()) {
      Candidate candidate = std::move(not_ready_.front());
      not_ready_.pop_front();
      return candidate;
    }
    if (order_.empty()) return std::nullopt;
    return order_.take();
  }

  void learn(const Candidate& candidate, const Measurement& measurement) override {
    order_.learn(candidate, measurement);
  }

 private:
  static std::vector<TuningConfig> shuffled(std::vector<TuningConfig> configs, std::uint64_t seed) {
    std::mt19937_64 generator(seed);
    std::shuffle(configs.begin(), configs.end(), generator);
    return configs;
  }

  static std::chrono::steady_clock::time_point first_pick_deadline(const TuneOptions& options) {
    const std::chrono::duration<double> wait =
        options.time_limit_seconds
            ? std::chrono::duration<double>(*options.time_limit_seconds / 10.0)
            : kFirstPickWaitWithoutLimit;
    return std::chrono::steady_clock::now() +
           std::chrono::duration_cast<std::chrono::steady_clock::duration>(wait);
  }

  void wait_for_first_pick() {
    const std::size_t rounds = 32;
    const std::size_t wanted = std::min(configs_.size(), rounds * compile_threads_);
    for (std::size_t landed = 0; landed < wanted && !(stop_ && *stop_); ++landed) {
      std::optional<Candidate> candidate = pool_->next_until(first_pick_deadline_);
      if (!candidate) break;
      take(std::move(*candidate));
    }
  }

  void take(Candidate candidate) {
    if (candidate.state == Candidate::State::ready)
      order_.add(std::move(candidate));
    else
      not_ready_.push_back(std::move(candidate));
  }

  const std::vector<TuningConfig> configs_;
  const CandidateCompiler& compile_;
  const unsigned compile_threads_;
  const std::atomic<bool>* stop_;
  const std::chrono::steady_clock::time_point first_pick_deadline_;
  ModelGuidedOrder order_;
  std::deque<Candidate> not_ready_;  // pruned or failed, landed and not yet handed out
  bool compiled_inline_ = false;
  std::optional<CompilePool> pool_;  // last: it reads configs_
};

}  // namespace

std::unique_ptr<CandidateOrder> make_candidate_order(const TuningSpace& space,
                                                     std::vector<TuningConfig> configs,
                                                     const CandidateCompiler& compile,
                                                     const TuneOptions& options) {
  switch (options.strategy) {
    case TuningStrategy::occupancy:
      return std::make_unique<OccupancyOrder>(std::move(configs), compile, options);
    case TuningStrategy::model:
      return std::make_unique<ModelOrder>(space, std::move(configs), compile, options);
    case TuningStrategy::exhaustive:
    case TuningStrategy::random:
      break;
  }
  return std::make_unique<CompiledOrder>(std::move(configs), compile, options.compile_threads);
}

}  // namespace ptxrt::detail
