#include "ptxrt/core/memory.hpp"

#include <cstdint>
#include <utility>

#include "driver/driver_api.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/log.hpp"
#include "ptxrt/core/peer.hpp"

namespace ptxrt {
namespace {

std::string describe_bytes(std::size_t bytes) {
  return std::to_string(bytes) + " bytes";
}

// CU_POINTER_ATTRIBUTE_MEMORY_TYPE of `host` in `context`: 0 for pageable memory the driver
// does not know.
unsigned host_memory_type(const Context& context, const void* host) {
  ContextGuard guard(context);
  CUpointer_attribute which = CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
  unsigned type = 0;
  void* values[] = {&type};
  check(detail::driver().cuPointerGetAttributes(1, &which, values,
                                                reinterpret_cast<std::uintptr_t>(host)),
        "cuPointerGetAttributes", "asking whether host memory is page-locked");
  return type;
}

// An async copy the caller meant to overlap, from or to pageable memory: allowed (the driver
// copies synchronously), and said where someone is looking.
void note_pageable(const Context& context, const void* host, std::size_t bytes,
                   std::string_view what) {
  if (bytes == 0 || !log::enabled(log::Level::debug) || host_memory_type(context, host) != 0)
    return;
  log::write(log::Level::debug,
             std::string(what) +
                 " asynchronously with pageable host memory: the driver copies "
                 "it synchronously, so it overlaps nothing (a PinnedBuffer would)");
}

// Makes the one driver call `call` returns with `context` current, and checks it; zero bytes need
// no call, and no context switch.
template <class Call>
void call_in_context(const Context& context, std::size_t bytes, std::string_view name,
                     std::string_view what, Call call) {
  if (bytes == 0) return;
  ContextGuard guard(context);
  check(call(detail::driver()), name, what);
}

}  // namespace

namespace detail {

void copy_to_device(const Context& context, CUdeviceptr destination, const void* source,
                    std::size_t bytes, std::optional<StreamRef> stream, std::string_view what) {
  if (stream) note_pageable(context, source, bytes, what);
  call_in_context(context, bytes, stream ? "cuMemcpyHtoDAsync" : "cuMemcpyHtoD", what,
                  [&](const DriverApi& api) {
                    return stream ? api.cuMemcpyHtoDAsync(destination, source, bytes,
                                                          stream->handle())
                                  : api.cuMemcpyHtoD(destination, source, bytes);
                  });
}

void copy_from_device(const Context& context, void* destination, CUdeviceptr source,
                      std::size_t bytes, std::optional<StreamRef> stream, std::string_view what) {
  if (stream) note_pageable(context, destination, bytes, what);
  call_in_context(context, bytes, stream ? "cuMemcpyDtoHAsync" : "cuMemcpyDtoH", what,
                  [&](const DriverApi& api) {
                    return stream ? api.cuMemcpyDtoHAsync(destination, source, bytes,
                                                          stream->handle())
                                  : api.cuMemcpyDtoH(destination, source, bytes);
                  });
}

std::size_t array_bytes(std::size_t count, std::size_t element_bytes) {
  if (element_bytes != 0 && count > SIZE_MAX / element_bytes)
    throw Error(ErrorKind::invalid_argument,
                std::to_string(count) + " elements of " + describe_bytes(element_bytes) +
                    " overflow size_t");
  return count * element_bytes;
}

}  // namespace detail

bool is_page_locked(const Context& context, const void* host) {
  return host_memory_type(context, host) == CU_MEMORYTYPE_HOST;
}

DeviceMemory::DeviceMemory(const Context& context, std::size_t bytes)
    : DeviceRange(context, 0, bytes) {
  if (bytes == 0) return;  // cuMemAlloc rejects 0; an empty buffer needs no memory
  ContextGuard guard(context_);
  check(detail::driver().cuMemAlloc(&address_, bytes), "cuMemAlloc",
        "allocating " + describe_bytes(bytes) + " on device " +
            std::to_string(context_.device().ordinal()));
}

DeviceMemory::~DeviceMemory() { release(); }

DeviceMemory::DeviceMemory(DeviceMemory&& other) noexcept
    : DeviceRange(other.context_, std::exchange(other.address_, 0),
                  std::exchange(other.bytes_, 0)) {}

DeviceMemory& DeviceMemory::operator=(DeviceMemory&& other) noexcept {
  if (this != &other) {
    release();
    context_ = other.context_;
    address_ = std::exchange(other.address_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceMemory::release() noexcept {
  if (!address_) return;
  // cuMemFree needs the owning context current on this thread.
  try {
    ContextGuard guard(context_);
    detail::driver().cuMemFree(std::exchange(address_, 0));
  } catch (const Error&) {
    // Destructors cannot throw; if the context cannot be made current the memory is lost with it.
  }
}

void DeviceRange::check_range(std::size_t bytes, std::size_t offset, const char* what) const {
  if (offset > bytes_ || bytes > bytes_ - offset)
    throw Error(ErrorKind::invalid_argument,
                std::string(what) + " of " + describe_bytes(bytes) + " at offset " +
                    std::to_string(offset) + " does not fit a device buffer of " +
                    describe_bytes(bytes_));
}

void DeviceRange::upload_bytes(const void* source, std::size_t bytes, std::size_t offset) {
  check_range(bytes, offset, "upload");
  detail::copy_to_device(context_, address_ + offset, source, bytes, std::nullopt,
                         "uploading " + describe_bytes(bytes));
}

void DeviceRange::download_bytes(void* destination, std::size_t bytes, std::size_t offset) const {
  check_range(bytes, offset, "download");
  detail::copy_from_device(context_, destination, address_ + offset, bytes, std::nullopt,
                           "downloading " + describe_bytes(bytes));
}

void DeviceRange::upload_bytes_async(const void* source, std::size_t bytes, StreamRef stream,
                                     std::size_t offset) {
  check_range(bytes, offset, "upload");
  detail::copy_to_device(context_, address_ + offset, source, bytes, stream,
                         "uploading " + describe_bytes(bytes));
}

void DeviceRange::download_bytes_async(void* destination, std::size_t bytes, StreamRef stream,
                                       std::size_t offset) const {
  check_range(bytes, offset, "download");
  detail::copy_from_device(context_, destination, address_ + offset, bytes, stream,
                           "downloading " + describe_bytes(bytes));
}

void DeviceRange::copy_from(const DeviceRange& source, std::size_t bytes, StreamRef stream) {
  check_range(bytes, 0, "device-to-device copy");
  source.check_range(bytes, 0, "device-to-device copy");
  if (source.context_ == context_) {
    call_in_context(context_, bytes, "cuMemcpyDtoDAsync", "copying " + describe_bytes(bytes),
                    [&](const detail::DriverApi& api) {
                      return api.cuMemcpyDtoDAsync(address_, source.address_, bytes, stream.handle());
                    });
    return;
  }
  const std::string what = "copying " + describe_bytes(bytes) + " from device " +
                           std::to_string(source.context_.device().ordinal()) + " to device " +
                           std::to_string(context_.device().ordinal());
  if (bytes > 0 && !peer_access_enabled(context_, source.context_) &&
      !peer_access_enabled(source.context_, context_))
    log::write(log::Level::debug,
               what +
                   " without peer access: the driver stages it through host memory "
                   "(enable_peer_access makes it direct where the devices allow)");
  call_in_context(context_, bytes, "cuMemcpyPeerAsync", what, [&](const detail::DriverApi& api) {
    return api.cuMemcpyPeerAsync(address_, context_.handle(), source.address_,
                                 source.context_.handle(), bytes, stream.handle());
  });
}

void DeviceRange::fill_bytes(std::uint8_t value, StreamRef stream) {
  call_in_context(context_, bytes_, "cuMemsetD8Async", {}, [&](const detail::DriverApi& api) {
    return api.cuMemsetD8Async(address_, value, bytes_, stream.handle());
  });
}

void DeviceRange::fill_words(std::uint32_t word, StreamRef stream) {
  if (bytes_ % 4 != 0)
    throw Error(ErrorKind::invalid_argument,
                "fill_words needs a size that is a multiple of 4 bytes, got " +
                    describe_bytes(bytes_));
  call_in_context(context_, bytes_, "cuMemsetD32Async", {}, [&](const detail::DriverApi& api) {
    return api.cuMemsetD32Async(address_, word, bytes_ / 4, stream.handle());
  });
}

PinnedMemory::PinnedMemory(const Context& context, std::size_t bytes)
    : context_(context), bytes_(bytes) {
  if (bytes == 0) return;
  ContextGuard guard(context_);
  check(detail::driver().cuMemHostAlloc(&data_, bytes, CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc",
        "allocating " + describe_bytes(bytes) + " of pinned host memory");
}

PinnedMemory::~PinnedMemory() { release(); }

PinnedMemory::PinnedMemory(PinnedMemory&& other) noexcept
    : context_(other.context_),
      data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)) {}

PinnedMemory& PinnedMemory::operator=(PinnedMemory&& other) noexcept {
  if (this != &other) {
    release();
    context_ = other.context_;
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void PinnedMemory::release() noexcept {
  if (data_) detail::driver().cuMemFreeHost(std::exchange(data_, nullptr));
}

}  // namespace ptxrt
