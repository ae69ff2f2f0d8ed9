#include "apps/tune/tune_problems.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <memory>
#include <span>
#include <utility>

#include "apps/closest_pair/closest_pair.hpp"
#include "apps/closest_pair/closest_pair_gpu.hpp"
#include "apps/common/builtin_kernels.hpp"
#include "apps/common/reference.hpp"
#include "apps/matmul/cublas.hpp"
#include "ptxrt/blas/sgemm.hpp"
#include "ptxrt/blas/sgemm_tuning.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/log.hpp"
#include "ptxrt/tune/problem_tuner.hpp"

namespace ptxrt::apps {

namespace {

// Products up to this many multiply-adds are checked against the CPU's fp64 reference; larger
// ones against cuBLAS (or, without it, the default SGEMM config), which the CPU would take
// minutes to match.
constexpr double cpu_reference_limit = 134217728.0;  // 512³

struct ProductSizes {
  int m, n, k;
};

ProductSizes product_sizes(const ProblemDevice& device) {
  return {static_cast<int>(device.size("m")), static_cast<int>(device.size("n")),
          static_cast<int>(device.size("k"))};
}

std::vector<float> download_floats(const DeviceRange& range) {
  std::vector<float> values(range.bytes() / sizeof(float));
  range.download_bytes(values.data(), values.size() * sizeof(float));
  return values;
}

// C of the product of buffers a and b, written into c; what computed it.
std::string product_reference(const ProblemDevice& device) {
  const auto [m, n, k] = product_sizes(device);
  DeviceRange& a = device.buffer("a");
  DeviceRange& b = device.buffer("b");
  DeviceRange& c = device.buffer("c");
  if (static_cast<double>(m) * n * k <= cpu_reference_limit) {
    const std::vector<float> product =
        matmul(download_floats(a), download_floats(b), static_cast<std::size_t>(m),
               static_cast<std::size_t>(n), static_cast<std::size_t>(k));
    c.upload_bytes(product.data(), product.size() * sizeof(float));
    return "the CPU's fp64 product";
  }
  if (const CublasAvailability cublas = find_cublas(); cublas.library) {
    Cublas(cublas.library, device.context()).sgemm_row_major(a, b, c, m, n, k);
    return "cuBLAS";
  }
  sgemm(device.context(), m, n, k, a.address(), b.address(), c.address(), {.jit = &device.jit()});
  return "the SGEMM family's default config";
}

std::optional<ProblemPeerRun> cublas_peer(const ProblemDevice& device) {
  const CublasAvailability cublas = find_cublas();
  if (!cublas.library) return std::nullopt;
  const auto handle = std::make_shared<const Cublas>(cublas.library, device.context());
  return ProblemPeerRun{.description = "cuBLAS SGEMM (" + cublas.description + ")",
                        .run = [handle, device] {
                          const auto [m, n, k] = product_sizes(device);
                          handle->sgemm_row_major(device.buffer("a"), device.buffer("b"),
                                                  device.buffer("c"), m, n, k);
                        }};
}

// What the matrix products share beyond their data (sgemm_problem's): the reference, the
// tolerance and the peer.
KernelProblem& checked_as_product(KernelProblem& problem) {
  return problem.verify_on_device(product_reference)
      .tolerance(0.0, matmul_tolerance, ProblemVerification::RelativeTo::largest)
      .peer(cublas_peer);
}

// The GPU divide & conquer on the points buffer (n float pairs), its distance written to the
// distance buffer. The points' box, which every run needs, is read once.
ConfigRunner closest_pair_runner(const ProblemDevice& device) {
  const DevicePoints points(device.buffer("points").address(),
                            static_cast<std::size_t>(device.size("n")));
  double bounds_ms = 0.0;
  const PointBox box =
      decode_box(device_bounds(points, GpuSetup{device.context(), &device.jit(), 128}, bounds_ms));
  return [device, points, box](const TuningConfig& config) {
    const ClosestPairOptions options{.base = static_cast<int>(config.at("BASE")),
                                     .context = device.context(),
                                     .jit = &device.jit()};
    const double distance = closest_pair_in_box(device.context(), points, box,
                                                ClosestPairMethod::divide_conquer, options)
                                .distance;
    device.buffer("distance").upload_bytes(&distance, sizeof distance);
  };
}

void closest_pair_reference(ProblemData& data) {
  const std::span<const float> coordinates = std::as_const(data).span<float>("points");
  const std::span<const Point2> points(reinterpret_cast<const Point2*>(coordinates.data()),
                                       coordinates.size() / 2);
  data.span<double>("distance")[0] =
      closest_pair(points, ClosestPairMethod::cpu_divide_conquer).distance;
}

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

// What a builtin's sizes are, for a message.
std::string problem_sizes_text(std::string_view problem) {
  return std::string(problem) + (is_product(problem) ? "'s sizes: m, n, k" : "'s size: n");
}

// "1024" or "MxNxK" for a product, "N" for closest-pair.
ProblemSizes parse_dimensions(std::string_view problem, std::string_view text) {
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
    return {{"m", size[0]}, {"n", size[1]}, {"k", size[2]}};
  }
  if (size.size() != 1 || size[0] < 2)
    throw Error(ErrorKind::invalid_argument, std::string(problem) + " size '" + std::string(text) +
                                                 "': expected a number of points, at least 2");
  return {{"n", size[0]}};
}

// Sizes by name ("m=1024,n=512"): each the problem's and within what the kernels' int sizes
// hold.
ProblemSizes parse_named(std::string_view problem, std::string_view text) {
  ProblemSizes sizes = parse_problem_sizes(text);
  const std::vector<std::string> known =
      is_product(problem) ? std::vector<std::string>{"m", "n", "k"} : std::vector<std::string>{"n"};
  for (const auto& [name, value] : sizes) {
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw Error(ErrorKind::invalid_argument, std::string(problem) + " size '" +
                                                   std::string(text) + "': no size " + name + " (" +
                                                   problem_sizes_text(problem) + ")");
    if (value > INT_MAX)
      throw Error(
          ErrorKind::invalid_argument,
          std::string(problem) + " size '" + std::string(text) + "': " + name + " is over 2^31-1");
    if (!is_product(problem) && value < 2)
      throw Error(ErrorKind::invalid_argument, std::string(problem) + " size '" +
                                                   std::string(text) +
                                                   "': expected a number of points, at least 2");
  }
  return sizes;
}

}  // namespace

