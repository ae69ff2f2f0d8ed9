// The tuning strategies (tuner.cpp), each as the order in which a tune gets its compiled
// candidates: exhaustive and random as the compiles land, occupancy after compiling all, model
// as a cost model picks from what has landed, learning from every measurement.
//
// A tune owns its order for as long as it has measurements in flight, and hands it each one
// (learn) as it lands: nothing the order holds can be gone when a late measurement comes.
//
// Thread safety: one thread (the tune's) calls every member; compiles run on a pool of the
// order's own, which it stops and waits for when destroyed.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "ptxrt/tune/tuner.hpp"

namespace ptxrt::detail {

class CandidateOrder {
 public:
  virtual ~CandidateOrder() = default;
  // The next candidate to handle (ready to time, pruned, or failed to compile), or nothing once
  // every config has been handed out. May wait for a compile.
  virtual std::optional<Candidate> next() = 0;
  // The measurement of a candidate this order handed out, as it lands.
  virtual void learn(const Candidate& candidate, const Measurement& measurement) = 0;
};

// The order of options.strategy over `configs` (already dealt to this share, in the strategy's
// order for random), compiled by `compile` on options.compile_threads threads (0: each on the
// calling thread when it is asked for). `compile` must outlive the order; nothing is compiled
// before the first next().
std::unique_ptr<CandidateOrder> make_candidate_order(const TuningSpace& space,
                                                     std::vector<TuningConfig> configs,
                                                     const CandidateCompiler& compile,
                                                     const TuneOptions& options);

}  // namespace ptxrt::detail
