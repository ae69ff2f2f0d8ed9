#include "tune/candidate_order.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <iterator>
#include <optional>
#include <random>
#include <span>
#include <tuple>
#include <utility>

#include "tune/compile_pool.hpp"
#include "tune/cost_model.hpp"

namespace ptxrt::detail {

namespace {

// Exhaustive and random: the configs in their given order, compiled one at a time when asked
// for, or on a pool and handed out as the compiles land. The `leading` configs
// (TuneOptions::first) go out before any other, in the order they land: another config that
// lands while one of them still compiles waits for them.
class CompiledOrder final : public CandidateOrder {
 public:
  CompiledOrder(std::vector<TuningConfig> configs, std::size_t leading,
                const CandidateCompiler& compile, unsigned compile_threads)
      : configs_(std::move(configs)),
        leading_(leading),
        compile_(compile),
        compile_threads_(compile_threads) {}

  std::optional<Candidate> next() override {
    if (compile_threads_ == 0) {
      if (next_ == configs_.size()) return std::nullopt;
      return compile_safely(compile_, configs_[next_++]);
    }
    if (!pool_) pool_.emplace(configs_, compile_, compile_threads_);
    while (leading_out_ < leading_) {
      std::optional<Candidate> landed = pool_->next();
      if (!landed) break;
      const auto leading_end = configs_.begin() + static_cast<std::ptrdiff_t>(leading_);
      if (std::find(configs_.begin(), leading_end, landed->config) != leading_end) {
        ++leading_out_;
        return landed;
      }
      waiting_.push_back(std::move(*landed));
    }
    if (!waiting_.empty()) {
      Candidate candidate = std::move(waiting_.front());
      waiting_.pop_front();
      return candidate;
    }
    return pool_->next();
  }

  void learn(const Candidate&, const Measurement&) override {}

 private:
  const std::vector<TuningConfig> configs_;
  const std::size_t leading_;
  const CandidateCompiler& compile_;
  const unsigned compile_threads_;
  std::size_t next_ = 0;
  std::size_t leading_out_ = 0;      // leading configs handed out
  std::deque<Candidate> waiting_;    // landed before the last leading config, in landing order
  std::optional<CompilePool> pool_;  // last: it reads configs_
};

// Occupancy: everything compiled first, then the failures (they cost nothing to record and must
// not wait behind a budget), then the `leading` configs (TuneOptions::first) in their order, then
// the highest predicted occupancy first, then the fewest registers.
class OccupancyOrder final : public CandidateOrder {
 public:
  OccupancyOrder(std::vector<TuningConfig> configs, std::size_t leading,
                 const CandidateCompiler& compile, const TuneOptions& options)
      : configs_(std::move(configs)),
        leading_(leading),
        compile_(compile),
        compile_threads_(options.compile_threads),
        stop_(options.stop) {}

  std::optional<Candidate> next() override {
    if (!ranked_)
      ranked_ = rank(compile_all(configs_, compile_, compile_threads_, stop_),
                     std::span(configs_).first(leading_));
    if (ranked_->empty()) return std::nullopt;
    Candidate candidate = std::move(ranked_->front());
    ranked_->pop_front();
    return candidate;
  }

  void learn(const Candidate&, const Measurement&) override {}

 private:
  static std::deque<Candidate> rank(std::vector<Candidate> candidates,
                                    std::span<const TuningConfig> leading) {
    const auto key = [&](const Candidate& c) {
      const auto place = std::find(leading.begin(), leading.end(), c.config) - leading.begin();
      const double fraction = c.occupancy ? c.occupancy->fraction : 0.0;
      const int registers = c.resources ? c.resources->registers : 0;
      return std::make_tuple(place, -fraction, registers);
    };
    std::stable_sort(candidates.begin(), candidates.end(),
                     [&](const Candidate& a, const Candidate& b) { return key(a) < key(b); });
    std::stable_partition(candidates.begin(), candidates.end(),
                          [](const Candidate& c) { return c.state != Candidate::State::ready; });
    return {std::make_move_iterator(candidates.begin()), std::make_move_iterator(candidates.end())};
  }

