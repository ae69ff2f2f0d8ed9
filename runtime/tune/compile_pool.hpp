// Compiling a tune's configs (tuner.cpp, candidate_order.cpp): a CandidateCompiler's throw made
// a compile failure, and a pool of threads that hands compiles over as they finish.
//
// Thread safety: CompilePool's members are called from one thread (the tune's); its threads call
// the CandidateCompiler, which must be thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <stop_token>
#include <thread>
#include <vector>

#include "ptxrt/tune/tuner.hpp"

namespace ptxrt::detail {

// compile(config), with a throw recorded as the config's compile failure.
Candidate compile_safely(const CandidateCompiler& compile, const TuningConfig& config);

bool compile_failed(const Candidate& candidate);

// Compiles `configs` on `threads` threads, handing results over as they finish. `configs` and
// `compile` must outlive the pool. Destroying the pool stops it taking new configs and waits for
// the compiles in flight.
class CompilePool {
 public:
  CompilePool(const std::vector<TuningConfig>& configs, const CandidateCompiler& compile,
              unsigned threads);
  ~CompilePool();
  CompilePool(const CompilePool&) = delete;
  CompilePool& operator=(const CompilePool&) = delete;

  // The next finished compile, or nothing once every config has been handed over.
  std::optional<Candidate> next();
  // The same, or nothing when none finishes before `deadline`.
  std::optional<Candidate> next_until(std::chrono::steady_clock::time_point deadline);
  // The compiles finished by now, without waiting.
  std::vector<Candidate> finished_now();

 private:
  void work(std::stop_token stop);
  Candidate take_first();  // of done_, which holds one; under mutex_

  const std::vector<TuningConfig>& configs_;
  const CandidateCompiler& compile_;
  std::mutex mutex_;
  std::condition_variable finished_;
  std::deque<Candidate> done_;
  std::size_t next_ = 0;
  std::size_t delivered_ = 0;
  // Last: destroyed first, each asked to stop and joined while the members above still exist
  // (also when the constructor throws part way).
  std::vector<std::jthread> threads_;
};

// On a CompilePool's thread, the token the pool's destruction stops; elsewhere one that never
// stops. A candidate compiler hands it to its compiles (CompileOptions::stop), so that the
// compiles in flight when a tune ends are cancelled rather than waited for.
std::stop_token pool_compile_stop();

// Every config compiled (on `threads` threads; 0: on this one), in the order the compiles
// finish. Once *stop is true (`stop` may be null) the compiles still to come are left out:
// nothing is timed after a stop request anyway.
std::vector<Candidate> compile_all(const std::vector<TuningConfig>& configs,
                                   const CandidateCompiler& compile, unsigned threads,
                                   const std::atomic<bool>* stop);

}  // namespace ptxrt::detail
