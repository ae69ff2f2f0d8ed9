#include "apps/common/timing.hpp"

#include <algorithm>
#include <string>

#include "ptxrt/core/error.hpp"
#include "ptxrt/core/stream.hpp"

namespace ptxrt::apps {

double median(std::vector<double> samples) {
  if (samples.empty()) throw Error(ErrorKind::invalid_argument, "median of no samples");
  const std::size_t middle = samples.size() / 2;
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(middle),
                   samples.end());
  const double upper = samples[middle];
  if (samples.size() % 2 == 1) return upper;
  const double lower =
      *std::max_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(middle));
  return (lower + upper) / 2.0;
}

std::vector<double> launch_times_ms(const Context& context, int repeats,
                                    const std::function<void()>& prepare,
                                    const std::function<void()>& launches) {
  if (repeats < 1)
    throw Error(ErrorKind::invalid_argument,
                "repeats must be at least 1, got " + std::to_string(repeats));
  Event start(context);
  Event end(context);
  std::vector<double> samples;
  for (int run = 0; run <= repeats; ++run) {
    prepare();
    start.record();
    launches();
    end.record();
    const double elapsed = Event::elapsed_ms(start, end);
    if (run > 0) samples.push_back(elapsed);
  }
  return samples;
}

double median_launch_ms(const Context& context, int repeats, const std::function<void()>& prepare,
                        const std::function<void()>& launches) {
  return median(launch_times_ms(context, repeats, prepare, launches));
}

}  // namespace ptxrt::apps
