// Device and pinned host memory. Thread safety: buffers may be read (downloaded, passed to
// kernels) from several threads at once; writing one from two threads at once is a data race,
// as for any container. Each buffer keeps its context alive.
//
// Every kind of device memory (DeviceMemory here, ManagedMemory in managed_memory.hpp,
// StreamMemory in memory_pool.hpp) is a DeviceRange: the same range-checked copies and fills,
// synchronous or on a stream, to and from host memory of any kind and other device memory, of
// this device or a peer (peer.hpp).
//
// Ordering: the synchronous copies run on the context's legacy default stream, which does not
// wait for ptxrt's (non-blocking) Streams: after a kernel launched on a Stream, synchronize the
// stream before a synchronous download, or download_async on the same stream.
//
// Overlap: an asynchronous copy overlaps other work only from or to page-locked host memory
// (PinnedBuffer, or memory the application pinned). From pageable memory the driver copies
// synchronously; ptxrt allows it and says so at debug level (PTXRT_LOG=debug).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ptxrt/core/context.hpp"
#include "ptxrt/core/stream_ref.hpp"
#include "ptxrt/export.hpp"

namespace ptxrt {

namespace detail {
// The one place host<->device copies happen (buffers and symbols): the context made current,
// on `stream` when given, else synchronous; failures naming `what`.
PTXRT_API void copy_to_device(const Context& context, CUdeviceptr destination, const void* source,
                              std::size_t bytes, std::optional<StreamRef> stream,
                              std::string_view what);
PTXRT_API void copy_from_device(const Context& context, void* destination, CUdeviceptr source,
                                std::size_t bytes, std::optional<StreamRef> stream,
                                std::string_view what);
// count * element_bytes, or Error(invalid_argument) naming both when the product overflows
// size_t: a wrapped size would allocate a small buffer that later copies overrun.
PTXRT_API std::size_t array_bytes(std::size_t count, std::size_t element_bytes);
}  // namespace detail

// True when `host` lies in host memory page-locked for `context`'s copies (cuMemHostAlloc,
// portable or of this context; cuMemHostRegister; the runtime's cudaMallocHost): an async copy
// from or to it overlaps other work. Asks the driver with the context current
// (cuPointerGetAttributes, which answers for any pointer without failing).
PTXRT_API bool is_page_locked(const Context& context, const void* host);

// Device-addressable bytes in one context, owned by the kind of memory that derives from it.
// Byte ranges are checked against it: an out-of-range copy is an Error. Copies from and to the
// host are synchronous, or with _async ordered on a stream; fills and device-to-device copies are
// always ordered on the stream given (none: the legacy default stream).
class PTXRT_API DeviceRange {
 public:
  CUdeviceptr address() const noexcept { return address_; }
  std::size_t bytes() const noexcept { return bytes_; }
  const Context& context() const noexcept { return context_; }

  void upload_bytes(const void* source, std::size_t bytes, std::size_t offset = 0);
  void download_bytes(void* destination, std::size_t bytes, std::size_t offset = 0) const;
  // Enqueued on `stream`: the host memory must stay valid until the stream has run the copy.
  void upload_bytes_async(const void* source, std::size_t bytes, StreamRef stream,
                          std::size_t offset = 0);
  void download_bytes_async(void* destination, std::size_t bytes, StreamRef stream,
                            std::size_t offset = 0) const;
  // The first `bytes` of `source`, which may be any kind of device memory of this context, or of
  // another device: then a peer copy (cuMemcpyPeerAsync), direct where enable_peer_access
  // allowed it and staged through host memory by the driver otherwise (said at debug level).
  void copy_from(const DeviceRange& source, std::size_t bytes, StreamRef stream = {});
  void fill_bytes(std::uint8_t value, StreamRef stream = {});
  // Fills every 32-bit word with `word` (e.g. the bits of a NaN, to poison an output).
  void fill_words(std::uint32_t word, StreamRef stream = {});

 protected:
  DeviceRange(Context context, CUdeviceptr address, std::size_t bytes)
      : context_(std::move(context)), address_(address), bytes_(bytes) {}
  DeviceRange(const DeviceRange&) = default;
  DeviceRange& operator=(const DeviceRange&) = default;
  ~DeviceRange() = default;
  void check_range(std::size_t bytes, std::size_t offset, const char* what) const;

  Context context_;
  CUdeviceptr address_ = 0;
  std::size_t bytes_ = 0;
};

// Untyped device memory: one cuMemAlloc, freed (cuMemFree) in the destructor.
class PTXRT_API DeviceMemory : public DeviceRange {
 public:
  DeviceMemory(const Context& context, std::size_t bytes);
  ~DeviceMemory();
  DeviceMemory(DeviceMemory&& other) noexcept;
  DeviceMemory& operator=(DeviceMemory&& other) noexcept;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

 protected:
  // Takes `address`, allocated in `context` by another call that cuMemFree undoes
  // (cuMemAllocManaged).
  DeviceMemory(const Context& context, CUdeviceptr address, std::size_t bytes)
      : DeviceRange(context, address, bytes) {}

 private:
  void release() noexcept;
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
  void upload_async(std::span<const T> values, StreamRef stream, std::size_t first = 0) {
    memory_.upload_bytes_async(values.data(), values.size_bytes(), stream,
                               detail::array_bytes(first, sizeof(T)));
  }
  void download_async(std::span<T> values, StreamRef stream, std::size_t first = 0) const {
    memory_.download_bytes_async(values.data(), values.size_bytes(), stream,
                                 detail::array_bytes(first, sizeof(T)));
  }
  void fill_bytes(std::uint8_t value, StreamRef stream = {}) {
    memory_.fill_bytes(value, stream);
  }

 private:
  DeviceMemory memory_;
  std::size_t count_;
};

// Page-locked host memory (cuMemHostAlloc, portable: every context may copy from and to it): the
// fast path for transfers, and what async copies need to overlap other work.
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
  std::span<T> span() noexcept { return {data(), count_}; }
  std::span<const T> span() const noexcept { return {data(), count_}; }
  T* data() noexcept { return static_cast<T*>(memory_.data()); }
  const T* data() const noexcept { return static_cast<const T*>(memory_.data()); }
  std::size_t size() const noexcept { return count_; }
  std::size_t bytes() const noexcept { return memory_.bytes(); }

 private:
  PinnedMemory memory_;
  std::size_t count_;
};

}  // namespace ptxrt
