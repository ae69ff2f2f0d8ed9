// The tune's measurers at work (runtime/tuner.cpp): each ready candidate goes to a free
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
#include <thread>
#include <vector>

#include "ptxrt/tuner.hpp"

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
  // Waits for the measurements in flight; what they return is dropped.
  ~MeasurerPool();
  MeasurerPool(const MeasurerPool&) = delete;
  MeasurerPool& operator=(const MeasurerPool&) = delete;

  // Waits until a measurer is free; returns the measurements that finished meanwhile. A
  // measurer's throw is rethrown here (or by collect), once, on the tune's thread.
  std::vector<Finished> wait_for_free();
  // Hands `candidate` to a free measurer (there is one after wait_for_free).
  void start(const Candidate& candidate, std::optional<double> best_ms);
  // The measurements finished since the last call; with `all`, after every one in flight.
  std::vector<Finished> collect(bool all);

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

  void serve(std::size_t lane);
  bool any_free() const;
  bool any_busy() const;
  std::vector<Finished> take_finished();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Lane> lanes_;
  std::deque<Outcome> finished_;
  bool stopping_ = false;
  std::vector<std::jthread> threads_;  // last: joined before the members above are destroyed
};

}  // namespace ptxrt::detail
