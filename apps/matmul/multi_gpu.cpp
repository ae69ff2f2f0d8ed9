#include "apps/matmul/multi_gpu.hpp"

#include <algorithm>
#include <barrier>
#include <chrono>
#include <climits>
#include <exception>
#include <thread>

#include "apps/common/builtin_kernels.hpp"
#include "apps/common/staged_copy.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/ptxrt.hpp"

namespace ptxrt::apps {
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

// Overlapped transfers split a device's rows into this many chunks (of whole tiles): enough that
// the first chunk's upload and the last one's download, which nothing overlaps, are short.
constexpr std::size_t overlap_chunks = 8;

// One device's part, on its own thread: everything that is not the multiplication itself
// (context, kernel, memory, streams, events) happens before `ready`, so that the timed part
// starts together.
class DeviceWork : public DevicePart {
 public:
  DeviceWork(Jit& jit, const Problem& problem, const MultiGpuMatmulOptions& options,
             DeviceShare& share)
      : problem_(problem),
        share_(share),
        transfers_(options.transfers),
        context_(Context::primary(share.device)),
        kernel_(jit.library(apps::builtin_program("matmul_tiled"),
                            Jit::target_for(
                                {.defines = {{"TILE_WIDTH", std::to_string(options.tile_width)}}},
                                context_))
                    .kernel("matmul_tiled", context_)),
        tile_(static_cast<unsigned>(options.tile_width)),
        a_(context_, share.rows.count * problem.k),
        b_(context_, problem.b.size()),
        c_(context_, share.rows.count * problem.n),
        copy_stream_(context_),
        compute_stream_(context_),
        copier_(context_) {
    share_.upload_bytes = (a_.size() + b_.size()) * sizeof(float);
    for (const RowBlock& chunk : split_rows(share.rows.count, overlap_chunks, tile_))
      if (chunk.count > 0) chunks_.push_back(chunk);
    for (std::size_t i = 0; i < chunks_.size(); ++i) {
      chunk_uploaded_.emplace_back(context_);
      chunk_computed_.emplace_back(context_);
    }
  }

  void run() override {
    if (transfers_ == HostTransfers::overlapped)
      run_overlapped();
    else
      run_synchronous();
  }

 private:
  // The kernel over `rows` of this part (relative to its first row), on `stream`.
  void launch_rows(const RowBlock& rows, CUstream stream) {
    const auto count = static_cast<int>(rows.count);
    const CUdeviceptr a = a_.address() + rows.first * problem_.k * sizeof(float);
    const CUdeviceptr c = c_.address() + rows.first * problem_.n * sizeof(float);
    kernel_.launch({.grid = {blocks_for(problem_.n, tile_), blocks_for(rows.count, tile_)},
                    .block = {tile_, tile_},
                    .stream = stream},
                   a, b_, c, count, problem_.n, problem_.k);
  }

  std::span<const float> a_rows(const RowBlock& rows) const {
    return problem_.a.subspan((share_.rows.first + rows.first) * problem_.k,
                              rows.count * problem_.k);
  }
  std::span<float> c_rows(const RowBlock& rows) const {
    return problem_.c.subspan((share_.rows.first + rows.first) * problem_.n,
                              rows.count * problem_.n);
  }

  void run_synchronous() {
    const auto start = Clock::now();
    a_.upload(a_rows({0, share_.rows.count}));
    b_.upload(problem_.b);
    const auto uploaded = Clock::now();
    Event before(context_), after(context_);
    before.record();
    launch_rows({0, share_.rows.count}, nullptr);
    after.record();
    share_.kernel_ms = Event::elapsed_ms(before, after);
    const auto computed = Clock::now();
    c_.download(c_rows({0, share_.rows.count}));
    share_.upload_ms = milliseconds_between(start, uploaded);
    share_.download_ms = milliseconds_between(computed, Clock::now());
  }

