// Device and pinned host memory. Thread safety: buffers may be read (downloaded, passed to
// kernels) from several threads at once; writing one from two threads at once is a data race,
// as for any container. Each buffer keeps its context alive.
//
// Ordering: the synchronous copies run on the context's legacy default stream, which does not
// wait for ptxrt's (non-blocking) Streams: after a kernel launched on a Stream, synchronize the
// stream before a synchronous download, or download_async on the same stream.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ptxrt/context.hpp"
#include "ptxrt/export.hpp"

namespace ptxrt {

namespace detail {
// The one place host<->device copies happen (buffers and symbols): the context made current,
// synchronous or on `stream`, failures naming `what`.
PTXRT_API void copy_to_device(const Context& context, CUdeviceptr destination, const void* source,
                              std::size_t bytes, CUstream stream, bool async,
                              std::string_view what);
PTXRT_API void copy_from_device(const Context& context, void* destination, CUdeviceptr source,
                                std::size_t bytes, CUstream stream, bool async,
                                std::string_view what);
// count * element_bytes, or Error(invalid_argument) naming both when the product overflows
// size_t: a wrapped size would allocate a small buffer that later copies overrun.
PTXRT_API std::size_t array_bytes(std::size_t count, std::size_t element_bytes);
}  // namespace detail

// Untyped device memory: one cuMemAlloc, freed in the destructor.
class PTXRT_API DeviceMemory {
 public:
  DeviceMemory(const Context& context, std::size_t bytes);
  ~DeviceMemory();
  DeviceMemory(DeviceMemory&& other) noexcept;
  DeviceMemory& operator=(DeviceMemory&& other) noexcept;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  CUdeviceptr address() const noexcept { return address_; }
  std::size_t bytes() const noexcept { return bytes_; }
  const Context& context() const noexcept { return context_; }

  // Byte ranges are checked against the allocation: an out-of-range copy is an Error.
  // A null stream means the synchronous copy.
  void upload_bytes(const void* source, std::size_t bytes, std::size_t offset = 0,
                    CUstream stream = nullptr, bool async = false);
  void download_bytes(void* destination, std::size_t bytes, std::size_t offset = 0,
                      CUstream stream = nullptr, bool async = false) const;
  void copy_from(const DeviceMemory& source, std::size_t bytes, CUstream stream = nullptr);
  void fill_bytes(std::uint8_t value, CUstream stream = nullptr);
  // Fills every 32-bit word with `word` (e.g. the bits of a NaN, to poison an output).
  void fill_words(std::uint32_t word, CUstream stream = nullptr);

 private:
  void check_range(std::size_t bytes, std::size_t offset, const char* what) const;
  void release() noexcept;
  Context context_;
  CUdeviceptr address_ = 0;
  std::size_t bytes_ = 0;
};

// A typed array in device memory. Passed to Kernel::launch it becomes its device pointer.
template <typename T>
class DeviceBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "device buffers hold trivially copyable types");

 public:
  DeviceBuffer(const Context& context, std::size_t count)
      : memory_(context, detail::array_bytes(count, sizeof(T))), count_(count) {}
  // Allocates and uploads.
  DeviceBuffer(const Context& context, std::span<const T> values)
      : DeviceBuffer(context, values.size()) {
    upload(values);
  }

  std::size_t size() const noexcept { return count_; }
  std::size_t bytes() const noexcept { return memory_.bytes(); }
  CUdeviceptr address() const noexcept { return memory_.address(); }
  const Context& context() const noexcept { return memory_.context(); }
  DeviceMemory& memory() noexcept { return memory_; }
  const DeviceMemory& memory() const noexcept { return memory_; }

  void upload(std::span<const T> values, std::size_t first = 0) {
    memory_.upload_bytes(values.data(), values.size_bytes(),
                         detail::array_bytes(first, sizeof(T)));
  }
  void download(std::span<T> values, std::size_t first = 0) const {
    memory_.download_bytes(values.data(), values.size_bytes(),
                           detail::array_bytes(first, sizeof(T)));
  }
  std::vector<T> download() const {
    std::vector<T> values(count_);
    download(std::span<T>(values));
    return values;
  }
  // Asynchronous on `stream`; `values` must stay alive (and be pinned for true overlap) until
  // the stream reaches the copy.
  void upload_async(std::span<const T> values, CUstream stream, std::size_t first = 0) {
    memory_.upload_bytes(values.data(), values.size_bytes(),
                         detail::array_bytes(first, sizeof(T)), stream, true);
  }
  void download_async(std::span<T> values, CUstream stream, std::size_t first = 0) const {
    memory_.download_bytes(values.data(), values.size_bytes(),
                           detail::array_bytes(first, sizeof(T)), stream, true);
  }
  void fill_bytes(std::uint8_t value, CUstream stream = nullptr) {
    memory_.fill_bytes(value, stream);
  }

 private:
  DeviceMemory memory_;
  std::size_t count_;
};

// Page-locked host memory (cuMemHostAlloc): the fast path for transfers and async copies.
class PTXRT_API PinnedMemory {
 public:
  PinnedMemory(const Context& context, std::size_t bytes);
  ~PinnedMemory();
  PinnedMemory(PinnedMemory&& other) noexcept;
  PinnedMemory& operator=(PinnedMemory&& other) noexcept;
  PinnedMemory(const PinnedMemory&) = delete;
  PinnedMemory& operator=(const PinnedMemory&) = delete;

  void* data() const noexcept { return data_; }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  void release() noexcept;
  Context context_;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

template <typename T>
class PinnedBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "pinned buffers hold trivially copyable types");

 public:
  PinnedBuffer(const Context& context, std::size_t count)
      : memory_(context, detail::array_bytes(count, sizeof(T))), count_(count) {}
  std::span<T> span() noexcept { return {static_cast<T*>(memory_.data()), count_}; }
  std::span<const T> span() const noexcept {
    return {static_cast<const T*>(memory_.data()), count_};
  }
  std::size_t size() const noexcept { return count_; }

 private:
  PinnedMemory memory_;
  std::size_t count_;
};

}  // namespace ptxrt
