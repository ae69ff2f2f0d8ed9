#include "tune/compile_pool.hpp"

#include <algorithm>
#include <exception>
#include <iterator>
#include <string>

namespace ptxrt::detail {

Candidate compile_safely(const CandidateCompiler& compile, const TuningConfig& config) {
  try {
    return compile(config);
  } catch (const std::exception& error) {
    return {config, Candidate::State::compile_failed, error.what(), std::nullopt, std::nullopt};
  } catch (...) {
    // On a pool thread an escaping throw would end the process.
    return {config, Candidate::State::compile_failed,
            "the compiler threw something other than a std::exception", std::nullopt, std::nullopt};
  }
}

namespace {
thread_local std::stop_token current_pool_stop;
}  // namespace

std::stop_token pool_compile_stop() { return current_pool_stop; }

bool compile_failed(const Candidate& candidate) {
  return candidate.state == Candidate::State::compile_failed ||
         candidate.state == Candidate::State::compile_timeout;
}

CompilePool::CompilePool(const std::vector<TuningConfig>& configs, const CandidateCompiler& compile,
                         unsigned threads)
    : configs_(configs), compile_(compile) {
  const std::size_t count = std::min<std::size_t>(std::max(1u, threads), configs.size());
  for (std::size_t i = 0; i < count; ++i)
    threads_.emplace_back([this](std::stop_token stop) { work(stop); });
}

CompilePool::~CompilePool() {
  // All at once, so that no thread starts another compile while an earlier one is joined.
  for (std::jthread& thread : threads_) thread.request_stop();
}

Candidate CompilePool::take_first() {
  Candidate candidate = std::move(done_.front());
  done_.pop_front();
  ++delivered_;
  return candidate;
}

std::optional<Candidate> CompilePool::next() {
  std::unique_lock lock(mutex_);
  if (delivered_ == configs_.size()) return std::nullopt;
  finished_.wait(lock, [&] { return !done_.empty(); });
  return take_first();
}

std::optional<Candidate> CompilePool::next_until(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  if (delivered_ == configs_.size()) return std::nullopt;
  if (!finished_.wait_until(lock, deadline, [&] { return !done_.empty(); })) return std::nullopt;
  return take_first();
}

std::vector<Candidate> CompilePool::finished_now() {
  std::lock_guard lock(mutex_);
  std::vector<Candidate> candidates(std::make_move_iterator(done_.begin()),
                                    std::make_move_iterator(done_.end()));
  done_.clear();
  delivered_ += candidates.size();
  return candidates;
}

void CompilePool::work(std::stop_token stop) {
  current_pool_stop = stop;
  for (;;) {
    std::size_t index = 0;
    {
      std::lock_guard lock(mutex_);
      if (stop.stop_requested() || next_ == configs_.size()) return;
      index = next_++;
    }
    Candidate candidate = compile_safely(compile_, configs_[index]);
    {
      std::lock_guard lock(mutex_);
      done_.push_back(std::move(candidate));
    }
    finished_.notify_one();
  }
}

std::vector<Candidate> compile_all(const std::vector<TuningConfig>& configs,
                                   const CandidateCompiler& compile, unsigned threads,
                                   const std::atomic<bool>* stop) {
  const auto stopped = [stop] { return stop && stop->load(); };
  std::vector<Candidate> candidates;
  if (threads == 0) {
    for (std::size_t i = 0; i < configs.size() && !stopped(); ++i)
      candidates.push_back(compile_safely(compile, configs[i]));
    return candidates;
  }
  CompilePool pool(configs, compile, threads);
  while (std::optional<Candidate> candidate = pool.next()) {
    candidates.push_back(std::move(*candidate));
    if (stopped()) break;
  }
  return candidates;
}

}  // namespace ptxrt::detail
