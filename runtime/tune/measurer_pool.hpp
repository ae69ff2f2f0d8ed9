// The tune's measurers at work (tuner.cpp): each ready candidate goes to a free
// Measurer. With several, each has a thread of its own (its calls come from that thread, one at
// a time) and the tune's thread hands candidates over and collects the measurements, so that
// the measurers time at once. With one there is no thread: start() measures on the calling
// thread, as a tune always did.
//
// Thread safety: one thread (the tune's) calls every member.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <span>
#include <stop_token>
#include <thread>
#include <vector>

#include "ptxrt/tune/tuner.hpp"

namespace ptxrt::detail {

class MeasurerPool {
 public:
  struct Finished {
    Candidate candidate;
    Measurement measurement;
    double seconds = 0.0;  // how long its measure() took
  };

  // Error(invalid_argument) for no measurers or a null one.
  explicit MeasurerPool(std::span<Measurer* const> measurers);
  // Waits for the measurements in flight; what they return is dropped: collect(true) first to
  // keep them.
  ~MeasurerPool();
  MeasurerPool(const MeasurerPool&) = delete;
  MeasurerPool& operator=(const MeasurerPool&) = delete;

  // Waits until a measurer is free; returns the measurements that finished meanwhile.
  std::vector<Finished> wait_for_free();
  // Hands `candidate` to a free measurer (there is one after wait_for_free). With one measurer,
  // measures it here, its throw going straight to the caller.
  void start(const Candidate& candidate, std::optional<double> best_ms);
  // The measurements finished since the last call; with `all`, after every one in flight.
  std::vector<Finished> collect(bool all);
  // The first throw of a measurer among those collected so far (wait_for_free, collect): the
  // tune ends with it, once the other measurers have finished what they hold.
  std::exception_ptr failure() const noexcept { return failure_; }

 private:
  struct Job {
    Candidate candidate;
    std::optional<double> best_ms;
  };
  struct Lane {
    Measurer* measurer = nullptr;
    std::optional<Job> job;  // handed over by start(), taken by the lane's thread
    bool busy = false;       // from start() until its measurement is in finished_
  };
  struct Outcome {
    Finished finished;
    std::exception_ptr error;
  };

  void serve(std::stop_token stop, std::size_t lane);
  bool any_free() const;
  bool any_busy() const;
  std::vector<Finished> take_finished();

  std::mutex mutex_;
  std::condition_variable_any changed_;  // wakes on a stop request too
  std::vector<Lane> lanes_;
  std::deque<Outcome> finished_;
  std::exception_ptr failure_;
  // Last: destroyed first, each asked to stop and joined while the members above still exist
  // (also when the constructor throws part way).
  std::vector<std::jthread> threads_;
};

}  // namespace ptxrt::detail
