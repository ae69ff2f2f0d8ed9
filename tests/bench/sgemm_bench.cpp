// The SGEMM sweep against cuBLAS measured in the same process, for docs/perf-notes.md.
//
// At each shape (default: 4096³, 8192³, 4097³ and 8192×8192×128) it times cuBLAS SGEMM (default
// math: fp32, no TF32) and the configs host::sgemm_candidates offers for the shape (--all: every
// listed config) in --rounds rounds, each config's order reversed every other round so that
// drift (clocks, temperature) does not favour the first ones. Per config it prints the median
// TFLOP/s (the median of the round medians), their range over the rounds, the widest IQR/median
// within a round, the ratio to cuBLAS and its range over the rounds, and marks the best.
//
// Every output is verified once before it is timed: each config's C against cuBLAS's (max-abs
// normalized error <= 1e-4), and cuBLAS's own at 64 elements against fp64 dot products; without
// cuBLAS, the configs at those 64 elements. Exits 1 when a check fails or a config cannot run,
// 77 (skipped) without a GPU.
//
//   ptxrt_sgemm_bench [--shape MxNxK ...] [--rounds 2] [--repeat 10] [--launches-per-sample N]
//                     [--all] [--seed 1]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <future>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "host/matmul/cublas.hpp"
#include "host/common/random_data.hpp"
#include "host/common/reference.hpp"
#include "host/common/run.hpp"
#include "host/matmul/sgemm.hpp"
#include "host/common/timing.hpp"
#include "ptxrt/driver.hpp"
#include "ptxrt/error.hpp"
#include "ptxrt/jit.hpp"

namespace host = ptxrt::host;
using host::SgemmConfig;

namespace {

constexpr double tolerance = 1e-4;
constexpr int sampled_elements = 64;
constexpr int skipped = 77;
// A timed sample is `launches_per_sample` back-to-back launches, enough for ~2 ms at 40 TFLOP/s:
// a launch's few microseconds of host work (argument checks, the module lookup) then overlap the
// previous launch instead of adding up to 1-2 % at the skinny shape's 0.4 ms.
constexpr double flop_per_sample = 8e10;

struct Shape {
  int m = 0, n = 0, k = 0;
  int fixed_launches = 0;  // per timed sample when positive (--launches-per-sample)
  std::string name() const {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  }
  double flop() const { return 2.0 * m * n * static_cast<double>(k); }
  int launches_per_sample() const {
    if (fixed_launches > 0) return fixed_launches;
    return static_cast<int>(std::clamp(std::ceil(flop_per_sample / flop()), 1.0, 64.0));
  }
};

// MxNxK with positive sizes, or nothing.
std::optional<Shape> parse_shape(const std::string& text) {
  Shape shape;
  char x1 = 0, x2 = 0, rest = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c%d%c", &shape.m, &x1, &shape.n, &x2, &shape.k, &rest) !=
          5 ||
      x1 != 'x' || x2 != 'x' || shape.m < 1 || shape.n < 1 || shape.k < 1)
    return std::nullopt;
  return shape;
}

std::size_t elements(long long rows, long long columns) {
  return static_cast<std::size_t>(rows * columns);
}

// One timed subject's medians per round, in TFLOP/s, and the widest IQR/median of a round.
struct Timing {
  std::vector<double> round_rates;
  double widest_spread = 0.0;
  double rate() const { return host::median(round_rates); }
};

// Adds a round of samples, each `launches` launches of `flop` each.
void add_round(Timing& timing, std::vector<double> milliseconds, double flop, int launches) {
  for (double& sample : milliseconds) sample /= launches;
  std::sort(milliseconds.begin(), milliseconds.end());
  const double median = host::median(milliseconds);
  const std::size_t count = milliseconds.size();
  const double spread = (milliseconds[count * 3 / 4] - milliseconds[count / 4]) / median;
  timing.round_rates.push_back(flop / (median * 1e-3) / 1e12);
  timing.widest_spread = std::max(timing.widest_spread, spread);
}

