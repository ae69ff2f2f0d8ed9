#include "apps/classic/aos_soa.hpp"

#include "apps/common/builtin_kernels.hpp"
#include "apps/common/kernel_defines.hpp"
#include "apps/common/random_data.hpp"
#include "apps/common/reference.hpp"
#include "apps/common/sizes.hpp"
#include "apps/common/timing.hpp"

namespace ptxrt::apps {

namespace {
constexpr unsigned block_threads = 256;
constexpr double bytes_per_point = 3 * sizeof(float) + sizeof(float);
}  // namespace

AosSoaPlan plan_aos_soa(std::int64_t n, std::vector<Define> defines) {
  const std::size_t count = positive_size("aos-soa n", n);
  checked_product("aos-soa n", {count}, sizeof(Point));
  Program program = apps::builtin_program("aos_soa");
  std::vector<Define> resolved = resolve_defines(program, std::move(defines));
  return {count, std::move(program), std::move(resolved)};
}

AosSoaRuns run_aos_soa(Jit& jit, const Context& context, const AosSoaPlan& plan,
                       const RunOptions& options) {
  const Module module = jit.module(plan.program, compile_options(plan.defines), context);
  const std::vector<float> x = random_floats(plan.n, options.seed, 0);
  const std::vector<float> y = random_floats(plan.n, options.seed, 1);
  const std::vector<float> z = random_floats(plan.n, options.seed, 2);
  std::vector<Point> points(plan.n);
  for (std::size_t i = 0; i < plan.n; ++i) points[i] = {x[i], y[i], z[i]};
  const DeviceBuffer<Point> device_points(context, std::span<const Point>(points));
  const DeviceBuffer<float> device_x(context, std::span<const float>(x));
  const DeviceBuffer<float> device_y(context, std::span<const float>(y));
  const DeviceBuffer<float> device_z(context, std::span<const float>(z));
  DeviceBuffer<float> out(context, plan.n);

  const Dim3 grid =
      grid_stride_blocks(plan.n, block_threads, context.device().properties().sm_count);
  const LaunchConfig config{.grid = grid, .block = block_threads};
  const auto n = static_cast<long long>(plan.n);
  const auto poison = [&] { out.memory().fill_words(poison_word); };
  const std::vector<float> expected = options.verify ? squared_norms(points) : std::vector<float>{};

  AosSoaRuns runs{describe_launch("aos-soa", "read_aos", plan.defines, grid, block_threads),
                  describe_launch("aos-soa", "read_soa", plan.defines, grid, block_threads)};
  const Kernel read_aos = module.kernel("read_aos");
  runs.aos.median_ms = median_launch_ms(context, options.repeats, poison,
                                        [&] { read_aos.launch(config, device_points, out, n); });
  if (options.verify) record_comparison(runs.aos, out.download(), expected, 0.0);
  const Kernel read_soa = module.kernel("read_soa");
  runs.soa.median_ms = median_launch_ms(context, options.repeats, poison, [&] {
    read_soa.launch(config, device_x, device_y, device_z, out, n);
  });
  if (options.verify) record_comparison(runs.soa, out.download(), expected, 0.0);
  for (Run* run : {&runs.aos, &runs.soa}) {
    run->rate = giga_per_second(bytes_per_point * static_cast<double>(plan.n), run->median_ms);
    run->rate_unit = "GB/s";
  }
  return runs;
}

}  // namespace ptxrt::apps
