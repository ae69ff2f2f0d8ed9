// Many host threads on one GPU: 64 threads × 1000 launches mixing four built-in kernels in seven
// specializations, all through one Jit (shared modules and shared libraries), each thread on its
// own stream with a context of the application's current. Every launch writes into a poisoned
// output and is verified: exactly against the CPU for the additions; for matmul and reduce_sum the
// first result of each specialization against the CPU within the reference's documented error,
// and every later one bit for bit against that first (same launch, same bits).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "apps/common/builtin_kernels.hpp"
#include "apps/common/reference.hpp"
#include "gpu_fixture.hpp"
#include "ptxrt/core/library.hpp"

using namespace ptxrt;
using ptxrt::testing::poison_word;
using ptxrt::testing::random_floats;
using ptxrt::testing::test_context;

namespace {

// Fewer under compute-sanitizer, where every launch is instrumented and tracked: racecheck lost
// track of a launch among 64 threads' (an internal error of the tool, reported as one).
const int thread_count = ptxrt::testing::full_or_sanitized(64, 16);
const int launches_per_thread = ptxrt::testing::full_or_sanitized(1000, 50);
// A deadlock must fail the run, not hang it; the whole test takes seconds when healthy. Under
// compute-sanitizer other tests' instrumented kernels may hold the GPU for minutes.
const std::chrono::seconds deadline{ptxrt::testing::full_or_sanitized(240, 400)};
// Kernels are resolved through the Jit again every this many launches (a cache hit under load).
constexpr int resolve_every = 50;

// Shapes chosen so that no size is a multiple of any tile or block.
constexpr int rows = 45, cols = 67;            // matrix_add
constexpr int m = 33, n = 29, k = 31;          // matmul_tiled: A m×k, B k×n
constexpr long long reduce_count = 5000;       // reduce_sum
constexpr long long vector_base_count = 5003;  // vector_add: plus 13 per thread
constexpr double matmul_tolerance = 1e-5;      // about k·2^-24 relative to max|C|
constexpr double reduce_tolerance = 1e-5;      // relative to sum|x|

enum class Family { vector_add, matrix_add, matmul, reduce_sum };

struct Variant {
  Family family;
  std::vector<Define> defines;
  int block_x = 0, block_y = 0;  // from the defines, for the launch shape
};

const std::vector<Variant>& variants() {
  static const std::vector<Variant> all = {
      {Family::vector_add, {}, 256, 1},
      {Family::matrix_add, {{"BLOCK_X", "32"}, {"BLOCK_Y", "16"}}, 32, 16},
      {Family::matrix_add, {{"BLOCK_X", "16"}, {"BLOCK_Y", "8"}}, 16, 8},
      {Family::matmul, {{"TILE_WIDTH", "8"}}, 8, 8},
      {Family::matmul, {{"TILE_WIDTH", "16"}}, 16, 16},
      {Family::reduce_sum, {{"BLOCK_SIZE", "128"}}, 128, 1},
      {Family::reduce_sum, {{"BLOCK_SIZE", "256"}}, 256, 1}};
  return all;
}

const Program& program_of(Family family) {
  static const std::map<Family, Program> programs = {
      {Family::vector_add, apps::builtin_program("vector_add")},
      {Family::matrix_add, apps::builtin_program("matrix_add")},
      {Family::matmul, apps::builtin_program("matmul_tiled")},
      {Family::reduce_sum, apps::builtin_program("reduce")}};
  return programs.at(family);
}

std::string entry_of(Family family) {
  switch (family) {
    case Family::vector_add:
      return "vector_add";
    case Family::matrix_add:
      return "matrix_add";
    case Family::matmul:
      return "matmul_tiled";
    case Family::reduce_sum:
      return "reduce_sum";
  }
  return {};
}

// Odd threads take their kernels from the Jit's shared Library, even ones from its Module.
Kernel resolve(Jit& jit, const Variant& variant, bool through_library) {
  const CompileOptions options = Jit::target_for({.defines = variant.defines}, test_context());
  const Program& program = program_of(variant.family);
  if (through_library)
    return jit.library(program, options).kernel(entry_of(variant.family), test_context());
  return jit.module(program, options, test_context()).kernel(entry_of(variant.family));
}

// Fails the process if the test has not finished by the deadline: a hung thread cannot be joined.
class Watchdog {
 public:
  explicit Watchdog(std::chrono::seconds limit)
      : thread_([this, limit] {
          std::unique_lock lock(mutex_);
          if (!done_changed_.wait_for(lock, limit, [this] { return done_; })) {
            std::fprintf(stderr, "stress test: not finished after %lld s, a deadlock\n",
                         static_cast<long long>(limit.count()));
            std::_Exit(1);
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    done_changed_.notify_one();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable done_changed_;
  bool done_ = false;
  std::thread thread_;
};

// What one thread owns: its inputs, their CPU results, its buffers and stream.
class Worker {
 public:
  Worker(int index, Jit& jit)
      : index_(index),
        jit_(jit),
        vector_count_(vector_base_count + 13 * index),
        a_(random_floats(static_cast<std::size_t>(vector_count_), 100u + index)),
        b_(random_floats(static_cast<std::size_t>(vector_count_), 200u + index)),
        stream_(test_context()),
        device_a_(test_context(), std::span<const float>(a_)),
        device_b_(test_context(), std::span<const float>(b_)),
        device_c_(test_context(), a_.size()),
        partial_(test_context(), 1024),
        first_results_(variants().size()) {
    expected_.reserve(variants().size());
    expected_.push_back(apps::vector_add(a_, b_));
    expected_.push_back(apps::matrix_add(head(a_, rows * cols), head(b_, rows * cols), rows, cols));
    expected_.push_back(expected_.back());
    expected_.push_back(apps::matmul(head(a_, m * k), head(b_, k * n), m, n, k));
    expected_.push_back(expected_.back());
    expected_.push_back({static_cast<float>(apps::sum(head(a_, reduce_count)))});
    expected_.push_back(expected_.back());
    for (float x : head(a_, reduce_count)) sum_of_magnitudes_ += std::abs(x);
  }

  // Returns the first problem found, or nothing.
  std::optional<std::string> run() {
    std::mt19937 choose(static_cast<unsigned>(index_));
    std::uniform_int_distribution<std::size_t> pick(0, variants().size() - 1);
    for (int launch = 0; launch < launches_per_thread; ++launch) {
      if (launch % resolve_every == 0) resolve_all();
      const std::size_t which = pick(choose);
      const std::vector<float> result = launch_and_read(which);
      if (std::optional<std::string> problem = verify(which, result))
        return "thread " + std::to_string(index_) + ", launch " + std::to_string(launch) + ": " +
               *problem;
    }
    return std::nullopt;
  }

 private:
  static std::span<const float> head(const std::vector<float>& values, long long count) {
    return std::span<const float>(values).first(static_cast<std::size_t>(count));
  }

  void resolve_all() {
    kernels_.clear();
    for (const Variant& variant : variants())
      kernels_.push_back(resolve(jit_, variant, index_ % 2 == 1));
  }

  std::vector<float> launch_and_read(std::size_t which) {
    const Variant& variant = variants()[which];
    const Kernel& kernel = kernels_[which];
    const CUstream stream = stream_.handle();
    const unsigned bx = static_cast<unsigned>(variant.block_x);
    const unsigned by = static_cast<unsigned>(variant.block_y);
    device_c_.memory().fill_words(poison_word, stream);
    std::size_t count = 0;
    switch (variant.family) {
      case Family::vector_add:
        kernel.launch({.grid = blocks_for(vector_count_, bx), .block = bx, .stream = stream},
                      device_a_, device_b_, device_c_, vector_count_);
        count = static_cast<std::size_t>(vector_count_);
        break;
      case Family::matrix_add:
        kernel.launch({.grid = {blocks_for(cols, bx), blocks_for(rows, by)},
                       .block = {bx, by},
                       .stream = stream},
                      device_a_, device_b_, device_c_, rows, cols);
        count = rows * cols;
        break;
      case Family::matmul:
        kernel.launch(
            {.grid = {blocks_for(n, bx), blocks_for(m, bx)}, .block = {bx, bx}, .stream = stream},
            device_a_, device_b_, device_c_, m, n, k);
        count = m * n;
        break;
      case Family::reduce_sum: {
        const long long blocks = blocks_for(reduce_count, bx);
        partial_.memory().fill_words(poison_word, stream);
        kernel.launch({.grid = static_cast<unsigned>(blocks), .block = bx, .stream = stream},
                      device_a_, partial_, reduce_count);
        kernel.launch({.grid = 1, .block = bx, .stream = stream}, partial_, device_c_, blocks);
        count = 1;
        break;
      }
    }
    std::vector<float> result(count);
    device_c_.download_async(std::span<float>(result), stream);
    stream_.synchronize();
    return result;
  }

  std::optional<std::string> verify(std::size_t which, const std::vector<float>& result) {
    const Family family = variants()[which].family;
    const std::string name =
        entry_of(family) + " [" + format_defines(variants()[which].defines) + "]";
    if (family == Family::vector_add || family == Family::matrix_add) {
      if (result != expected_[which]) return name + " differs from the CPU";
      return std::nullopt;
    }
    std::optional<std::vector<float>>& first = first_results_[which];
    if (first) {
      if (result != *first) return name + " differs from its first result on this thread";
      return std::nullopt;
    }
    const double error =
        family == Family::matmul
            ? apps::max_relative_error(result, expected_[which])
            : std::abs(static_cast<double>(result[0]) - expected_[which][0]) / sum_of_magnitudes_;
    const double tolerance = family == Family::matmul ? matmul_tolerance : reduce_tolerance;
    if (!(error <= tolerance))
      return name + " is off the CPU by " + std::to_string(error) + " (tolerance " +
             std::to_string(tolerance) + ")";
    first = result;
    return std::nullopt;
  }

  int index_;
  Jit& jit_;
  long long vector_count_;
  std::vector<float> a_, b_;
  Stream stream_;
  DeviceBuffer<float> device_a_, device_b_, device_c_, partial_;
  std::vector<std::vector<float>> expected_;  // per variant
  double sum_of_magnitudes_ = 0;
  std::vector<std::optional<std::vector<float>>> first_results_;  // per variant
  std::vector<Kernel> kernels_;
};

}  // namespace

TEST_CASE("64 threads x 1000 launches of 4 kernels in 7 specializations: all right, none stuck") {
  JitOptions options;
  options.cache_directory.clear();
  Jit jit(options);
  // The application's own context, current on every thread: ptxrt must hand it back untouched.
  const Context application = Context::create(test_context().device());

  Watchdog watchdog(deadline);
  std::vector<std::optional<std::string>> problems(thread_count);
  std::vector<CUcontext> current_after(thread_count, nullptr);
  std::atomic<int> context_changes{0};
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < thread_count; ++t)
    threads.emplace_back([&, t] {
      ContextGuard application_current(application);
      try {
        Worker worker(t, jit);
        problems[t] = worker.run();
      } catch (const std::exception& error) {
        problems[t] = "thread " + std::to_string(t) + " threw: " + error.what();
      }
      current_after[t] = current_context();
      if (current_after[t] != application.handle()) context_changes.fetch_add(1);
    });
  for (std::thread& thread : threads) thread.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE((thread_count * launches_per_thread) << " launches in " << seconds << " s");

  for (const std::optional<std::string>& problem : problems)
    if (problem) FAIL_CHECK(*problem);
  CHECK(context_changes.load() == 0);
  for (CUcontext context : current_after) CHECK(context == application.handle());
  const JitStats stats = jit.stats();
  CHECK(stats.compiles == variants().size());
  CHECK(stats.module_loads == variants().size());
  CHECK(stats.library_loads == variants().size());
}
