#include "ptxrt/tune/tuner.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <iterator>
#include <memory>
#include <random>
#include <unordered_map>

#include "ptxrt/core/error.hpp"
#include "support/usable_cpus.hpp"
#include "tune/candidate_order.hpp"
#include "tune/compile_pool.hpp"
#include "tune/measurer_pool.hpp"

namespace ptxrt {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double quantile(const std::vector<double>& sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(position);
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return sorted[below] + (sorted[above] - sorted[below]) * fraction;
}

double median_of(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  return quantile(samples, 0.5);
}

std::string spill_note(const Candidate& candidate) {
  return "spills " + std::to_string(candidate.resources->spill_store_bytes.value_or(0)) +
         " bytes stored, " + std::to_string(candidate.resources->spill_load_bytes.value_or(0)) +
         " loaded";
}

// One tune in progress: what has been handled, the best so far, the stopping rules. It owns the
// strategy's order and the measurers' pool, and returns from handle_all() only once every
// measurement in flight has landed and been folded in (the order learning from each), so that
// no measurement outlives the order it teaches or is lost to the report and the database.
class TuneRun {
 public:
  // `total`: how many configs `order` holds.
  TuneRun(std::unique_ptr<detail::CandidateOrder> order, std::span<Measurer* const> measurers,
          const TuneOptions& options, const std::function<void(const TuneProgress&)>& progress,
          TuneReport& report, std::size_t total)
      : order_(std::move(order)),
        measurers_(measurers),
        options_(options),
        budget_(share_budget(options)),
        key_(options.recorded_key()),
        progress_(progress),
        report_(report),
        total_(total) {
    best_ = best_measurement(report.resumed, options.objective);
  }

  // Handles the order's candidates until it has none left or wants_more() says to stop, then
  // folds in what the measurers still hold. A measurer's throw is rethrown once the others have
  // finished what they hold and their measurements are folded in.
  void handle_all() {
    while (wants_more()) {
      // A free measurer first, so that the order picks knowing every measurement landed by then.
      fold_landed(measurers_.wait_for_free());
      if (!wants_more()) break;  // a stop request or the time limit came while waiting
      std::optional<Candidate> candidate = order_->next();
      if (!candidate || !wants_more()) break;  // ... or while compiling
      handle(*candidate);
    }
    fold_landed(measurers_.collect(true));
    report_.not_reached = total_ - handled_;
    report_.winner = best_;
  }

 private:
  // False once the budget, the time limit or a stop request says to stop.
  bool wants_more() const {
    if (options_.stop && options_.stop->load()) return false;
    if (budget_ && started_ >= *budget_) return false;
    if (options_.time_limit_seconds && seconds_since(start_) >= *options_.time_limit_seconds)
      return false;
    return true;
  }

  void handle(const Candidate& candidate) {
    ++handled_;
    if (detail::compile_failed(candidate)) {
      const bool timeout = candidate.state == Candidate::State::compile_timeout;
      report_.compile_failures.push_back({candidate.config, candidate.reason});
      report_.compile_timeouts += timeout;
      record({.config = candidate.config,
              .status = timeout ? MeasurementStatus::compile_timeout : MeasurementStatus::failed,
              .detail = "compile: " + candidate.reason});
      settled();
    } else {
      ++report_.compiled;
      if (candidate.state == Candidate::State::pruned) {
        report_.pruned_by_resources.push_back({candidate.config, candidate.reason});
        settled();
      } else {
        measure(candidate);
      }
    }
  }

  // Hands the candidate to a free measurer with the best time known by then, when the objective
  // is time: only then may a slower config be cut.
  void measure(const Candidate& candidate) {
    record({.config = candidate.config, .status = MeasurementStatus::started});
    ++started_;
    const bool cuts = options_.objective == Objective{};
    measurers_.start(candidate,
                     best_ && cuts ? std::optional<double>(best_->median_ms) : std::nullopt);
    fold_landed(measurers_.collect(false));
  }

