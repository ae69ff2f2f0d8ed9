#include "apps/classic/histogram.hpp"

#include <algorithm>
#include <string>

#include "apps/common/builtin_kernels.hpp"
#include "apps/common/kernel_defines.hpp"
#include "apps/common/random_data.hpp"
#include "apps/common/reference.hpp"
#include "apps/common/sizes.hpp"
#include "apps/common/timing.hpp"
#include "ptxrt/core/error.hpp"

namespace ptxrt::apps {
namespace {

// The launch: as many blocks as n needs, at most as many as are resident at once; a cluster
// variant's grid is whole clusters.
LaunchConfig histogram_launch(const Kernel& kernel, const Context& context,
                              const HistogramPlan& plan) {
  const std::size_t shared = plan.shared_bytes();
  // The occupancy calculator counts the shared memory the kernel is opted in to.
  kernel.set_max_dynamic_shared_bytes(shared);
  const int sm_count = context.device().properties().sm_count;
  if (plan.variant == HistogramVariant::block) {
    const auto per_sm = static_cast<unsigned>(
        kernel.max_active_blocks_per_sm(static_cast<int>(plan.block_size), shared));
    return {.grid = grid_stride_blocks(plan.n, plan.block_size, sm_count, per_sm),
            .block = plan.block_size,
            .dynamic_shared_bytes = shared};
  }
  const Dim3 cluster{plan.cluster_size};
  const LaunchConfig one_cluster{.grid = cluster,
                                 .block = plan.block_size,
                                 .dynamic_shared_bytes = shared,
                                 .cluster = cluster};
  const auto resident = static_cast<std::uint64_t>(kernel.max_active_clusters(one_cluster));
  const std::uint64_t needed = (plan.n + plan.block_size - 1) / plan.block_size;
  const std::uint64_t clusters = std::max<std::uint64_t>(
      1, std::min(resident, (needed + plan.cluster_size - 1) / plan.cluster_size));
  LaunchConfig config = one_cluster;
  config.grid = static_cast<unsigned>(clusters * plan.cluster_size);
  return config;
}

}  // namespace

HistogramVariant parse_histogram_variant(std::string_view name) {
  if (name == "block") return HistogramVariant::block;
  if (name == "cluster") return HistogramVariant::cluster;
  throw Error(ErrorKind::invalid_argument, "histogram variant '" + std::string(name) +
                                               "' is unknown: expected block or cluster");
}

std::string_view to_string(HistogramVariant variant) {
  return variant == HistogramVariant::block ? "block" : "cluster";
}

std::size_t HistogramPlan::shared_bytes() const {
  const unsigned blocks_sharing = variant == HistogramVariant::cluster ? cluster_size : 1;
  return sizeof(std::uint32_t) * (bins / blocks_sharing);
}

HistogramPlan plan_histogram(std::int64_t n, HistogramVariant variant,
                             std::vector<Define> defines) {
  const std::size_t count = positive_size("histogram n", n);
  checked_product("histogram n", {count}, sizeof(std::uint32_t));
  Program program = apps::builtin_program("histogram");
  std::vector<Define> resolved = resolve_defines(program, std::move(defines));
  const auto bins = static_cast<unsigned>(define_int(resolved, "BINS"));
  const auto block_size = static_cast<unsigned>(define_int(resolved, "BLOCK_SIZE"));
  const auto cluster_size = static_cast<unsigned>(define_int(resolved, "CLUSTER_SIZE"));
  return {count, variant, std::move(program), std::move(resolved), bins, block_size, cluster_size};
}

Run run_histogram(Jit& jit, const Context& context, const HistogramPlan& plan,
                  const RunOptions& options) {
  const std::string entry = "histogram_" + std::string(to_string(plan.variant));
  const Kernel kernel = jit.kernel(plan.program, compile_options(plan.defines), context, entry);
  const LaunchConfig config = histogram_launch(kernel, context, plan);
  Run run = describe_launch("histogram", entry, plan.defines, config.grid, config.block);
  const std::vector<std::uint32_t> values =
      random_uints(plan.n, options.seed, 0, plan.bins + plan.bins / 8);
  const DeviceBuffer<std::uint32_t> device_values(context, std::span<const std::uint32_t>(values));
  DeviceBuffer<std::uint32_t> counts(context, plan.bins);
  const auto n = static_cast<long long>(plan.n);
  run.median_ms = median_launch_ms(
      context, options.repeats, [&] { counts.fill_bytes(0xff); },
      [&] {
        counts.fill_bytes(0);
        kernel.launch(config, device_values, counts, n);
      });
  run.rate = giga_per_second(sizeof(std::uint32_t) * static_cast<double>(plan.n), run.median_ms);
  run.rate_unit = "GB/s";
  run.note = std::to_string(plan.bins) + " bins, " + std::to_string(plan.shared_bytes()) +
             " bytes of shared memory per block";
  if (plan.variant == HistogramVariant::cluster)
    run.note += ", clusters of " + std::to_string(plan.cluster_size) + " blocks";
  if (!options.verify) return run;
  const std::vector<std::uint32_t> expected = histogram(values, plan.bins);
  const std::vector<std::uint32_t> actual = counts.download();
  std::size_t wrong = 0;
  for (std::size_t bin = 0; bin < expected.size(); ++bin) wrong += actual[bin] != expected[bin];
  run.verified = true;
  run.max_error = static_cast<double>(wrong);
  run.tolerance = 0.0;
  run.error_measure = "bins whose count differs from the CPU's";
  return run;
}

}  // namespace ptxrt::apps
