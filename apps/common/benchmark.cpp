#include "apps/common/benchmark.hpp"

#include "apps/classic/reduce.hpp"
#include "apps/classic/transpose.hpp"
#include "apps/classic/vector_add.hpp"
#include "apps/common/random_data.hpp"
#include "apps/common/reference.hpp"
#include "apps/common/timing.hpp"
#include "apps/matmul/cublas.hpp"
#include "apps/matmul/matmul.hpp"
#include "ptxrt/core/error.hpp"

namespace ptxrt::apps {

namespace {

constexpr const char* copy_peer = "cuMemcpyDtoD";
// The CPU reference of an n³ matmul costs n³ double multiply-adds: fine up to about 1024³.
constexpr int largest_cpu_checked_matmul = 1024;

std::string square(int side) { return std::to_string(side) + "x" + std::to_string(side); }

struct MatmulPeer {
  std::string name;
  std::optional<double> rate;
  std::vector<float> reference;  // cuBLAS's C, or the CPU's, or empty
  std::string reference_name;
};

MatmulPeer measure_cublas(const Context& context, const DeviceBuffer<float>& a,
                          const DeviceBuffer<float>& b, int side, int repeats) {
  const CublasAvailability found = find_cublas();
  if (!found.library) return {found.description + "; no ratio", std::nullopt, {}, {}};
  const Cublas cublas(found.library, context);
  DeviceBuffer<float> c(context, a.size());
  const double ms = median_launch_ms(
      context, repeats, [&] { c.memory().fill_words(poison_word); },
      [&] { cublas.sgemm_row_major(a, b, c, side, side, side); });
  const double flops = 2.0 * side * side * static_cast<double>(side);
  return {"cuBLAS SGEMM", giga_per_second(flops, ms), c.download(), "cuBLAS"};
}

std::vector<BenchRow> bench_matmul(Jit& jit, const Context& context, const BenchSizes& sizes,
                                   std::uint64_t seed) {
  const int side = sizes.matmul;
  const auto elements = static_cast<std::size_t>(side) * static_cast<std::size_t>(side);
  const std::vector<float> a = random_floats(elements, seed, 0);
  const std::vector<float> b = random_floats(elements, seed, 1);
  const DeviceBuffer<float> device_a(context, std::span<const float>(a));
  const DeviceBuffer<float> device_b(context, std::span<const float>(b));
  DeviceBuffer<float> device_c(context, elements);
  MatmulPeer peer = measure_cublas(context, device_a, device_b, side, sizes.repeats);
  if (peer.reference.empty() && side <= largest_cpu_checked_matmul) {
    const auto n = static_cast<std::size_t>(side);
    peer.reference = matmul(a, b, n, n, n);
    peer.reference_name = "CPU";
  }

  std::vector<std::pair<MatmulVariant, std::vector<Define>>> variants{{MatmulVariant::naive, {}}};
  for (const char* tile : {"4", "8", "16", "32"})
    variants.push_back({MatmulVariant::tiled, {{"TILE_WIDTH", tile}}});
  std::vector<BenchRow> rows;
  for (auto& [variant, defines] : variants) {
    const MatmulPlan plan = plan_matmul(side, side, side, variant, std::move(defines));
    Run run = time_matmul(jit, context, plan, device_a, device_b, device_c, sizes.repeats);
    if (!peer.reference.empty()) {
      record_comparison(run, device_c.download(), peer.reference, matmul_tolerance);
      run.error_measure =
          "max |gpu - " + peer.reference_name + "| / max |" + peer.reference_name + "|";
    }
    rows.push_back({"matmul " + square(side) + "x" + std::to_string(side), std::move(run),
                    peer.name, peer.rate});
  }
  return rows;
}

std::vector<BenchRow> bench_transpose(Jit& jit, const Context& context, const BenchSizes& sizes,
                                      std::uint64_t seed) {
  const RunOptions options{.seed = seed, .repeats = sizes.repeats, .verify = true};
  std::vector<BenchRow> rows;
  std::optional<double> peer_rate;
  for (TransposeVariant variant :
       {TransposeVariant::naive, TransposeVariant::shared, TransposeVariant::padded}) {
    const TransposePlan plan = plan_transpose(sizes.transpose, sizes.transpose, variant);
    if (!peer_rate)
      peer_rate = copy_rate_gb_per_s(context, 2 * sizeof(float) * plan.elements, sizes.repeats);
    rows.push_back({"transpose " + square(sizes.transpose),
                    run_transpose(jit, context, plan, options), copy_peer, peer_rate});
  }
  return rows;
}

std::vector<BenchRow> bench_reduce(Jit& jit, const Context& context, const BenchSizes& sizes,
                                   std::uint64_t seed) {
  const RunOptions options{.seed = seed, .repeats = sizes.repeats, .verify = true};
  const double peer_rate = copy_rate_gb_per_s(
      context, sizeof(float) * static_cast<std::size_t>(sizes.reduce), sizes.repeats);
  std::vector<BenchRow> rows;
  for (ReduceVariant variant : {ReduceVariant::sum, ReduceVariant::argmin}) {
    const ReducePlan plan = plan_reduce(sizes.reduce, variant);
    rows.push_back(
        {"reduce " + std::string(to_string(variant)) + " n=" + std::to_string(sizes.reduce),
         run_reduce(jit, context, plan, options), copy_peer, peer_rate});
  }
  return rows;
}

std::vector<BenchRow> bench_vector_add(Jit& jit, const Context& context, const BenchSizes& sizes,
                                       std::uint64_t seed) {
  const RunOptions options{.seed = seed, .repeats = sizes.repeats, .verify = true};
  const VectorAddPlan plan = plan_vector_add(sizes.vector_add);
  const double peer_rate = copy_rate_gb_per_s(context, 3 * sizeof(float) * plan.n, sizes.repeats);
  return {{"vecadd n=" + std::to_string(sizes.vector_add),
           run_vector_add(jit, context, plan, options), copy_peer, peer_rate}};
}

}  // namespace

BenchSizes BenchSizes::quick() { return {1024, 2048, 1ll << 24, 1ll << 24, 3}; }

const std::vector<std::string>& bench_names() {
  static const std::vector<std::string> names{"matmul", "transpose", "reduce", "vecadd"};
  return names;
}

std::vector<BenchRow> bench(Jit& jit, const Context& context, std::string_view name,
                            const BenchSizes& sizes, std::uint64_t seed) {
  if (name == "matmul") return bench_matmul(jit, context, sizes, seed);
  if (name == "transpose") return bench_transpose(jit, context, sizes, seed);
  if (name == "reduce") return bench_reduce(jit, context, sizes, seed);
  if (name == "vecadd") return bench_vector_add(jit, context, sizes, seed);
  throw Error(ErrorKind::invalid_argument, "bench: unknown work '" + std::string(name) +
                                               "': expected matmul, transpose, reduce or vecadd");
}

double copy_rate_gb_per_s(const Context& context, std::size_t traffic_bytes, int repeats) {
  const std::size_t bytes = traffic_bytes / 2;
  DeviceMemory source(context, bytes);
  DeviceMemory destination(context, bytes);
  source.fill_bytes(0);
  const double ms = median_launch_ms(
      context, repeats, [] {}, [&] { destination.copy_from(source, bytes); });
  return giga_per_second(2.0 * static_cast<double>(bytes), ms);
}

}  // namespace ptxrt::apps