// The fp64 dot products at sampled_elements spread over C, and where they are.
struct Samples {
  std::vector<std::size_t> indices;
  std::vector<float> expected;
};

Samples sample_reference(const std::vector<float>& a, const std::vector<float>& b, Shape shape) {
  Samples samples;
  for (unsigned i = 0; i < sampled_elements; ++i) {
    const unsigned row = (i * 2654435761u) % static_cast<unsigned>(shape.m);
    const unsigned column = (i * 40503u + 17u) % static_cast<unsigned>(shape.n);
    double dot = 0.0;
    for (int k = 0; k < shape.k; ++k)
      dot += static_cast<double>(a[elements(row, shape.k) + k]) * b[elements(k, shape.n) + column];
    samples.indices.push_back(elements(row, shape.n) + column);
    samples.expected.push_back(static_cast<float>(dot));
  }
  return samples;
}

double sampled_error(const std::vector<float>& c, const Samples& samples) {
  std::vector<float> actual;
  for (const std::size_t index : samples.indices) actual.push_back(c[index]);
  return host::max_relative_error(actual, samples.expected);
}

struct Row {
  SgemmConfig config;
  std::optional<double> error;  // of the checked output; none when it could not run
  std::string failure;
  Timing timing;
};

class ShapeBench {
 public:
  ShapeBench(const ptxrt::Context& context, Shape shape, std::uint64_t seed)
      : context_(context),
        shape_(shape),
        a_(host::random_floats(elements(shape.m, shape.k), seed, 0)),
        b_(host::random_floats(elements(shape.k, shape.n), seed, 1)),
        device_a_(context, std::span<const float>(a_)),
        device_b_(context, std::span<const float>(b_)),
        device_c_(context, elements(shape.m, shape.n)),
        samples_(sample_reference(a_, b_, shape)) {}

  // cuBLAS's C becomes the reference when its samples pass; returns the line to print.
  std::string check_cublas(const host::CublasAvailability& found) {
    if (!found.library) return found.description + ": configs checked at sampled elements only";
    cublas_.emplace(found.library, context_);
    cublas_->sgemm_row_major(device_a_, device_b_, device_c_, shape_.m, shape_.n, shape_.k);
    reference_ = device_c_.download();
    const double error = sampled_error(reference_, samples_);
    cublas_ok_ = error <= tolerance;
    char line[160];
    std::snprintf(line, sizeof line, "cuBLAS SGEMM vs fp64 at %d elements: error %.2g (%s)",
                  sampled_elements, error, cublas_ok_ ? "ok" : "FAIL");
    return line;
  }
  bool cublas_ok() const { return !cublas_ || cublas_ok_; }
  bool has_cublas() const { return cublas_.has_value(); }

  // Runs `config` once and compares its C with cuBLAS's (or the samples).
  double check(ptxrt::Jit& jit, const SgemmConfig& config) {
    device_c_.memory().fill_words(host::poison_word);
    run(jit, config);
    const std::vector<float> c = device_c_.download();
    return cublas_ ? host::max_relative_error(c, reference_) : sampled_error(c, samples_);
  }

  void time_cublas(Timing& timing, int repeats) {
    time_launches(timing, repeats, [&] {
      cublas_->sgemm_row_major(device_a_, device_b_, device_c_, shape_.m, shape_.n, shape_.k);
    });
  }

  void time(ptxrt::Jit& jit, Row& row, int repeats) {
    time_launches(row.timing, repeats, [&] { run(jit, row.config); });
  }

 private:
  template <typename Launch>
  void time_launches(Timing& timing, int repeats, Launch launch) {
    const int launches = shape_.launches_per_sample();
    const auto samples = host::launch_times_ms(
        context_, repeats, [] {},
        [&] {
          for (int i = 0; i < launches; ++i) launch();
        });
    add_round(timing, samples, shape_.flop(), launches);
  }

  void run(ptxrt::Jit& jit, const SgemmConfig& config) {
    host::sgemm(jit, context_, device_a_, device_b_, device_c_, shape_.m, shape_.n, shape_.k,
                config);
  }