  void fold_landed(std::vector<detail::MeasurerPool::Finished> landed) {
    fold(std::move(landed));
    if (const std::exception_ptr failure = measurers_.failure()) {
      fold(measurers_.collect(true));
      std::rethrow_exception(failure);
    }
  }

  void fold(std::vector<detail::MeasurerPool::Finished> finished) {
    for (auto& [candidate, measurement, seconds] : finished) {
      report_.measuring_seconds += seconds;
      measurement.config = candidate.config;
      if (candidate.spill_bytes() > 0)
        measurement.detail +=
            std::string(measurement.detail.empty() ? "" : "; ") + spill_note(candidate);
      record(measurement);
      if (best_)
        best_ = best_measurement({*best_, measurement}, options_.objective);
      else
        best_ = best_measurement({measurement}, options_.objective);
      order_->learn(candidate, measurement);
      report_.results.push_back({std::move(measurement), candidate.resources, candidate.occupancy,
                                 candidate.shape, seconds_since(start_)});
      settled();
    }
  }

  // One more config has its outcome.
  void settled() {
    ++done_;
    report_progress();
  }

  void record(const Measurement& measurement) const {
    if (options_.database) options_.database->record(key_, measurement);
  }

  void report_progress() const {
    if (!progress_) return;
    const double elapsed = seconds_since(start_);
    const double eta = elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_);
    progress_({done_, total_, best_, elapsed, eta});
  }

  // This share's part of the budget.
  static std::optional<std::size_t> share_budget(const TuneOptions& options) {
    if (!options.budget) return std::nullopt;
    const auto [index, count] = options.share;
    return *options.budget / count + (index < *options.budget % count ? 1 : 0);
  }

  const std::unique_ptr<detail::CandidateOrder> order_;
  detail::MeasurerPool measurers_;
  const TuneOptions& options_;
  std::optional<std::size_t> budget_;
  const TuningKey key_;
  const std::function<void(const TuneProgress&)>& progress_;
  TuneReport& report_;
  std::size_t total_;
  std::size_t handled_ = 0;  // handed to the run: settled or in flight
  std::size_t started_ = 0;  // handed to a measurer
  std::size_t done_ = 0;     // settled
  std::optional<Measurement> best_;
  Clock::time_point start_ = Clock::now();
};

// `ordered` led by `first` (TuneOptions::first), each once, in its order.
std::vector<TuningConfig> led_by(std::vector<TuningConfig> ordered, const TuningSpace& space,
                                 const std::vector<TuningConfig>& first) {
  if (first.empty()) return ordered;
  std::vector<TuningConfig> leading;
  for (const TuningConfig& config : first) {
    if (std::find(leading.begin(), leading.end(), config) != leading.end()) continue;
    Verdict allowed = space.contains(config);
    if (allowed) allowed = space.admits(config);
    if (!allowed)
      throw Error(ErrorKind::invalid_argument,
                  "tune: TuneOptions::first names " + config.describe() +
                      ", which the space does not allow: " + allowed.reason());
    leading.push_back(config);
  }
  std::erase_if(ordered, [&](const TuningConfig& config) {
    return std::find(leading.begin(), leading.end(), config) != leading.end();
  });
  leading.insert(leading.end(), std::make_move_iterator(ordered.begin()),
                 std::make_move_iterator(ordered.end()));
  return leading;
}

// The configs of this share: every count-th of `ordered`, from position index.
std::vector<TuningConfig> share_of(std::vector<TuningConfig> ordered, const TuneShare& share) {
  if (share.count == 0 || share.index >= share.count)
    throw Error(ErrorKind::invalid_argument,
                "tune: share " + std::to_string(share.index) + " of " +
                    std::to_string(share.count) +
                    " does not exist: the index counts from 0 and must be below the count");
  if (share.count == 1) return ordered;
  std::vector<TuningConfig> mine;
  for (std::size_t position = share.index; position < ordered.size(); position += share.count)
    mine.push_back(std::move(ordered[position]));
  return mine;
}

