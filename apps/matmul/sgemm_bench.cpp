#include "apps/matmul/sgemm_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <future>

#include "apps/common/builtin_kernels.hpp"
#include "apps/common/kernel_defines.hpp"
#include "apps/common/random_data.hpp"
#include "apps/common/reference.hpp"
#include "apps/common/run.hpp"
#include "apps/common/timing.hpp"
#include "apps/matmul/matmul.hpp"
#include "apps/matmul/product_check.hpp"
#include "ptxrt/blas/sgemm.hpp"
#include "ptxrt/blas/sgemm_heuristic.hpp"
#include "ptxrt/blas/sgemm_tuning.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/manifest.hpp"

namespace ptxrt::apps {

namespace {

// A timed sample is enough back-to-back launches for ~2 ms at 40 TFLOP/s: a launch's few
// microseconds of host work (the config's lookup, argument checks) then overlap the previous
// launch instead of adding up at the small shapes, for cuBLAS as for ptxrt.
constexpr double flop_per_sample = 8e10;
constexpr int most_launches_per_sample = 256;
// A config far slower than the shape's rate (no split at a deep K runs at a few % of cuBLAS)
// would spend seconds on every sample of the shape's launches, most of a bench's time for no
// information: past this many ms a sample it takes enough launches for sample_ms instead.
constexpr double slow_sample_ms = 8.0;
constexpr double sample_ms = 2.0;

std::size_t elements(long long rows, long long columns) {
  return static_cast<std::size_t>(rows * columns);
}

int launches_per_sample(const SgemmBenchSize& size, const SgemmBenchOptions& options) {
  if (options.launches_per_sample > 0) return options.launches_per_sample;
  return static_cast<int>(std::clamp(std::ceil(flop_per_sample / size.flop()), 1.0,
                                     static_cast<double>(most_launches_per_sample)));
}

// Adds a round's median (TFLOP/s) and its spread; samples are ms per `launches` launches.
void add_round(std::vector<double>& rates, double& widest_spread, std::vector<double> samples,
               double flop, int launches) {
  for (double& sample : samples) sample /= launches;
  std::sort(samples.begin(), samples.end());
  const double middle = median(samples);
  const std::size_t count = samples.size();
  widest_spread = std::max(widest_spread, (samples[count * 3 / 4] - samples[count / 4]) / middle);
  rates.push_back(flop / (middle * 1e-3) / 1e12);
}

double median_or_zero(const std::vector<double>& values) {
  return values.empty() ? 0.0 : median(values);
}

// The rows of one shape: the default, the candidates (or every listed config), the menu's
// configs on request, the given ones, the tuned one.
std::vector<SgemmBenchRow> rows_for(const DeviceProperties& device, const SgemmBenchSize& size,
                                    const SgemmBenchOptions& options) {
  std::vector<SgemmBenchRow> rows;
  const auto add = [&](const SgemmConfig& config, SgemmBenchRole role) {
    const auto same = [&](const SgemmBenchRow& row) { return row.config == config; };
    if (const auto found = std::find_if(rows.begin(), rows.end(), same); found != rows.end()) {
      if (!found->has(role)) found->roles.push_back(role);
      return;
    }
    rows.push_back({config, {role}});
  };
  add(sgemm_heuristic_config(device, size.m, size.n, size.k), SgemmBenchRole::default_config);
  for (const SgemmConfig& config : options.every_listed
                                       ? sgemm_configs(device)
                                       : sgemm_candidates(device, size.m, size.n, size.k))
    add(config, SgemmBenchRole::listed);
  if (options.menu_min_slice_depth > 0)
    for (const SgemmConfig& config :
         sgemm_menu_configs(device, size.m, size.n, size.k, options.menu_min_slice_depth))
      add(config, SgemmBenchRole::listed);
  for (const SgemmConfig& config : options.given) add(config, SgemmBenchRole::given);
  if (options.database) {
    const TunedChoice choice =
        sgemm_tuned_choice(device, size.m, size.n, size.k, *options.database);
    if (choice.level == ChoiceLevel::exact_size)
      add(sgemm_config_with(SgemmConfig{}, choice.config.defines()), SgemmBenchRole::tuned);
  }
  return rows;
}

// One shape's inputs, reference and timing.
class ShapeRun {
 public:
  ShapeRun(const Context& context, Jit& jit, const SgemmBenchSize& size, std::uint64_t seed,
           SgemmPadding padding)
      : context_(context),
        jit_(jit),
        size_(size),
        padding_(padding),
        a_(random_floats(elements(size.m, size.k), seed, 0)),
        b_(random_floats(elements(size.k, size.n), seed, 1)),
        device_a_(context, std::span<const float>(a_)),
        device_b_(context, std::span<const float>(b_)),
        device_c_(context, elements(size.m, size.n)),
        workspace_(context),
        samples_(sample_product(a_, b_, size.m, size.n, size.k)) {}