  ptxrt::Context context_;
  Shape shape_;
  std::vector<float> a_, b_;
  ptxrt::DeviceBuffer<float> device_a_, device_b_, device_c_;
  Samples samples_;
  std::optional<host::Cublas> cublas_;
  std::vector<float> reference_;
  bool cublas_ok_ = false;
};

std::string range(const std::vector<double>& values, const char* format) {
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  char text[64];
  std::snprintf(text, sizeof text, format, *low, *high);
  return text;
}

// Prints the shape's table; returns the index of the best row that ran, if any.
std::optional<std::size_t> print_table(const std::optional<Timing>& cublas,
                                       const std::vector<Row>& rows) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].failure.empty() && (!best || rows[i].timing.rate() > rows[*best].timing.rate()))
      best = i;
  std::printf("  %-7s %-15s %-7s %-20s %-8s %s\n", "TFLOP/s", "rounds", "IQR/med",
              "x cuBLAS [rounds]", "error", "config");
  if (cublas)
    std::printf("  %7.2f %-15s %6.1f%% %-20s %-8s %s\n", cublas->rate(),
                range(cublas->round_rates, "[%.2f, %.2f]").c_str(), 100 * cublas->widest_spread,
                "1", "-", "cuBLAS SGEMM (no TF32)");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    const std::string name =
        row.config.describe() + (i == 0 ? " (default)" : "") + (best == i ? "  <- best" : "");
    if (!row.failure.empty()) {
      std::printf("  %7s %-15s %7s %-20s %-8s %s: %s\n", "-", "-", "-", "-", "FAIL", name.c_str(),
                  row.failure.c_str());
      continue;
    }
    std::string ratio = "-";
    if (cublas) {
      std::vector<double> ratios;
      for (std::size_t r = 0; r < row.timing.round_rates.size(); ++r)
        ratios.push_back(row.timing.round_rates[r] / cublas->round_rates[r]);
      char text[64];
      std::snprintf(text, sizeof text, "%.3f %s", row.timing.rate() / cublas->rate(),
                    range(ratios, "[%.3f, %.3f]").c_str());
      ratio = text;
    }
    std::printf("%c %7.2f %-15s %6.1f%% %-20s %-8.2g %s\n", best == i ? '*' : ' ',
                row.timing.rate(), range(row.timing.round_rates, "[%.2f, %.2f]").c_str(),
                100 * row.timing.widest_spread, ratio.c_str(), *row.error, name.c_str());
  }
  return best;
}

