#include "ptxrt/core/memory_pool.hpp"

#include <utility>

#include "driver/driver_api.hpp"
#include "ptxrt/core/error.hpp"

namespace ptxrt {
namespace {

std::string device_name(const Context& context) {
  return "device " + std::to_string(context.device().ordinal());
}

void require_pools(const Context& context) {
  if (!context.device().properties().memory_pools)
    throw Error(ErrorKind::invalid_argument,
                device_name(context) +
                    " has no memory pools for stream-ordered allocation "
                    "(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 0)");
}

void require_same_device(const Context& pool, const Stream& stream, const char* what) {
  if (stream.context().device().ordinal() != pool.device().ordinal())
    throw Error(ErrorKind::invalid_argument,
                std::string(what) + " on a stream of " + device_name(stream.context()) +
                    " with a pool of " + device_name(pool) + ": both must be of one device");
}

}  // namespace

MemoryPool::MemoryPool(const Context& context) : context_(context), owned_(true) {
  require_pools(context_);
  CUmemPoolProps properties{};
  properties.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  properties.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  properties.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  properties.location.id = context_.device().ordinal();
  check(detail::driver().cuMemPoolCreate(&pool_, &properties), "cuMemPoolCreate",
        "creating a memory pool on " + device_name(context_));
}

MemoryPool MemoryPool::device_default(const Context& context) {
  require_pools(context);
  CUmemoryPool pool = nullptr;
  check(detail::driver().cuDeviceGetDefaultMemPool(&pool, context.device().handle()),
        "cuDeviceGetDefaultMemPool", "finding the default memory pool of " + device_name(context));
  return MemoryPool(context, pool, false);
}

MemoryPool::~MemoryPool() { release(); }

MemoryPool::MemoryPool(MemoryPool&& other) noexcept
    : context_(other.context_),
      pool_(std::exchange(other.pool_, nullptr)),
      owned_(std::exchange(other.owned_, false)) {}

MemoryPool& MemoryPool::operator=(MemoryPool&& other) noexcept {
  if (this != &other) {
    release();
    context_ = other.context_;
    pool_ = std::exchange(other.pool_, nullptr);
    owned_ = std::exchange(other.owned_, false);
  }
  return *this;
}

void MemoryPool::release() noexcept {
  if (pool_ && owned_) detail::driver().cuMemPoolDestroy(pool_);
  pool_ = nullptr;
}

void MemoryPool::set_release_threshold(std::uint64_t bytes) const {
  cuuint64_t threshold = bytes;
  check(
      detail::driver().cuMemPoolSetAttribute(pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold),
      "cuMemPoolSetAttribute",
      "setting the release threshold of a pool on " + device_name(context_) + " to " +
          std::to_string(bytes) + " bytes");
}

void MemoryPool::trim_to(std::size_t bytes) const {
  check(detail::driver().cuMemPoolTrimTo(pool_, bytes), "cuMemPoolTrimTo",
        "trimming a pool on " + device_name(context_) + " to " + std::to_string(bytes) + " bytes");
}

StreamMemory::StreamMemory(const MemoryPool& pool, std::size_t bytes, const Stream& stream)
    : DeviceRange(pool.context(), 0, bytes), stream_(stream.handle()) {
  require_same_device(pool.context(), stream, "allocating");
  if (bytes == 0) return;
  ContextGuard guard(context_);
  check(
      detail::driver().cuMemAllocFromPoolAsync(&address_, bytes, pool.handle(), stream_),
      "cuMemAllocFromPoolAsync",
      "allocating " + std::to_string(bytes) + " bytes in stream order on " + device_name(context_));
}

StreamMemory::~StreamMemory() { release(); }

StreamMemory::StreamMemory(StreamMemory&& other) noexcept
    : DeviceRange(other.context_, std::exchange(other.address_, 0), std::exchange(other.bytes_, 0)),
      stream_(other.stream_) {}

StreamMemory& StreamMemory::operator=(StreamMemory&& other) noexcept {
  if (this != &other) {
    release();
    context_ = other.context_;
    address_ = std::exchange(other.address_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
    stream_ = other.stream_;
  }
  return *this;
}

void StreamMemory::free_async(const Stream& stream) {
  require_same_device(context_, stream, "freeing");
  if (!address_) return;
  ContextGuard guard(context_);
  check(detail::driver().cuMemFreeAsync(address_, stream.handle()), "cuMemFreeAsync",
        "freeing " + std::to_string(bytes_) + " bytes in stream order on " + device_name(context_));
  address_ = 0;
  bytes_ = 0;
}

void StreamMemory::release() noexcept {
  if (!address_) return;
  try {
    ContextGuard guard(context_);
    detail::driver().cuMemFreeAsync(std::exchange(address_, 0), stream_);
  } catch (const Error&) {
    // No current context, no free: the pool keeps the memory until the context goes.
  }
}

}  // namespace ptxrt