  const std::vector<TuningConfig> configs_;
  const std::size_t leading_;
  const CandidateCompiler& compile_;
  const unsigned compile_threads_;
  const std::atomic<bool>* stop_;
  std::optional<std::deque<Candidate>> ranked_;  // once compiled
};

// Model: compiled in a random order after the `leading` configs (TuneOptions::first), which are
// handed out as they land; a failure is handed out as soon as it lands, a ready candidate joins
// the ModelGuidedOrder, which picks among what has landed when a measurer is free and learns from
// every measurement, the leading ones' included. Compiles land slower than configs are timed, so
// picking from the first to land would be picking at random: the first pick waits for about 32
// rounds of the compile threads (the whole of a space that small, which compiling inline always
// does), or a tenth of the time limit (kFirstPickWaitWithoutLimit where there is none), whichever
// ends first, and later picks take what has landed since. The bound matters where a compile takes
// seconds: 32 rounds of SGEMM configs on 16 threads take a minute or more, longer than a minute's
// tune, which then timed one config, and longer than a budget of a few configs calls for.
class ModelOrder final : public CandidateOrder {
 public:
  static constexpr std::chrono::seconds kFirstPickWaitWithoutLimit{10};

  ModelOrder(const TuningSpace& space, std::vector<TuningConfig> configs, std::size_t leading,
             const CandidateCompiler& compile, const TuneOptions& options)
      : configs_(shuffled_after(std::move(configs), leading, options.seed)),
        leading_(configs_.begin(), configs_.begin() + static_cast<std::ptrdiff_t>(leading)),
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
      if (!pool_) pool_.emplace(configs_, compile_, compile_threads_);
      for (Candidate& candidate : pool_->finished_now()) take(std::move(candidate));
      const bool leading_compiling = leading_landed_ < leading_.size();
      if (!leading_compiling && !waited_for_first_pick_) {
        wait_for_first_pick();
        waited_for_first_pick_ = true;
      }
      // While leading configs still compile, the strategy's picks wait for them.
      while (not_ready_.empty() && leading_ready_.empty() &&
             (leading_landed_ < leading_.size() || order_.empty())) {
        std::optional<Candidate> candidate = pool_->next();
        if (!candidate) break;
        take(std::move(*candidate));
      }
    }
    for (std::deque<Candidate>* waiting : {&not_ready_, &leading_ready_})
      if (!waiting->empty()) {
        Candidate candidate = std::move(waiting->front());
        waiting->pop_front();
        return candidate;
      }
    if (order_.empty()) return std::nullopt;
    return order_.take();
  }

  void learn(const Candidate& candidate, const Measurement& measurement) override {
    order_.learn(candidate, measurement);
  }

 private:
  static std::vector<TuningConfig> shuffled_after(std::vector<TuningConfig> configs,
                                                  std::size_t leading, std::uint64_t seed) {
    std::mt19937_64 generator(seed);
    std::shuffle(configs.begin() + static_cast<std::ptrdiff_t>(leading), configs.end(), generator);
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
    const bool leading =
        std::find(leading_.begin(), leading_.end(), candidate.config) != leading_.end();
    leading_landed_ += leading;
    if (candidate.state != Candidate::State::ready)
      not_ready_.push_back(std::move(candidate));
    else if (leading)
      leading_ready_.push_back(std::move(candidate));
    else
      order_.add(std::move(candidate));
  }

  const std::vector<TuningConfig> configs_;
  const std::vector<TuningConfig> leading_;
  const CandidateCompiler& compile_;
  const unsigned compile_threads_;
  const std::atomic<bool>* stop_;
  const std::chrono::steady_clock::time_point first_pick_deadline_;
  ModelGuidedOrder order_;
  std::deque<Candidate> not_ready_;      // pruned or failed, landed and not yet handed out
  std::deque<Candidate> leading_ready_;  // leading and ready, landed and not yet handed out
  std::size_t leading_landed_ = 0;
  bool waited_for_first_pick_ = false;
  bool compiled_inline_ = false;
  std::optional<CompilePool> pool_;  // last: it reads configs_
};

}  // namespace

std::unique_ptr<CandidateOrder> make_candidate_order(const TuningSpace& space,
                                                     std::vector<TuningConfig> configs,
                                                     const CandidateCompiler& compile,
                                                     const TuneOptions& options) {
  // tune() put the configs of options.first that are dealt to this share in front.
  std::size_t leading = 0;
  while (leading < configs.size() && std::find(options.first.begin(), options.first.end(),
                                               configs[leading]) != options.first.end())
    ++leading;
  switch (options.strategy) {
    case TuningStrategy::occupancy:
      return std::make_unique<OccupancyOrder>(std::move(configs), leading, compile, options);
    case TuningStrategy::model:
      return std::make_unique<ModelOrder>(space, std::move(configs), leading, compile, options);
    case TuningStrategy::exhaustive:
    case TuningStrategy::random:
      break;
  }
  return std::make_unique<CompiledOrder>(std::move(configs), leading, compile,
                                         options.compile_threads);
}

}  // namespace ptxrt::detail