// Compiles every config once, in parallel: a cold sweep is mostly NVRTC time.
void prepare_all(ptxrt::Jit& jit, const ptxrt::Context& context,
                 const std::vector<SgemmConfig>& configs) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::future<void>> pending;
  for (const SgemmConfig& config : configs)
    pending.push_back(
        std::async(std::launch::async, [&, config] { host::prepare_sgemm(jit, context, config); }));
  for (std::future<void>& done : pending) done.get();
  std::printf("compiled and loaded %zu configs in %.1f s\n", configs.size(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

struct Arguments {
  std::vector<std::string> shapes = {"4096x4096x4096", "8192x8192x8192", "4097x4097x4097",
                                     "8192x8192x128"};
  int rounds = 2;
  int repeat = 10;
  int launches_per_sample = 0;
  bool all = false;
  std::uint64_t seed = 1;
};

int bench(const Arguments& arguments) {
  const ptxrt::Context context = ptxrt::Context::primary(0);
  const ptxrt::DeviceProperties& device = context.device().properties();
  ptxrt::Jit& jit = ptxrt::Jit::shared();
  std::vector<Shape> shapes;
  for (const std::string& text : arguments.shapes) {
    shapes.push_back(*parse_shape(text));
    shapes.back().fixed_launches = arguments.launches_per_sample;
  }
  const auto configs_for = [&](Shape shape) {
    return arguments.all ? host::sgemm_configs(device)
                         : host::sgemm_candidates(device, shape.m, shape.n, shape.k);
  };
  std::vector<SgemmConfig> unique;
  for (const Shape shape : shapes)
    for (const SgemmConfig& config : configs_for(shape))
      if (std::find(unique.begin(), unique.end(), config) == unique.end()) unique.push_back(config);
  std::printf("sgemm bench on %s: %d rounds x %d timed runs (after a warm-up) per config\n",
              device.name.c_str(), arguments.rounds, arguments.repeat);
  prepare_all(jit, context, unique);

  const host::CublasAvailability cublas = host::find_cublas();
  bool all_passed = true;
  std::vector<std::string> summary;
  for (const Shape shape : shapes) {
    std::printf("\n== %s (%s), %d launch(es) per timed sample\n", shape.name().c_str(),
                host::to_string(host::sgemm_shape_of(shape.m, shape.n, shape.k)),
                shape.launches_per_sample());
    ShapeBench bench(context, shape, arguments.seed);
    std::printf("  %s\n", bench.check_cublas(cublas).c_str());
    all_passed = all_passed && bench.cublas_ok();
    std::vector<Row> rows;
    for (const SgemmConfig& config : configs_for(shape)) {
      Row row{config, std::nullopt, {}, {}};
      try {
        row.error = bench.check(jit, config);
        if (*row.error > tolerance) row.failure = "error " + std::to_string(*row.error) + " > 1e-4";
      } catch (const ptxrt::Error& error) {
        row.failure = error.what();
      }
      all_passed = all_passed && row.failure.empty();
      rows.push_back(std::move(row));
    }
    std::optional<Timing> cublas_timing;
    if (bench.has_cublas()) cublas_timing.emplace();
    for (int round = 0; round < arguments.rounds; ++round) {
      if (cublas_timing) bench.time_cublas(*cublas_timing, arguments.repeat);
      for (std::size_t i = 0; i < rows.size(); ++i) {
        Row& row = rows[round % 2 == 0 ? i : rows.size() - 1 - i];
        if (row.failure.empty()) bench.time(jit, row, arguments.repeat);
      }
    }
    const std::optional<std::size_t> best = print_table(cublas_timing, rows);
    if (!best) continue;
    char line[256];
    std::snprintf(line, sizeof line, "%-15s %6.2f TFLOP/s", shape.name().c_str(),
                  rows[*best].timing.rate());
    std::string text = line;
    if (cublas_timing) {
      std::snprintf(line, sizeof line, "  %.3fx cuBLAS (%.2f)",
                    rows[*best].timing.rate() / cublas_timing->rate(), cublas_timing->rate());
      text += line;
    }
    summary.push_back(text + "  " + rows[*best].config.describe());
  }
  std::printf("\nbest per shape (median of %d round medians):\n", arguments.rounds);
  for (const std::string& line : summary) std::printf("  %s\n", line.c_str());
  std::printf("%s\n", all_passed ? "all outputs verified" : "FAILED: see the rows marked FAIL");
  return all_passed ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Arguments arguments;
  CLI::App app("SGEMM configs against cuBLAS SGEMM, measured in one process");
  app.add_option("--shape", arguments.shapes, "MxNxK; repeatable (default: the four of issue 8)")
      ->check([](const std::string& text) {
        return parse_shape(text) ? std::string() : "expected MxNxK with positive sizes";
      });
  app.add_option("--rounds", arguments.rounds, "Rounds over all configs")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--repeat", arguments.repeat, "Timed runs per config and round")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  app.add_option("--launches-per-sample", arguments.launches_per_sample,
                 "Back-to-back launches per timed sample (default: enough for about 2 ms)")
      ->check(CLI::Range(1, 10000));
  app.add_flag("--all", arguments.all,
               "Every listed config at every shape, not just the shape's candidates");
  app.add_option("--seed", arguments.seed, "Seed of the random inputs")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (const ptxrt::DriverStatus status = ptxrt::driver_status(); !status.usable) {
    std::printf("sgemm bench: skipped (%s)\n", status.problem.c_str());
    return skipped;
  }
  try {
    return bench(arguments);
  } catch (const ptxrt::Error& error) {
    std::fprintf(stderr, "sgemm bench: %s\n", error.what());
    return 1;
  }
}