  // B, then each chunk of A's rows on the copy stream; each chunk's kernel on the compute stream
  // once its rows are there; each chunk of C back on the copy stream once computed.
  void run_overlapped() {
    Event started(context_), uploaded(context_), kernels_started(context_), downloaded(context_);
    started.record(copy_stream_);
    copier_.upload(b_.memory(), 0, std::as_bytes(problem_.b), copy_stream_);
    for (std::size_t i = 0; i < chunks_.size(); ++i) {
      copier_.upload(a_.memory(), chunks_[i].first * problem_.k * sizeof(float),
                     std::as_bytes(a_rows(chunks_[i])), copy_stream_);
      chunk_uploaded_[i].record(copy_stream_);
      compute_stream_.wait(chunk_uploaded_[i]);
      if (i == 0) kernels_started.record(compute_stream_);
      launch_rows(chunks_[i], compute_stream_.handle());
      chunk_computed_[i].record(compute_stream_);
    }
    uploaded.record(copy_stream_);
    for (std::size_t i = 0; i < chunks_.size(); ++i) {
      copy_stream_.wait(chunk_computed_[i]);
      copier_.download(std::as_writable_bytes(c_rows(chunks_[i])), c_.memory(),
                       chunks_[i].first * problem_.n * sizeof(float), copy_stream_);
    }
    downloaded.record(copy_stream_);
    copy_stream_.synchronize();
    share_.upload_ms = Event::elapsed_ms(started, uploaded);
    share_.kernel_ms = Event::elapsed_ms(kernels_started, chunk_computed_.back());
    share_.download_ms = Event::elapsed_ms(chunk_computed_.back(), downloaded);
  }

  Problem problem_;
  DeviceShare& share_;
  HostTransfers transfers_;
  Context context_;
  Kernel kernel_;
  unsigned tile_;
  DeviceBuffer<float> a_, b_, c_;
  Stream copy_stream_, compute_stream_;
  StagedCopier copier_;
  std::vector<RowBlock> chunks_;  // of this part's rows, none empty
  std::vector<Event> chunk_uploaded_, chunk_computed_;
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

HostTransfers parse_host_transfers(std::string_view name) {
  if (name == "overlapped") return HostTransfers::overlapped;
  if (name == "synchronous") return HostTransfers::synchronous;
  throw Error(ErrorKind::invalid_argument, "host transfers '" + std::string(name) +
                                               "' are unknown: expected overlapped or synchronous");
}

std::string_view to_string(HostTransfers transfers) {
  return transfers == HostTransfers::overlapped ? "overlapped" : "synchronous";
}

MultiGpuMatmul split_matmul(Jit& jit, std::span<const float> a, std::span<const float> b,
                            std::size_t m, std::size_t n, std::size_t k,
                            const MultiGpuMatmulOptions& options) {
  check_dimension(m, "m");
  check_dimension(n, "n");
  std::vector<float> c(m * n);
  MultiGpuMatmul result = split_matmul_into(jit, a, b, c, m, n, k, options);
  result.c = std::move(c);
  return result;
}

MultiGpuMatmul split_matmul_into(Jit& jit, std::span<const float> a, std::span<const float> b,
                                 std::span<float> c, std::size_t m, std::size_t n, std::size_t k,
                                 const MultiGpuMatmulOptions& options) {
  check_dimension(m, "m");
  check_dimension(n, "n");
  check_dimension(k, "k");
  check_size(a, m * k, "A");
  check_size(b, k * n, "B");
  check_size(c, m * n, "C");
  const std::vector<int> devices = devices_or_all(options.devices, "split_matmul");
  const std::vector<RowBlock> blocks =
      split_rows(m, devices.size(), static_cast<std::size_t>(options.tile_width));

  MultiGpuMatmul result;
  for (std::size_t i = 0; i < devices.size(); ++i) result.shares.push_back({devices[i], blocks[i]});
  const Problem problem{a, b, c, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k)};
  // A device whose block is empty (more devices than tiles of rows) gets no thread.
  std::vector<std::size_t> working;
  for (std::size_t i = 0; i < devices.size(); ++i)
    if (blocks[i].count > 0) working.push_back(i);
  result.wall_ms = run_parts_together(working.size(), [&](std::size_t part) {
    return std::make_unique<DeviceWork>(jit, problem, options, result.shares[working[part]]);
  });
  return result;
}

}  // namespace ptxrt::apps