  // cuBLAS's C becomes the reference when its samples pass; fills the shape's reference fields.
  void check_cublas(const CublasAvailability& found, SgemmBenchShape& shape) {
    if (!found.library) {
      shape.reference = found.description + ": configs checked at 64 fp64 samples only";
      return;
    }
    cublas_.emplace(found.library, context_);
    const auto product =
        cublas_product(found, context_, device_a_, device_b_, size_.m, size_.n, size_.k, samples_);
    reference_ = product->c;
    shape.reference_ok = product->sampled_error <= matmul_tolerance;
    char line[160];
    std::snprintf(line, sizeof line, "cuBLAS SGEMM vs fp64 at 64 elements: error %.2g (%s)",
                  product->sampled_error, shape.reference_ok ? "ok" : "FAIL");
    shape.reference = line;
  }
  bool has_cublas() const { return cublas_.has_value(); }

  double check(const SgemmConfig& config) {
    device_c_.memory().fill_words(poison_word);
    run(config);
    const std::vector<float> c = device_c_.download();
    return cublas_ ? max_relative_error(c, reference_) : sampled_error(c, samples_);
  }

  void time_cublas(SgemmBenchShape& shape, int repeat) {
    time(shape.cublas_rates, shape.cublas_spread, shape.launches_per_sample, repeat, [&] {
      cublas_->sgemm_row_major(device_a_, device_b_, device_c_, size_.m, size_.n, size_.k);
    });
  }

  void time(SgemmBenchRow& row, int repeat) {
    time(row.round_rates, row.widest_spread, row.launches_per_sample, repeat,
         [&] { run(row.config); });
  }

  // The shape's launches per sample, or fewer where `config` is slow (slow_sample_ms).
  int launches_for(const SgemmConfig& config, int shape_launches) {
    const double launch_ms = median_launch_ms(context_, 1, [] {}, [&] { run(config); });
    if (launch_ms * shape_launches <= slow_sample_ms) return shape_launches;
    return std::clamp(static_cast<int>(std::ceil(sample_ms / launch_ms)), 1, shape_launches);
  }

 private:
  template <typename Launch>
  void time(std::vector<double>& rates, double& spread, int launches, int repeat, Launch launch) {
    const std::vector<double> samples = launch_times_ms(
        context_, repeat, [] {},
        [&] {
          for (int i = 0; i < launches; ++i) launch();
        });
    add_round(rates, spread, samples, size_.flop(), launches);
  }

  void run(const SgemmConfig& config) {
    sgemm(context_, size_.m, size_.n, size_.k, device_a_, device_b_, device_c_,
          {.choice = SgemmChoice::given,
           .config = config,
           .workspace = &workspace_,
           .padding = padding_,
           .jit = &jit_});
  }

