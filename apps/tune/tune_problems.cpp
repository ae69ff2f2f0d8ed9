#include "apps/tune/tune_problems.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <sstream>

#include "apps/closest_pair/closest_pair.hpp"
#include "apps/closest_pair/point_generator.hpp"
#include "apps/common/builtin_kernels.hpp"
#include "apps/common/kernel_defines.hpp"
#include "apps/common/random_data.hpp"
#include "apps/common/reference.hpp"
#include "apps/common/run.hpp"
#include "apps/matmul/cublas.hpp"
#include "apps/matmul/matmul.hpp"
#include "ptxrt/blas/sgemm.hpp"
#include "ptxrt/blas/sgemm_tuning.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/log.hpp"
#include "ptxrt/core/stream.hpp"
#include "ptxrt/core/target.hpp"
#include "ptxrt/tune/launch_timer.hpp"

namespace ptxrt::apps {

namespace {

// Products up to this many multiply-adds are checked against the CPU's fp64 reference; larger
// ones against cuBLAS (or, without it, the default SGEMM config), which the CPU would take
// minutes to match.
constexpr double cpu_reference_limit = 134217728.0;  // 512³
constexpr std::uint64_t input_seed = 1;

std::string format_error(double error) {
  std::ostringstream text;
  text << error;
  return text.str();
}

// A, B and C of an m×n×k product on the GPU, and C's reference.
class ProductSession : public TuneSession {
 public:
  ProductSession(Jit& jit, const Context& context, const std::vector<std::int64_t>& size)
      : jit_(jit),
        context_(context),
        m_(static_cast<int>(size[0])),
        n_(static_cast<int>(size[1])),
        k_(static_cast<int>(size[2])),
        a_(context, std::span<const float>(random_floats(count(m_, k_), input_seed, 0))),
        b_(context, std::span<const float>(random_floats(count(k_, n_), input_seed, 1))),
        c_(context, count(m_, n_)),
        timer_(context) {
    compute_reference();
  }

  std::optional<Measurement> peer(const TimingPolicy& policy) override {
    const CublasAvailability cublas = find_cublas();
    if (!cublas.library) return std::nullopt;
    const Cublas handle(cublas.library, context_);
    Measurement measurement =
        time(policy, std::nullopt, [&] { handle.sgemm_row_major(a_, b_, c_, m_, n_, k_); });
    measurement.detail = "cuBLAS SGEMM (" + cublas.description + ")";
    return measurement;
  }

 protected:
  // Verifies, then times, the product `launch` computes into c_.
  Measurement verify_and_time(const TimingPolicy& policy, std::optional<double> best_ms,
                              const std::function<void()>& launch) {
    c_.memory().fill_words(poison_word);
    launch();
    const double error = compare(c_.download(), reference_).max_relative_error;
    if (!(error <= matmul_tolerance)) {
      Measurement wrong;
      wrong.status = MeasurementStatus::wrong;
      wrong.max_error = error;
      wrong.detail = "max relative error " + format_error(error) + " over the tolerance " +
                     format_error(matmul_tolerance) + " against " + reference_name_;
      return wrong;
    }
    Measurement measurement = time(policy, best_ms, launch);
    measurement.max_error = error;
    return measurement;
  }

  const DeviceBuffer<float>& a() const { return a_; }
  const DeviceBuffer<float>& b() const { return b_; }
  DeviceBuffer<float>& c() { return c_; }

  Jit& jit_;
  Context context_;
  int m_, n_, k_;

 private:
  static std::size_t count(int rows, int columns) {
    return static_cast<std::size_t>(rows) * static_cast<std::size_t>(columns);
  }

  Measurement time(const TimingPolicy& policy, std::optional<double> best_ms,
                   const std::function<void()>& launch) {
    const TimingResult timing =
        time_samples(policy, best_ms, [&] { return timer_.sample(launch); });
    return timed_measurement(timing, 2.0 * m_ * n_ * static_cast<double>(k_), 1e9, "GFLOP/s");
  }

  void compute_reference() {
    if (static_cast<double>(m_) * n_ * k_ <= cpu_reference_limit) {
      reference_ = matmul(a_.download(), b_.download(), static_cast<std::size_t>(m_),
                          static_cast<std::size_t>(n_), static_cast<std::size_t>(k_));
      reference_name_ = "the CPU's fp64 product";
      return;
    }
    if (const CublasAvailability cublas = find_cublas(); cublas.library) {
      Cublas(cublas.library, context_).sgemm_row_major(a_, b_, c_, m_, n_, k_);
      reference_name_ = "cuBLAS";
    } else {
      sgemm(context_, m_, n_, k_, a_, b_, c_, {.jit = &jit_});
      reference_name_ = "the SGEMM family's default config";
    }
    reference_ = c_.download();
  }

