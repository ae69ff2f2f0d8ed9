#include "apps/matmul/matmul.hpp"

#include "apps/common/builtin_kernels.hpp"
#include "apps/common/kernel_defines.hpp"
#include "apps/common/random_data.hpp"
#include "apps/common/reference.hpp"
#include "apps/common/sizes.hpp"
#include "apps/common/timing.hpp"
#include "ptxrt/core/error.hpp"

namespace ptxrt::apps {

MatmulVariant parse_matmul_variant(std::string_view name) {
  if (name == "naive") return MatmulVariant::naive;
  if (name == "tiled") return MatmulVariant::tiled;
  throw Error(ErrorKind::invalid_argument,
              "matmul variant '" + std::string(name) + "' is unknown: expected naive or tiled");
}

std::string_view to_string(MatmulVariant variant) {
  return variant == MatmulVariant::naive ? "naive" : "tiled";
}

ProductSizes checked_product_sizes(std::string_view program, std::int64_t m, std::int64_t n,
                                   std::int64_t k) {
  const std::string name(program);
  const ProductSizes sizes{positive_int(name + " m", m), positive_int(name + " n", n),
                           positive_int(name + " k", k)};
  const auto size = [](int value) { return static_cast<std::size_t>(value); };
  checked_product(name + " m*k", {size(sizes.m), size(sizes.k)}, sizeof(float));
  checked_product(name + " k*n", {size(sizes.k), size(sizes.n)}, sizeof(float));
  checked_product(name + " m*n", {size(sizes.m), size(sizes.n)}, sizeof(float));
  return sizes;
}

MatmulPlan plan_matmul(std::int64_t m, std::int64_t n, std::int64_t k, MatmulVariant variant,
                       std::vector<Define> defines) {
  const auto [rows, cols, inner] = checked_product_sizes("matmul", m, n, k);

  const bool tiled = variant == MatmulVariant::tiled;
  Program program = apps::builtin_program(tiled ? "matmul_tiled" : "matmul_naive");
  std::vector<Define> resolved = resolve_defines(program, std::move(defines));
  const auto tile =
      static_cast<unsigned>(define_int(resolved, tiled ? "TILE_WIDTH" : "BLOCK_SIZE"));
  const Dim3 grid{blocks_for(static_cast<unsigned>(cols), tile),
                  blocks_for(static_cast<unsigned>(rows), tile)};
  return {rows,
          cols,
          inner,
          variant,
          std::move(program),
          tiled ? "matmul_tiled" : "matmul_naive",
          std::move(resolved),
          grid,
          Dim3{tile, tile}};
}

Run time_matmul(Jit& jit, const Context& context, const MatmulPlan& plan,
                const DeviceBuffer<float>& a, const DeviceBuffer<float>& b, DeviceBuffer<float>& c,
                int repeats) {
  const Kernel kernel =
      jit.kernel(plan.program, compile_options(plan.defines), context, plan.entry);
  Run run = describe_launch("matmul", plan.entry, plan.defines, plan.grid, plan.block);
  run.median_ms = median_launch_ms(
      context, repeats, [&] { c.memory().fill_words(poison_word); },
      [&] {
        kernel.launch({.grid = plan.grid, .block = plan.block}, a, b, c, plan.m, plan.n, plan.k);
      });
  run.rate = giga_per_second(2.0 * plan.m * plan.n * static_cast<double>(plan.k), run.median_ms);
  run.rate_unit = "GFLOP/s";
  return run;
}

MatmulOperands make_matmul_operands(const Context& context, int m, int n, int k,
                                    std::uint64_t seed) {
  const auto rows = static_cast<std::size_t>(m);
  const auto columns = static_cast<std::size_t>(n);
  const auto inner = static_cast<std::size_t>(k);
  std::vector<float> a = random_floats(rows * inner, seed, 0);
  std::vector<float> b = random_floats(inner * columns, seed, 1);
  DeviceBuffer<float> device_a(context, std::span<const float>(a));
  DeviceBuffer<float> device_b(context, std::span<const float>(b));
  return {rows,          columns, inner, std::move(a), std::move(b), std::move(device_a),
          std::move(device_b), DeviceBuffer<float>(context, rows * columns)};
}

Run run_matmul(Jit& jit, const Context& context, const MatmulPlan& plan,
               const RunOptions& options) {
  MatmulOperands operands = make_matmul_operands(context, plan.m, plan.n, plan.k, options.seed);
  Run run = time_matmul(jit, context, plan, operands.device_a, operands.device_b,
                        operands.device_c, options.repeats);
  if (options.verify)
    record_comparison(run, operands.device_c.download(),
                      matmul(operands.a, operands.b, operands.m, operands.n, operands.k),
                      matmul_tolerance);
  return run;
}

}  // namespace ptxrt::apps