// Splits the allowed configs into those to run and those the database has finished (resume).
std::vector<TuningConfig> still_to_run(const std::vector<TuningConfig>& allowed,
                                       const TuneOptions& options, TuneReport& report) {
  if (!options.resume || options.database == nullptr) return allowed;
  const std::vector<Measurement> recorded = options.database->measurements(options.recorded_key());
  std::vector<TuningConfig> remaining;
  for (const TuningConfig& config : allowed) {
    auto found = std::find_if(recorded.begin(), recorded.end(), [&](const Measurement& m) {
      return m.config == config && m.finished();
    });
    if (found == recorded.end())
      remaining.push_back(config);
    else
      report.resumed.push_back(*found);
  }
  return remaining;
}

}  // namespace

unsigned default_compile_threads() { return usable_cpu_count(); }

std::string_view to_string(TuningStrategy strategy) {
  switch (strategy) {
    case TuningStrategy::exhaustive:
      return "exhaustive";
    case TuningStrategy::random:
      return "random";
    case TuningStrategy::occupancy:
      return "occupancy";
    case TuningStrategy::model:
      return "model";
  }
  return "unknown";
}

TuningStrategy parse_tuning_strategy(std::string_view name) {
  for (TuningStrategy strategy : {TuningStrategy::exhaustive, TuningStrategy::random,
                                  TuningStrategy::occupancy, TuningStrategy::model})
    if (to_string(strategy) == name) return strategy;
  throw Error(ErrorKind::invalid_argument, "tuning strategy '" + std::string(name) +
                                               "' is unknown: expected exhaustive, random, "
                                               "occupancy or model");
}

std::size_t Candidate::spill_bytes() const {
  if (!resources) return 0;
  return resources->spill_store_bytes.value_or(0) + resources->spill_load_bytes.value_or(0);
}

Verdict launch_fits(const KernelResources& resources, const LaunchShape& shape,
                    const DeviceProperties& device) {
  const std::string threads = std::to_string(shape.block_threads);
  if (shape.block_threads < 1)
    return Verdict::refused("a block of " + threads + " threads cannot launch");
  if (shape.block_threads > device.max_threads_per_block)
    return Verdict::refused("a block of " + threads + " threads exceeds the device's " +
                            std::to_string(device.max_threads_per_block));
  if (resources.max_threads_per_block > 0 && shape.block_threads > resources.max_threads_per_block)
    return Verdict::refused("a block of " + threads +
                            " threads exceeds the kernel's launch bound of " +
                            std::to_string(resources.max_threads_per_block));
  const std::size_t shared = resources.static_shared_bytes + shape.dynamic_shared_bytes;
  if (shared > device.shared_memory_per_block_optin)
    return Verdict::refused(std::to_string(shared) +
                            " bytes of shared memory per block exceed the device's " +
                            std::to_string(device.shared_memory_per_block_optin));
  const long long registers = static_cast<long long>(resources.registers) * shape.block_threads;
  if (registers > device.registers_per_block)
    return Verdict::refused(std::to_string(resources.registers) + " registers × " + threads +
                            " threads exceed the " + std::to_string(device.registers_per_block) +
                            " registers of a block");
  try {
    const Occupancy occupancy =
        compute_occupancy(arch_limits(device.cc_major, device.cc_minor), resources,
                          shape.block_threads, shape.dynamic_shared_bytes);
    if (occupancy.active_blocks_per_sm == 0) return Verdict::refused(occupancy.reason);
  } catch (const Error&) {
    // A capability the occupancy table does not know: the per-block checks above are all we have.
  }
  return {};
}

