#include "tune/measurer_pool.hpp"

#include <algorithm>
#include <chrono>

#include "ptxrt/core/error.hpp"
#include "tune/seconds_since.hpp"

namespace ptxrt::detail {

MeasurerPool::MeasurerPool(std::span<Measurer* const> measurers) {
  if (measurers.empty()) throw Error(ErrorKind::invalid_argument, "tune: no measurer given");
  for (Measurer* measurer : measurers) {
    if (measurer == nullptr)
      throw Error(ErrorKind::invalid_argument,
                  "tune: measurer " + std::to_string(lanes_.size()) + " is null");
    lanes_.push_back({measurer, std::nullopt, false});
  }
  if (lanes_.size() > 1)
    for (std::size_t lane = 0; lane < lanes_.size(); ++lane)
      threads_.emplace_back([this, lane](std::stop_token stop) { serve(stop, lane); });
}

MeasurerPool::~MeasurerPool() {
  // All at once: a lane asked to stop finishes the job it holds, then ends.
  for (std::jthread& thread : threads_) thread.request_stop();
}

void MeasurerPool::serve(std::stop_token stop, std::size_t lane) {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (!changed_.wait(lock, stop, [&] { return lanes_[lane].job.has_value(); })) return;
    Job job = std::move(*lanes_[lane].job);
    lanes_[lane].job.reset();
    Measurer& measurer = *lanes_[lane].measurer;
    lock.unlock();
    Outcome outcome{{std::move(job.candidate), {}}, nullptr};
    const auto start = std::chrono::steady_clock::now();
    try {
      outcome.finished.measurement = measurer.measure(outcome.finished.candidate, job.best_ms);
    } catch (...) {
      outcome.error = std::current_exception();
    }
    outcome.finished.seconds = seconds_since(start);
    lock.lock();
    finished_.push_back(std::move(outcome));
    lanes_[lane].busy = false;
    changed_.notify_all();
  }
}

bool MeasurerPool::any_free() const {
  return std::any_of(lanes_.begin(), lanes_.end(), [](const Lane& lane) { return !lane.busy; });
}

bool MeasurerPool::any_busy() const {
  return std::any_of(lanes_.begin(), lanes_.end(), [](const Lane& lane) { return lane.busy; });
}

std::vector<MeasurerPool::Finished> MeasurerPool::take_finished() {
  std::vector<Finished> taken;
  for (Outcome& outcome : finished_) {
    if (!outcome.error)
      taken.push_back(std::move(outcome.finished));
    else if (!failure_)
      failure_ = outcome.error;
  }
  finished_.clear();
  return taken;
}

std::vector<MeasurerPool::Finished> MeasurerPool::wait_for_free() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return any_free(); });
  return take_finished();
}

void MeasurerPool::start(const Candidate& candidate, std::optional<double> best_ms) {
  if (threads_.empty()) {
    const auto start = std::chrono::steady_clock::now();
    Measurement measurement = lanes_.front().measurer->measure(candidate, best_ms);
    finished_.push_back({{candidate, std::move(measurement), seconds_since(start)}, nullptr});
    return;
  }
  {
    std::lock_guard lock(mutex_);
    const auto free_lane =
        std::find_if(lanes_.begin(), lanes_.end(), [](const Lane& lane) { return !lane.busy; });
    free_lane->busy = true;
    free_lane->job = Job{candidate, best_ms};
  }
  changed_.notify_all();
}

std::vector<MeasurerPool::Finished> MeasurerPool::collect(bool all) {
  std::unique_lock lock(mutex_);
  if (all) changed_.wait(lock, [&] { return !any_busy(); });
  return take_finished();
}

}  // namespace ptxrt::detail
