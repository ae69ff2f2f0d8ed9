// Tune your own kernel from C++, then run the winner: kernels/horner.cu's BLOCK and ITEMS are
// searched (every config verified against its reference kernel, each in a worker process), the
// results go to the tuning database, and TunedKernel compiles and launches what it picked for
// this GPU and size. The output is checked against the CPU.
//   tuned_kernel_example [path/to/horner.cu]
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "ptxrt/tune.hpp"

int main(int argc, char** argv) try {
  // The tune starts this program again as its worker: serve, and nothing else, then.
  if (std::optional<int> code = ptxrt::serve_tune_worker(argc, argv)) return *code;
  const std::string kernel_file = argc > 1 ? argv[1] : KERNEL_FILE;
  const int degree = 9, n = 3'000'017;  // n: not a multiple of any block

  ptxrt::KernelProblem problem(ptxrt::Program::from_file(kernel_file), "horner");
  problem.size("n")
      .define("DEGREE", std::to_string(degree))
      .tune("BLOCK", {64, 128, 256, 512}, 256)
      .tune("ITEMS", {1, 2, 4, 8}, 1)
      .block("BLOCK")
      .grid("ceil_div(n, BLOCK * ITEMS)")
      .buffer("x", ptxrt::ElementType::float32, "n", ptxrt::DataInit::uniform(-1, 1))
      .buffer("y", ptxrt::ElementType::float32, "n", ptxrt::DataInit::zeros(),
              ptxrt::ArgumentRole::output)
      .scalar("n", ptxrt::ElementType::int32, "n")
      .symbol("coefficients", ptxrt::ElementType::float32, "16", ptxrt::DataInit::uniform(-1, 1))
      .verify_with_kernel({.entry = "horner_reference",
                           .geometry = ptxrt::LaunchGeometry::of({"256"}, {"ceil_div(n, 256)"})})
      .tolerance(1e-5, 1e-4)
      .flops("2 * DEGREE * n");
  problem.validate();

  const ptxrt::TuningDatabase database(ptxrt::TuningDatabase::default_path());
  ptxrt::ProblemTuneOptions options;
  options.tune.database = &database;
  const ptxrt::TuneReport report = ptxrt::tune_problem(problem, {{"n", n}}, options).report;
  if (!report.winner) {
    std::fprintf(stderr, "tuned_kernel_example: no config passed verification\n");
    return 1;
  }
  std::printf("tuned %zu configs in %.1f s: %s at %.4f ms (%.0f %s)\n", report.results.size(),
              report.wall_seconds, report.winner->config.describe().c_str(),
              report.winner->median_ms, report.winner->rate, report.winner->rate_unit.c_str());

  // At run time: the database's pick for this device and size, compiled and loaded once.
  const ptxrt::Context context = ptxrt::Context::primary(0);
  const ptxrt::TunedKernel horner(problem, {{"n", n}}, context, database);
  std::mt19937 generator(std::random_device{}());
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> coefficients(16), x(n);
  for (float& value : coefficients) value = uniform(generator);
  for (float& value : x) value = uniform(generator);
  horner.module().symbol<float>("coefficients").set(std::span<const float>(coefficients));
  const ptxrt::DeviceBuffer<float> device_x(context, std::span<const float>(x));
  const std::vector<float> poison(n, std::numeric_limits<float>::quiet_NaN());
  ptxrt::DeviceBuffer<float> device_y(context, std::span<const float>(poison));
  horner.launch(device_x, device_y, n);  // the hot path: one call
  const std::vector<float> y = device_y.download();

  double worst = 0;
  for (int i = 0; i < n; ++i) {
    double expected = 0;
    for (int power = degree; power >= 0; --power) expected = expected * x[i] + coefficients[power];
    worst = std::isnan(y[i]) ? INFINITY : std::max(worst, std::abs(y[i] - expected));
  }
  const bool ok = worst < 1e-4;
  std::printf("%s (%s), %d points on %s: max error %.1e: %s\n", horner.choice().config.describe().c_str(),
              std::string(ptxrt::to_string(horner.choice().level)).c_str(), n,
              context.device().properties().name.c_str(), worst, ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
} catch (const ptxrt::Error& error) {
  std::fprintf(stderr, "tuned_kernel_example: %s\n", error.what());
  return 1;
}