CandidateCompiler jit_candidate_compiler(Jit& jit, Program program, CompileOptions base,
                                         std::string entry,
                                         std::function<LaunchShape(const TuningConfig&)> shape,
                                         DeviceProperties device) {
  if (base.target.arch.empty())
    throw Error(ErrorKind::invalid_argument, "tuning " + program.name() + ": no target arch");
  return [&jit, program = std::move(program), base = std::move(base), entry = std::move(entry),
          shape = std::move(shape), device = std::move(device)](const TuningConfig& config) {
    Candidate candidate{config, Candidate::State::ready, {}, std::nullopt, std::nullopt};
    CompileOptions options = base;
    options.defines.insert(options.defines.end(), config.defines().begin(), config.defines().end());
    if (std::stop_token pool_stop = detail::pool_compile_stop(); pool_stop.stop_possible())
      options.stop = std::move(pool_stop);
    const int driver_version =
        options.target.format == ImageFormat::ptx ? device.driver_version : 0;
    std::shared_ptr<const Image> image;
    try {
      image = jit.image(program, options, driver_version);
    } catch (const Error& error) {
      const bool cancelled = error.code_name() == "NVRTC_ERROR_CANCELLED";
      return Candidate{
          config, cancelled ? Candidate::State::compile_timeout : Candidate::State::compile_failed,
          error.what(), std::nullopt, std::nullopt};
    }
    std::vector<KernelResources> kernels = image_resources(*image);
    std::string_view symbol = entry;
    for (const auto& [expression, lowered] : image->lowered_names)
      if (expression == entry) symbol = lowered;
    const LaunchShape launch = shape(config);
    candidate.shape = launch;
    auto found = std::find_if(kernels.begin(), kernels.end(),
                              [&](const KernelResources& kernel) { return kernel.name == symbol; });
    if (found == kernels.end()) return candidate;  // PTX: the driver decides at load time
    candidate.resources = *found;
    if (Verdict fits = launch_fits(*found, launch, device); !fits) {
      candidate.state = Candidate::State::pruned;
      candidate.reason = fits.reason();
      return candidate;
    }
    try {
      candidate.occupancy = compute_occupancy(arch_limits(device.cc_major, device.cc_minor), *found,
                                              launch.block_threads, launch.dynamic_shared_bytes);
    } catch (const Error&) {
      // Unknown capability: no prediction, the occupancy strategy ranks it last.
    }
    return candidate;
  };
}

TuningKey TuneOptions::recorded_key() const {
  TuningKey recorded = key;
  recorded.l2 = timing.l2;
  recorded.objective = objective;
  return recorded;
}

double relative_spread(std::vector<double> samples) {
  if (samples.size() < 2) return 0.0;
  std::sort(samples.begin(), samples.end());
  const double middle = quantile(samples, 0.5);
  if (middle <= 0.0) return 0.0;
  return (quantile(samples, 0.75) - quantile(samples, 0.25)) / middle;
}

TimingResult time_samples(const TimingPolicy& policy, std::optional<double> best_ms,
                          const std::function<double()>& sample) {
  for (int run = 0; run < policy.warmup_runs; ++run) sample();
  const Clock::time_point start = Clock::now();
  std::vector<double> samples;
  TimingResult result;
  for (;;) {
    samples.push_back(sample());
    const int runs = static_cast<int>(samples.size());
    result.median_ms = median_of(samples);
    result.spread = relative_spread(samples);
    result.runs = runs;
    if (best_ms && runs >= policy.cut_after && result.median_ms > *best_ms * policy.cut_ratio) {
      result.cut = true;
      return result;
    }
    if (runs >= policy.min_runs && result.spread <= policy.target_spread) {
      result.converged = true;
      return result;
    }
    if (runs >= policy.max_runs) return result;
    if (runs >= policy.cut_after && seconds_since(start) >= policy.max_seconds) return result;
  }
}

