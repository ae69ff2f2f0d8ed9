#include "apps/classic/raytrace.hpp"

#include <algorithm>
#include <limits>
#include <random>

#include "apps/classic/ppm.hpp"
#include "apps/common/builtin_kernels.hpp"
#include "apps/common/kernel_defines.hpp"
#include "apps/common/sizes.hpp"
#include "apps/common/timing.hpp"
#include "ptxrt/core/error.hpp"

namespace ptxrt::apps {

namespace {
constexpr unsigned block_side = 16;
}

std::vector<Sphere> random_spheres(int count, int width, int height, std::uint64_t seed) {
  std::seed_seq sequence{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                         7u};
  std::mt19937 generator(sequence);
  const auto uniform = [&](float low, float high) {
    return std::uniform_real_distribution<float>(low, high)(generator);
  };
  const float side = static_cast<float>(std::min(width, height));
  const float half_width = static_cast<float>(width) / 2.0f;
  const float half_height = static_cast<float>(height) / 2.0f;
  std::vector<Sphere> spheres(static_cast<std::size_t>(count));
  for (Sphere& sphere : spheres) {
    sphere.r = uniform(0.0f, 1.0f);
    sphere.g = uniform(0.0f, 1.0f);
    sphere.b = uniform(0.0f, 1.0f);
    sphere.radius = uniform(0.02f, 0.12f) * side + 1.0f;
    sphere.x = uniform(-half_width, half_width);
    sphere.y = uniform(-half_height, half_height);
    sphere.z = uniform(-1000.0f, 1000.0f);
  }
  return spheres;
}

RaytracePlan plan_raytrace(std::int64_t width, std::int64_t height, std::int64_t spheres,
                           std::filesystem::path image, std::vector<Define> defines) {
  const int checked_width = positive_int("raytrace width", width);
  const int checked_height = positive_int("raytrace height", height);
  checked_product("raytrace width*height",
                  {static_cast<std::size_t>(width), static_cast<std::size_t>(height)}, 4);
  const int count = positive_int("raytrace spheres", spheres);
  Program program = apps::builtin_program("raytrace");
  std::vector<Define> resolved = resolve_defines(program, std::move(defines));
  const int max_spheres = define_int(resolved, "MAX_SPHERES");
  if (count > max_spheres)
    throw Error(ErrorKind::invalid_argument,
                "raytrace spheres = " + std::to_string(count) + " exceeds MAX_SPHERES=" +
                    std::to_string(max_spheres) + " (-D MAX_SPHERES=16|32|64|128)");
  const Dim3 grid{blocks_for(static_cast<unsigned>(width), block_side),
                  blocks_for(static_cast<unsigned>(height), block_side)};
  return {checked_width,
          checked_height,
          count,
          std::move(program),
          std::move(resolved),
          grid,
          Dim3{block_side, block_side},
          std::move(image)};
}

Run run_raytrace(Jit& jit, const Context& context, const RaytracePlan& plan,
                 const RunOptions& options) {
  const Module module = jit.module(plan.program, compile_options(plan.defines), context);
  const Kernel kernel = module.kernel("raytrace");
  const std::vector<Sphere> scene =
      random_spheres(plan.spheres, plan.width, plan.height, options.seed);
  // The symbol is the whole MAX_SPHERES array; the kernel reads only sphere_count of them.
  std::vector<Sphere> table(static_cast<std::size_t>(define_int(plan.defines, "MAX_SPHERES")),
                            Sphere{});
  std::copy(scene.begin(), scene.end(), table.begin());
  module.symbol<Sphere>("spheres").set(std::span<const Sphere>(table));
  module.symbol<int>("sphere_count").set(plan.spheres);

  const std::size_t pixels =
      static_cast<std::size_t>(plan.width) * static_cast<std::size_t>(plan.height);
  DeviceBuffer<unsigned char> rgba(context, pixels * 4);
  Run run = describe_launch("raytrace", "raytrace", plan.defines, plan.grid, plan.block);
  run.median_ms = median_launch_ms(
      context, options.repeats, [&] { rgba.memory().fill_words(poison_word); },
      [&] {
        kernel.launch({.grid = plan.grid, .block = plan.block}, rgba, plan.width, plan.height);
      });
  run.rate = giga_per_second(static_cast<double>(pixels), run.median_ms) * 1e3;
  run.rate_unit = "Mpixel/s";
  if (!options.verify && plan.image.empty()) return run;
  const std::vector<unsigned char> image = rgba.download();
  if (!plan.image.empty()) {
    write_ppm(plan.image, image, plan.width, plan.height);
    run.note = "image written to " + plan.image.string();
  }
  if (options.verify) {
    const std::vector<unsigned char> expected = raytrace(scene, plan.width, plan.height);
    const auto [actual, reference] = std::mismatch(image.begin(), image.end(), expected.begin());
    run.verified = true;
    run.max_error = actual == image.end() ? 0.0 : std::numeric_limits<double>::infinity();
    run.tolerance = 0.0;
    run.error_measure = "exact, byte for byte";
    if (actual != image.end()) {
      const auto byte = static_cast<std::size_t>(actual - image.begin());
      run.note += (run.note.empty() ? "" : "; ") + std::string("first difference at pixel (") +
                  std::to_string(byte / 4 % static_cast<std::size_t>(plan.width)) + ", " +
                  std::to_string(byte / 4 / static_cast<std::size_t>(plan.width)) + ")";
    }
  }
  return run;
}

}  // namespace ptxrt::apps