  Context context_;
  Jit& jit_;
  SgemmBenchSize size_;
  SgemmPadding padding_;
  std::vector<float> a_, b_;
  DeviceBuffer<float> device_a_, device_b_, device_c_;
  SgemmWorkspace workspace_;
  ProductSamples samples_;
  std::optional<Cublas> cublas_;
  std::vector<float> reference_;
};

// Compiles every config once, in parallel: a cold sweep is mostly NVRTC time.
void prepare_all(const Context& context, Jit& jit, const std::vector<SgemmBenchShape>& shapes,
                 std::ostream& out) {
  std::vector<SgemmConfig> unique;
  for (const SgemmBenchShape& shape : shapes)
    for (const SgemmBenchRow& row : shape.rows)
      if (std::find(unique.begin(), unique.end(), row.config) == unique.end())
        unique.push_back(row.config);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::future<void>> pending;
  for (const SgemmConfig& config : unique)
    pending.push_back(
        std::async(std::launch::async, [&, config] { sgemm_prepare(context, config, jit); }));
  for (std::future<void>& done : pending) done.get();
  char line[96];
  std::snprintf(line, sizeof line, "compiled and loaded %zu configs in %.1f s\n", unique.size(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  out << line;
}

std::string rate_range(const std::vector<double>& values, const char* format) {
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  char text[64];
  std::snprintf(text, sizeof text, format, *low, *high);
  return text;
}

void print_shape(std::ostream& out, const SgemmBenchShape& shape) {
  char line[512];
  std::snprintf(line, sizeof line, "  %-7s %-15s %-7s %-20s %-8s %s\n", "TFLOP/s", "rounds",
                "IQR/med", "x cuBLAS [rounds]", "error", "config");
  out << line;
  const std::optional<double> cublas = shape.cublas_rate();
  if (cublas) {
    std::snprintf(line, sizeof line, "  %7.2f %-15s %6.1f%% %-20s %-8s %s\n", *cublas,
                  rate_range(shape.cublas_rates, "[%.2f, %.2f]").c_str(), 100 * shape.cublas_spread,
                  "1", "-", "cuBLAS SGEMM (no TF32)");
    out << line;
  }
  const std::optional<std::size_t> best = shape.best();
  for (std::size_t i = 0; i < shape.rows.size(); ++i) {
    const SgemmBenchRow& row = shape.rows[i];
    const std::string name =
        row.config.describe() + " (" + row.describe_roles() + ")" + (best == i ? "  <- best" : "");
    if (!row.ran()) {
      std::snprintf(line, sizeof line, "  %7s %-15s %7s %-20s %-8s %s: %s\n", "-", "-", "-", "-",
                    "FAIL", name.c_str(), row.failure.c_str());
      out << line;
      continue;
    }
    std::string ratio = "-";
    if (cublas) {
      std::vector<double> ratios;
      for (std::size_t r = 0; r < row.round_rates.size(); ++r)
        ratios.push_back(row.round_rates[r] / shape.cublas_rates[r]);
      ratio = rate_range(ratios, "[%.3f, %.3f]");
      std::snprintf(line, sizeof line, "%.3f %s", row.rate() / *cublas, ratio.c_str());
      ratio = line;
    }
    std::snprintf(line, sizeof line, "%c %7.2f %-15s %6.1f%% %-20s %-8.2g %s\n",
                  best == i ? '*' : ' ', row.rate(),
                  rate_range(row.round_rates, "[%.2f, %.2f]").c_str(), 100 * row.widest_spread,
                  ratio.c_str(), row.error.value_or(0.0), name.c_str());
    out << line;
  }
}

void measure_shape(ShapeRun& run, SgemmBenchShape& shape, const SgemmBenchOptions& options) {
  for (SgemmBenchRow& row : shape.rows) {
    try {
      row.error = run.check(row.config);
      if (!(*row.error <= matmul_tolerance))
        row.failure = "error " + std::to_string(*row.error) + " > 1e-4";
    } catch (const Error& error) {
      row.failure = error.what();
    }
  }
  for (SgemmBenchRow& row : shape.rows)
    if (row.failure.empty())
      row.launches_per_sample = options.launches_per_sample > 0
                                    ? options.launches_per_sample
                                    : run.launches_for(row.config, shape.launches_per_sample);
  for (int round = 0; round < options.rounds; ++round) {
    if (run.has_cublas()) run.time_cublas(shape, options.repeat);
    for (std::size_t i = 0; i < shape.rows.size(); ++i) {
      SgemmBenchRow& row = shape.rows[round % 2 == 0 ? i : shape.rows.size() - 1 - i];
      if (row.failure.empty()) run.time(row, options.repeat);
    }
  }
}

}  // namespace

std::string SgemmBenchSize::name() const {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

std::optional<SgemmBenchSize> parse_sgemm_bench_size(std::string_view text) {
  SgemmBenchSize size;
  char x1 = 0, x2 = 0, rest = 0;
  const std::string copy(text);
  if (std::sscanf(copy.c_str(), "%d%c%d%c%d%c", &size.m, &x1, &size.n, &x2, &size.k, &rest) != 5 ||
      x1 != 'x' || x2 != 'x' || size.m < 1 || size.n < 1 || size.k < 1)
    return std::nullopt;
  return size;
}

SgemmConfig parse_sgemm_bench_config(std::string_view text) {
  if (text.empty())
    throw Error(ErrorKind::invalid_argument, "expected NAME=VALUE,... of sgemm.cu's constants");
  std::vector<Define> defines;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    defines.push_back(parse_define(text.substr(start, comma - start)));
    start = comma + 1;
  }
  return sgemm_config_with(SgemmConfig{},
                           resolve_defines(builtin_program("sgemm"), std::move(defines)));
}

const std::vector<SgemmBenchSize>& sgemm_bench_sizes() {
  static const std::vector<SgemmBenchSize> sizes{
      {512, 512, 512},    {1024, 1024, 1024}, {2048, 2048, 2048},  {4096, 4096, 4096},
      {8192, 8192, 8192}, {4097, 4097, 4097}, {1536, 1536, 12288}, {512, 512, 16384},
      {8192, 64, 8192},   {128, 8192, 4096},  {8192, 8192, 128},   {4096, 4096, 256}};
  return sizes;
}

const char* to_string(SgemmBenchRole role) {
  switch (role) {
    case SgemmBenchRole::default_config:
      return "default";
    case SgemmBenchRole::listed:
      return "listed";
    case SgemmBenchRole::given:
      return "given";
    case SgemmBenchRole::tuned:
      return "tuned";
  }
  return "unknown";
}

double SgemmBenchRow::rate() const { return median_or_zero(round_rates); }

bool SgemmBenchRow::has(SgemmBenchRole role) const {
  return std::find(roles.begin(), roles.end(), role) != roles.end();
}

std::string SgemmBenchRow::describe_roles() const {
  std::string text;
  for (const SgemmBenchRole role : roles)
    text += (text.empty() ? "" : ", ") + std::string(to_string(role));
  return text;
}

std::optional<double> SgemmBenchShape::cublas_rate() const {
  if (cublas_rates.empty()) return std::nullopt;
  return median(cublas_rates);
}

std::optional<std::size_t> SgemmBenchShape::best(std::vector<SgemmBenchRole> roles) const {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const bool counts = roles.empty() || std::any_of(roles.begin(), roles.end(),
                                                     [&](auto role) { return rows[i].has(role); });
    if (counts && rows[i].ran() && (!best || rows[i].rate() > rows[*best].rate())) best = i;
  }
  return best;
}

bool SgemmBenchShape::passed() const {
  return reference_ok && std::all_of(rows.begin(), rows.end(),
                                     [](const SgemmBenchRow& row) { return row.failure.empty(); });
}

std::vector<SgemmBenchShape> run_sgemm_bench(const Context& context, Jit& jit,
                                             const std::vector<SgemmBenchSize>& sizes,
                                             const SgemmBenchOptions& options, std::ostream& out) {
  const DeviceProperties& device = context.device().properties();
  std::vector<SgemmBenchShape> shapes;
  for (const SgemmBenchSize& size : sizes)
    shapes.push_back({size,
                      sgemm_shape_of(size.m, size.n, size.k),
                      launches_per_sample(size, options),
                      {},
                      true,
                      {},
                      0.0,
                      rows_for(device, size, options)});
  out << "sgemm bench on " << device.name << ": " << options.rounds << " rounds x "
      << options.repeat << " timed samples (after a warm-up) per config\n";
  prepare_all(context, jit, shapes, out);
  const CublasAvailability cublas = find_cublas();
  for (SgemmBenchShape& shape : shapes) {
    out << "\n== " << shape.size.name() << " (" << to_string(shape.shape) << "), "
        << shape.launches_per_sample
        << " launch(es) per timed sample (fewer for a config whose sample would pass "
        << slow_sample_ms << " ms)\n";
    ShapeRun run(context, jit, shape.size, options.seed, options.padding);
    run.check_cublas(cublas, shape);
    out << "  " << shape.reference << '\n';
    measure_shape(run, shape, options);
    print_shape(out, shape);
    out.flush();
  }
  return shapes;
}

void print_sgemm_bench_summary(std::ostream& out, const std::vector<SgemmBenchShape>& shapes) {
  char line[512];
  std::snprintf(line, sizeof line, "%-16s %-7s %7s  %-15s %-15s %-15s\n", "shape", "class",
                "cuBLAS", "default", "best listed", "tuned");
  using enum SgemmBenchRole;
  out << line;
  std::string configs;
  for (const SgemmBenchShape& shape : shapes) {
    const std::optional<double> cublas = shape.cublas_rate();
    const auto cell = [&](std::optional<std::size_t> index) -> std::string {
      if (!index) return "-";
      char text[48];
      const double rate = shape.rows[*index].rate();
      if (cublas)
        std::snprintf(text, sizeof text, "%.2f (%.3fx)", rate, rate / *cublas);
      else
        std::snprintf(text, sizeof text, "%.2f", rate);
      return text;
    };
    const std::optional<std::size_t> best_listed = shape.best({default_config, listed, given});
    const std::optional<std::size_t> tuned = shape.best({SgemmBenchRole::tuned});
    char cublas_cell[16] = "-";
    if (cublas) std::snprintf(cublas_cell, sizeof cublas_cell, "%.2f", *cublas);
    std::snprintf(line, sizeof line, "%-16s %-7s %7s  %-15s %-15s %-15s\n",
                  shape.size.name().c_str(), to_string(shape.shape), cublas_cell,
                  cell(shape.best({default_config})).c_str(), cell(best_listed).c_str(),
                  cell(tuned).c_str());
    out << line;
    configs += "  " + shape.size.name() + ": default " + shape.rows.front().config.describe();
    if (best_listed) configs += "; best listed " + shape.rows[*best_listed].config.describe();
    if (tuned) configs += "; tuned " + shape.rows[*tuned].config.describe();
    configs += "\n";
  }
  out << "(TFLOP/s, median of the round medians; best listed: the fastest row of any kind)\n"
      << configs;
}

nlohmann::json sgemm_bench_json(const DeviceProperties& device,
                                const std::vector<SgemmBenchShape>& shapes) {
  nlohmann::json list = nlohmann::json::array();
  for (const SgemmBenchShape& shape : shapes) {
    const std::optional<double> cublas = shape.cublas_rate();
    nlohmann::json rows = nlohmann::json::array();
    for (const SgemmBenchRow& row : shape.rows) {
      nlohmann::json config = nlohmann::json::object();
      for (const Define& define : row.config.defines())
        config[define.name] = std::stoi(define.value);
      nlohmann::json roles = nlohmann::json::array();
      for (const SgemmBenchRole role : row.roles) roles.push_back(to_string(role));
      rows.push_back(
          {{"roles", roles},
           {"config", config},
           {"describe", row.config.describe()},
           {"tflops", row.ran() ? nlohmann::json(row.rate()) : nlohmann::json()},
           {"ratio", row.ran() && cublas ? nlohmann::json(row.rate() / *cublas) : nlohmann::json()},
           {"error", row.error ? nlohmann::json(*row.error) : nlohmann::json()},
           {"launches_per_sample", row.launches_per_sample},
           {"failure", row.failure}});
    }
    list.push_back({{"m", shape.size.m},
                    {"n", shape.size.n},
                    {"k", shape.size.k},
                    {"class", to_string(shape.shape)},
                    {"cublas_tflops", cublas ? nlohmann::json(*cublas) : nlohmann::json()},
                    {"reference", shape.reference},
                    {"rows", rows}});
  }
  return {{"device", device.name},
          {"compute_capability", device.compute_capability()},
          {"sm_count", device.sm_count},
          {"dram_gb_per_s", device.theoretical_bandwidth_gb_per_s()},
          {"shapes", list}};
}

}  // namespace ptxrt::apps