TunePlan plan_tune(const TuningSpace& space, const CandidateCompiler& compile,
                   const PlanOptions& options) {
  const Clock::time_point start = Clock::now();
  TunePlan plan;
  plan.space_size = space.size();
  SpaceEnumeration enumeration = space.enumerate();
  plan.pruned_by_constraints = std::move(enumeration.pruned);
  const std::vector<TuningConfig>& allowed = enumeration.allowed;
  const auto wants_more = [&] {
    if (options.stop && options.stop->load()) return false;
    return !options.time_limit_seconds || seconds_since(start) < *options.time_limit_seconds;
  };
  // The pool hands compiles over as they finish: each goes back to its place in enumeration
  // order, found by its config in one lookup (a space may hold a million).
  std::unordered_map<std::string, std::size_t> place;
  for (std::size_t i = 0; i < allowed.size(); ++i) place.emplace(allowed[i].describe(), i);
  std::vector<std::optional<Candidate>> compiled(allowed.size());
  std::size_t done = 0;
  const auto take = [&](Candidate candidate) {
    compiled[place.at(candidate.config.describe())] = std::move(candidate);
    ++done;
    if (!options.progress) return;
    const double elapsed = seconds_since(start);
    options.progress(
        {done, allowed.size(), std::nullopt, elapsed,
         elapsed / static_cast<double>(done) * static_cast<double>(allowed.size() - done)});
  };
  if (options.compile_threads == 0) {
    for (std::size_t i = 0; i < allowed.size() && wants_more(); ++i)
      take(detail::compile_safely(compile, allowed[i]));
  } else {
    detail::CompilePool pool(allowed, compile, options.compile_threads);
    while (wants_more()) {
      std::optional<Candidate> candidate = pool.next();
      if (!candidate) break;
      take(std::move(*candidate));
    }
  }
  for (std::optional<Candidate>& candidate : compiled) {
    if (!candidate)
      ++plan.not_compiled;
    else if (detail::compile_failed(*candidate))
      plan.compile_failures.push_back({candidate->config, candidate->reason});
    else if (candidate->state == Candidate::State::pruned)
      plan.pruned_by_resources.push_back({candidate->config, candidate->reason});
    else
      plan.ready.push_back(std::move(*candidate));
  }
  return plan;
}

TuneReport tune(const TuningSpace& space, const CandidateCompiler& compile, Measurer& measurer,
                const TuneOptions& options,
                const std::function<void(const TuneProgress&)>& progress) {
  Measurer* const only[] = {&measurer};
  return tune(space, compile, only, options, progress);
}

TuneReport tune(const TuningSpace& space, const CandidateCompiler& compile,
                std::span<Measurer* const> measurers, const TuneOptions& options,
                const std::function<void(const TuneProgress&)>& progress) {
  const Clock::time_point start = Clock::now();
  TuneReport report;
  report.space_size = space.size();
  SpaceEnumeration enumeration = space.enumerate();
  report.pruned_by_constraints = std::move(enumeration.pruned);
  // Ordered before the share is taken and the finished are skipped, so that every share and
  // every resumed run deals from the same order.
  std::vector<TuningConfig> ordered = std::move(enumeration.allowed);
  if (options.strategy == TuningStrategy::random) {
    std::mt19937_64 generator(options.seed);
    std::shuffle(ordered.begin(), ordered.end(), generator);
  }
  ordered = led_by(std::move(ordered), space, options.first);
  std::vector<TuningConfig> configs =
      still_to_run(share_of(std::move(ordered), options.share), options, report);
  const std::size_t total = configs.size();
  {
    // Destroying the run stops its compile pool and waits for the compiles still in flight,
    // which may take seconds; the wall time is read after that, so that the report counts them.
    TuneRun run(detail::make_candidate_order(space, std::move(configs), compile, options),
                measurers, options, progress, report, total);
    run.handle_all();
  }
  report.wall_seconds = seconds_since(start);
  return report;
}

}  // namespace ptxrt