const std::vector<std::string>& tune_problem_names() {
  static const std::vector<std::string> names{"matmul", "sgemm", "closest-pair"};
  return names;
}

KernelProblem matmul_problem(const std::filesystem::path& source) {
  KernelProblem problem(
      source.empty() ? builtin_program("matmul_tiled") : Program::from_file(source),
      "matmul_tiled");
  problem.name("matmul")
      .size("m", 1024)
      .size("n", 1024)
      .size("k", 1024)
      .tune_from_manifest()
      .block("TILE_WIDTH", "TILE_WIDTH")
      .grid("ceil_div(n, TILE_WIDTH)", "ceil_div(m, TILE_WIDTH)")
      .buffer("a", ElementType::float32, "m * k", DataInit::uniform(-1.0, 1.0))
      .buffer("b", ElementType::float32, "k * n", DataInit::uniform(-1.0, 1.0))
      .buffer("c", ElementType::float32, "m * n", DataInit::zeros(), ArgumentRole::output)
      .scalar("m", ElementType::int32, "m")
      .scalar("n", ElementType::int32, "n")
      .scalar("k", ElementType::int32, "k")
      .flops("2 * m * n * k")
      .key_by_source();
  checked_as_product(problem).validate();
  return problem;
}

KernelProblem closest_pair_problem() {
  KernelProblem problem(builtin_program("closest_pair"), "dc_leaves");
  problem.name("closest-pair")
      .size("n", 1 << 20)
      .tune_from_manifest()
      .block("BASE")
      .grid("ceil_div(n, BASE)")
      .buffer("points", ElementType::float32, "2 * n", DataInit::uniform(0.0, 1.0))
      .buffer("distance", ElementType::float64, "1", DataInit::zeros(), ArgumentRole::output)
      .verify_with(closest_pair_reference)
      .tolerance(0.0, 0.0)  // every method finds the exact minimum
      .rate("n", "Mpoint/s", 1e6)
      .launch_with(closest_pair_runner)
      .key_by_source();
  problem.validate();
  return problem;
}

std::optional<KernelProblem> find_builtin_tune_problem(std::string_view name,
                                                       const DeviceProperties& device) {
  if (name == "matmul") return matmul_problem();
  if (name == "closest-pair") return closest_pair_problem();
  if (name != "sgemm") return std::nullopt;
  KernelProblem problem = sgemm_problem(device);
  checked_as_product(problem);
  return problem;
}

KernelProblem builtin_tune_problem(std::string_view name, const DeviceProperties& device,
                                   const std::filesystem::path& source) {
  if (!source.empty() && name != "matmul")
    throw Error(
        ErrorKind::invalid_argument,
        "--source applies to matmul only (a file with matmul_tiled's entry and TILE_WIDTH)");
  if (!source.empty()) return matmul_problem(source);
  if (std::optional<KernelProblem> problem = find_builtin_tune_problem(name, device))
    return *std::move(problem);
  throw Error(ErrorKind::invalid_argument, "no tuning problem '" + std::string(name) +
                                               "': expected matmul, sgemm or closest-pair");
}

ProblemSizes parse_tune_size(std::string_view name, std::string_view text) {
  if (text.empty()) return {};
  if (text.find('=') != std::string_view::npos) return parse_named(name, text);
  return parse_dimensions(name, text);
}

TunedChoice choose_tuned(const KernelProblem& problem, const ProblemSizes& sizes,
                         const DeviceProperties& device, const TuningDatabase& database) {
  const ProblemSizes complete = problem.complete_sizes(sizes);
  TunedChoice choice = choose(database.records(), problem_key(problem, complete, device),
                              problem.fallback_config(complete));
  if (log::enabled(log::Level::info))
    log::write(log::Level::info, "tuned " + problem.name() + " " +
                                     format_size(problem.size_values(complete)) + ": " +
                                     choice.describe());
  return choice;
}

TunedMatmul plan_matmul_tuned(std::int64_t m, std::int64_t n, std::int64_t k,
                              const DeviceProperties& device, const TuningDatabase& database) {
  TunedChoice choice =
      choose_tuned(matmul_problem(), {{"m", m}, {"n", n}, {"k", k}}, device, database);
  MatmulPlan plan = plan_matmul(m, n, k, MatmulVariant::tiled, choice.config.defines());
  return {std::move(plan), std::move(choice)};
}

}  // namespace ptxrt::apps
