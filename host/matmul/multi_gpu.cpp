#include "host/matmul/multi_gpu.hpp"

#include <algorithm>
#include <barrier>
#include <chrono>
#include <climits>
#include <exception>
#include <thread>

#include "ptxrt/error.hpp"
#include "ptxrt/ptxrt.hpp"

namespace ptxrt::host {
namespace {

using Clock = std::chrono::steady_clock;

double milliseconds_between(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration<double, std::milli>(end - start).count();
}

void check_dimension(std::size_t value, const char* name) {
  if (value == 0 || value > static_cast<std::size_t>(INT_MAX))
    throw Error(ErrorKind::invalid_argument, std::string("split_matmul: ") + name + " = " +
                                                 std::to_string(value) + " is outside 1.." +
                                                 std::to_string(INT_MAX));
}

void check_size(std::span<const float> values, std::size_t expected, const char* name) {
  if (values.size() != expected)
    throw Error(ErrorKind::invalid_argument,
                std::string("split_matmul: ") + name + " holds " + std::to_string(values.size()) +
                    " floats, but its dimensions make " + std::to_string(expected));
}

struct Problem {
  std::span<const float> a, b;
  std::span<float> c;
  int m, n, k;
};

// One device's part, on its own thread: everything that is not the multiplication itself
// (context, kernel, memory) happens before `ready`, so that the timed part starts together.
class DeviceWork : public DevicePart {
 public:
  DeviceWork(Jit& jit, const Problem& problem, int tile_width, DeviceShare& share)
      : problem_(problem),
        share_(share),
        context_(Context::primary(share.device)),
        kernel_(
            jit.library(Program::builtin("matmul_tiled"),
                        Jit::target_for({.defines = {{"TILE_WIDTH", std::to_string(tile_width)}}},
                                        context_))
                .kernel("matmul_tiled", context_)),
        tile_(static_cast<unsigned>(tile_width)),
        rows_(static_cast<int>(share.rows.count)),
        a_(context_, share.rows.count * problem.k),
        b_(context_, problem.b.size()),
        c_(context_, share.rows.count * problem.n) {}

  void run() override {
    const auto start = Clock::now();
    a_.upload(problem_.a.subspan(share_.rows.first * problem_.k, a_.size()));
    b_.upload(problem_.b);
    const auto uploaded = Clock::now();
    Event before(context_), after(context_);
    before.record();
    kernel_.launch({.grid = {blocks_for(problem_.n, tile_), blocks_for(rows_, tile_)},
                    .block = {tile_, tile_}},
                   a_, b_, c_, rows_, problem_.n, problem_.k);
    after.record();
    share_.kernel_ms = Event::elapsed_ms(before, after);
    const auto computed = Clock::now();
    c_.download(problem_.c.subspan(share_.rows.first * problem_.n, c_.size()));
    share_.upload_ms = milliseconds_between(start, uploaded);
    share_.download_ms = milliseconds_between(computed, Clock::now());
  }

 private:
  Problem problem_;
  DeviceShare& share_;
  Context context_;
  Kernel kernel_;
  unsigned tile_;
  int rows_;
  DeviceBuffer<float> a_, b_, c_;
};

}  // namespace

std::vector<RowBlock> split_rows(std::size_t rows, std::size_t parts, std::size_t granule) {
  if (parts == 0 || granule == 0)
    throw Error(ErrorKind::invalid_argument, "split_rows: parts (" + std::to_string(parts) +
                                                 ") and granule (" + std::to_string(granule) +
                                                 ") must be at least 1");
  const std::size_t units = (rows + granule - 1) / granule;
  std::vector<RowBlock> blocks;
  std::size_t first = 0;
  for (std::size_t part = 0; part < parts; ++part) {
    const std::size_t part_units = units / parts + (part < units % parts ? 1 : 0);
    const std::size_t count = std::min(part_units * granule, rows - first);
    blocks.push_back({first, count});
    first += count;
  }
  return blocks;
}

double run_parts_together(std::size_t count,
                          const std::function<std::unique_ptr<DevicePart>(std::size_t)>& make) {
  Clock::time_point start;
  std::barrier ready(static_cast<std::ptrdiff_t>(count),
                     [&start]() noexcept { start = Clock::now(); });
  std::vector<Clock::time_point> finished(count);
  std::vector<std::exception_ptr> failures(count);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < count; ++i)
    threads.emplace_back([&, i] {
      bool arrived = false;
      try {
        const std::unique_ptr<DevicePart> part = make(i);
        ready.arrive_and_wait();
        arrived = true;
        part->run();
        finished[i] = Clock::now();  // before the device's memory is freed
      } catch (...) {
        failures[i] = std::current_exception();
        // The others must not wait for a device that will never be ready.
        if (!arrived) ready.arrive_and_drop();
      }
    });
  for (std::thread& thread : threads) thread.join();
  for (const std::exception_ptr& failure : failures)
    if (failure) std::rethrow_exception(failure);
  return count == 0
             ? 0.0
             : milliseconds_between(start, *std::max_element(finished.begin(), finished.end()));
}

double MultiGpuMatmul::slowest_kernel_ms() const {
  double slowest = 0;
  for (const DeviceShare& share : shares) slowest = std::max(slowest, share.kernel_ms);
  return slowest;
}

MultiGpuMatmul split_matmul(Jit& jit, std::span<const float> a, std::span<const float> b,
                            std::size_t m, std::size_t n, std::size_t k,
                            const MultiGpuMatmulOptions& options) {
  check_dimension(m, "m");
  check_dimension(n, "n");
  check_dimension(k, "k");
  check_size(a, m * k, "A");
  check_size(b, k * n, "B");
  const std::vector<int> devices = devices_or_all(options.devices, "split_matmul");
  const std::vector<RowBlock> blocks =
      split_rows(m, devices.size(), static_cast<std::size_t>(options.tile_width));

  MultiGpuMatmul result;
  result.c.resize(m * n);
  for (std::size_t i = 0; i < devices.size(); ++i) result.shares.push_back({devices[i], blocks[i]});
  const Problem problem{
      a, b, result.c, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k)};
  // A device whose block is empty (more devices than tiles of rows) gets no thread.
  std::vector<std::size_t> working;
  for (std::size_t i = 0; i < devices.size(); ++i)
    if (blocks[i].count > 0) working.push_back(i);
  result.wall_ms = run_parts_together(working.size(), [&](std::size_t part) {
    return std::make_unique<DeviceWork>(jit, problem, options.tile_width,
                                        result.shares[working[part]]);
  });
  return result;
}

}  // namespace ptxrt::host
