#include "apps/classic/elementwise_add.hpp"

#include "apps/common/random_data.hpp"
#include "apps/common/timing.hpp"

namespace ptxrt::apps {

void time_elementwise_add(Run& run, const Context& context, const RunOptions& options,
                          std::size_t n, const AddLaunch& launch, const AddReference& reference) {
  const std::vector<float> a = random_floats(n, options.seed, 0);
  const std::vector<float> b = random_floats(n, options.seed, 1);
  const DeviceBuffer<float> device_a(context, std::span<const float>(a));
  const DeviceBuffer<float> device_b(context, std::span<const float>(b));
  DeviceBuffer<float> device_c(context, n);
  run.median_ms = median_launch_ms(
      context, options.repeats, [&] { device_c.memory().fill_words(poison_word); },
      [&] { launch(device_a, device_b, device_c); });
  run.rate = giga_per_second(3.0 * sizeof(float) * static_cast<double>(n), run.median_ms);
  run.rate_unit = "GB/s";
  if (options.verify) record_comparison(run, device_c.download(), reference(a, b), 0.0);
}

}  // namespace ptxrt::apps