  DeviceBuffer<float> a_;
  DeviceBuffer<float> b_;
  DeviceBuffer<float> c_;
  std::vector<float> reference_;
  std::string reference_name_;
  LaunchTimer timer_;
};

class MatmulSession : public ProductSession {
 public:
  MatmulSession(Jit& jit, const Context& context, const std::vector<std::int64_t>& size,
                Program program)
      : ProductSession(jit, context, size), program_(std::move(program)) {}

  Measurement measure(const TuningConfig& config, const TimingPolicy& policy,
                      std::optional<double> best_ms) override {
    const Kernel kernel =
        jit_.kernel(program_, compile_options(config.defines()), context_, "matmul_tiled");
    const auto tile = static_cast<unsigned>(config.at("TILE_WIDTH"));
    const LaunchConfig launch{.grid = Dim3(blocks_for(static_cast<unsigned>(n_), tile),
                                           blocks_for(static_cast<unsigned>(m_), tile)),
                              .block = Dim3(tile, tile)};
    return verify_and_time(policy, best_ms,
                           [&] { kernel.launch(launch, a(), b(), c(), m_, n_, k_); });
  }

 private:
  Program program_;
};

SgemmConfig sgemm_config_of(const TuningConfig& config) {
  return sgemm_config_with(SgemmConfig{}, config.defines());
}

class SgemmSession : public ProductSession {
 public:
  SgemmSession(Jit& jit, const Context& context, const std::vector<std::int64_t>& size)
      : ProductSession(jit, context, size), workspace_(context) {}

  Measurement measure(const TuningConfig& config, const TimingPolicy& policy,
                      std::optional<double> best_ms) override {
    const SgemmOptions options{.choice = SgemmChoice::given,
                               .config = sgemm_config_of(config),
                               .workspace = &workspace_,
                               .jit = &jit_};
    return verify_and_time(policy, best_ms,
                           [&] { sgemm(context_, m_, n_, k_, a(), b(), c(), options); });
  }

 private:
  SgemmWorkspace workspace_;
};

class ClosestPairSession : public TuneSession {
 public:
  ClosestPairSession(Jit& jit, const Context& context, std::int64_t n)
      : jit_(jit),
        context_(context),
        points_(
            generate_points(static_cast<std::size_t>(n), PointDistribution::uniform, input_seed)),
        reference_(closest_pair(points_, ClosestPairMethod::cpu_divide_conquer).distance),
        timer_(context) {}

  Measurement measure(const TuningConfig& config, const TimingPolicy& policy,
                      std::optional<double> best_ms) override {
    const ClosestPairOptions options{
        .base = static_cast<int>(config.at("BASE")), .context = context_, .jit = &jit_};
    const ClosestPair found = closest_pair(points_, ClosestPairMethod::divide_conquer, options);
    if (found.distance != reference_) {
      Measurement wrong;
      wrong.status = MeasurementStatus::wrong;
      wrong.max_error = reference_ > 0.0 ? std::abs(found.distance - reference_) / reference_
                                         : std::abs(found.distance);
      wrong.detail = "distance " + format_error(found.distance) + " differs from the CPU's " +
                     format_error(reference_);
      return wrong;
    }
    const TimingResult timing = time_samples(policy, best_ms, [&] {
      timer_.flush_l2();
      const ClosestPair run = closest_pair(points_, ClosestPairMethod::divide_conquer, options);
      return run.times.gpu_ms();
    });
    return timed_measurement(timing, static_cast<double>(points_.size()), 1e6, "Mpoint/s");
  }

  std::optional<Measurement> peer(const TimingPolicy&) override { return std::nullopt; }

 private:
  Jit& jit_;
  Context context_;
  std::vector<Point2> points_;
  double reference_;
  LaunchTimer timer_;
};

std::int64_t parse_positive(std::string_view text, std::string_view whole) {
  std::int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 1 || value > INT_MAX)
    throw Error(ErrorKind::invalid_argument, "size '" + std::string(whole) + "': '" +
                                                 std::string(text) +
                                                 "' is not a whole number from 1 to 2^31-1");
  return value;
}

bool is_product(std::string_view problem) { return problem == "matmul" || problem == "sgemm"; }

TuneProblem matmul_problem(std::vector<std::int64_t> size, const std::filesystem::path& source) {
  Program program = source.empty() ? apps::builtin_program("matmul_tiled") : Program::from_file(source);
  TuningSpace space = TuningSpace::from_manifest(program.manifest());
  TuneProblem problem{"matmul", program, "matmul_tiled", std::move(space), std::move(size), {}, {}};
  problem.shape = [](const TuningConfig& config) {
    const std::int64_t tile = config.at("TILE_WIDTH");
    return LaunchShape{static_cast<int>(tile * tile), 0};
  };
  problem.open_session = [size = problem.size, program](Jit& jit, const Context& context) {
    return std::make_unique<MatmulSession>(jit, context, size, program);
  };
  return problem;
}

TuneProblem sgemm_problem(std::vector<std::int64_t> size, const DeviceProperties& device) {
  TuningSpace space = sgemm_tuning_space(device, static_cast<int>(size[0]),
                                         static_cast<int>(size[1]), static_cast<int>(size[2]));
  TuneProblem problem{"sgemm",          apps::builtin_program("sgemm"), "sgemm_aligned", std::move(space),
                      std::move(size), {},                        {}};
  problem.shape = [](const TuningConfig& config) {
    const SgemmConfig sgemm_config = sgemm_config_of(config);
    return LaunchShape{sgemm_config.threads(), sgemm_config.shared_bytes()};
  };
  problem.open_session = [size = problem.size](Jit& jit, const Context& context) {
    return std::make_unique<SgemmSession>(jit, context, size);
  };
  return problem;
}

TuneProblem closest_pair_problem(std::vector<std::int64_t> size) {
  Program program = apps::builtin_program("closest_pair");
  TuningSpace space = TuningSpace::from_manifest(program.manifest());
  TuneProblem problem{"closest-pair",  program, "dc_leaves", std::move(space),
                      std::move(size), {},      {}};
  problem.shape = [](const TuningConfig& config) {
    return LaunchShape{static_cast<int>(config.at("BASE")), 0};
  };
  problem.open_session = [n = problem.size[0]](Jit& jit, const Context& context) {
    return std::make_unique<ClosestPairSession>(jit, context, n);
  };
  return problem;
}

}  // namespace

const std::vector<std::string>& tune_problem_names() {
  static const std::vector<std::string> names{"matmul", "sgemm", "closest-pair"};
  return names;
}

std::vector<std::int64_t> parse_tune_size(std::string_view problem, std::string_view text) {
  std::vector<std::int64_t> size;
  for (std::string_view rest = text;;) {
    const std::size_t cross = rest.find('x');
    size.push_back(parse_positive(rest.substr(0, cross), text));
    if (cross == std::string_view::npos) break;
    rest.remove_prefix(cross + 1);
  }
  if (is_product(problem)) {
    if (size.size() == 1) size.assign(3, size[0]);
    if (size.size() != 3)
      throw Error(ErrorKind::invalid_argument,
                  std::string(problem) + " size '" + std::string(text) + "': expected N or MxNxK");
    return size;
  }
  if (size.size() != 1 || size[0] < 2)
    throw Error(ErrorKind::invalid_argument, std::string(problem) + " size '" + std::string(text) +
                                                 "': expected a number of points, at least 2");
  return size;
}

std::vector<std::int64_t> default_tune_size(std::string_view problem) {
  if (is_product(problem)) return {1024, 1024, 1024};
  return {1 << 20};
}

TuneProblem make_tune_problem(std::string_view name, std::vector<std::int64_t> size,
                              const DeviceProperties& device, const std::filesystem::path& source) {
  const auto& names = tune_problem_names();
  if (std::find(names.begin(), names.end(), name) == names.end())
    throw Error(ErrorKind::invalid_argument, "no tuning problem '" + std::string(name) +
                                                 "': expected matmul, sgemm or "
                                                 "closest-pair");
  if (!source.empty() && name != "matmul")
    throw Error(
        ErrorKind::invalid_argument,
        "--source applies to matmul only (a file with matmul_tiled's entry and TILE_WIDTH)");
  if (size.size() != (is_product(name) ? 3u : 1u))
    throw Error(ErrorKind::invalid_argument, std::string(name) + ": size " + format_size(size) +
                                                 " has the wrong number of dimensions");
  if (name == "matmul") return matmul_problem(std::move(size), source);
  if (name == "sgemm") return sgemm_problem(std::move(size), device);
  return closest_pair_problem(std::move(size));
}

TunedChoice choose_tuned(const TuneProblem& problem, const DeviceProperties& device,
                         const TuningDatabase& database) {
  TunedChoice choice =
      choose(database.records(), tune_key(problem, device), problem.space.default_config());
  if (log::enabled(log::Level::info))
    log::write(log::Level::info, "tuned " + problem.name + " " + format_size(problem.size) + ": " +
                                     choice.describe());
  return choice;
}

TunedMatmul plan_matmul_tuned(std::int64_t m, std::int64_t n, std::int64_t k,
                              const DeviceProperties& device, const TuningDatabase& database) {
  TunedChoice choice = choose_tuned(matmul_problem({m, n, k}, {}), device, database);
  MatmulPlan plan = plan_matmul(m, n, k, MatmulVariant::tiled, choice.config.defines());
  return {std::move(plan), std::move(choice)};
}

TuningKey tune_key(const TuneProblem& problem, const DeviceProperties& device) {
  return {problem.name, source_hash(problem.program), problem.space.describe(),
          device.name,  device.compute_capability(),  nvrtc_version(),
          problem.size};
}

}  // namespace ptxrt::apps
