// Stream-ordered allocation: device memory taken from a pool and given back in the order of a
// stream's work (cuMemAllocFromPoolAsync, cuMemFreeAsync), so that allocating and freeing cost
// no synchronization and the pool reuses memory between kernels.
//
// Thread safety: a MemoryPool may be shared by any number of threads (the driver synchronizes
// allocations). A StreamMemory is a buffer (memory.hpp) whose life is ordered on streams: use it
// only from work ordered after its allocation and before its free.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>

#include "ptxrt/core/context.hpp"
#include "ptxrt/core/memory.hpp"
#include "ptxrt/core/stream.hpp"
#include "ptxrt/export.hpp"

namespace ptxrt {

class PTXRT_API MemoryPool {
 public:
  // A pool of ptxrt's own on the context's device (cuMemPoolCreate), destroyed with this object
  // (the driver keeps its memory until the last allocation from it is freed). Error
  // (invalid_argument) on a device without memory pools.
  explicit MemoryPool(const Context& context);
  // The device's default pool (cuDeviceGetDefaultMemPool), shared with the runtime API's
  // cudaMallocAsync; never destroyed by ptxrt.
  static MemoryPool device_default(const Context& context);
  ~MemoryPool();
  MemoryPool(MemoryPool&& other) noexcept;
  MemoryPool& operator=(MemoryPool&& other) noexcept;
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  CUmemoryPool handle() const noexcept { return pool_; }
  const Context& context() const noexcept { return context_; }
  // Bytes the pool keeps when a synchronization finds them free, instead of returning them to
  // the system (CU_MEMPOOL_ATTR_RELEASE_THRESHOLD; the driver's default is 0).
  void set_release_threshold(std::uint64_t bytes) const;
  // Returns free memory to the system until the pool holds at most `bytes` unused
  // (cuMemPoolTrimTo).
  void trim_to(std::size_t bytes) const;

 private:
  MemoryPool(Context context, CUmemoryPool pool, bool owned)
      : context_(std::move(context)), pool_(pool), owned_(owned) {}
  void release() noexcept;
  Context context_;
  CUmemoryPool pool_ = nullptr;
  bool owned_ = false;
};

// Device memory allocated on a stream from a pool: usable by work ordered after the allocation
// on `stream` (or after it through events), freed in stream order. Error(invalid_argument) when
// the stream belongs to another device than the pool.
class PTXRT_API StreamMemory : public DeviceRange {
 public:
  StreamMemory(const MemoryPool& pool, std::size_t bytes, const Stream& stream);
  // Frees on the stream it was allocated on, which must still exist, unless free_async ran.
  ~StreamMemory();
  StreamMemory(StreamMemory&& other) noexcept;
  StreamMemory& operator=(StreamMemory&& other) noexcept;
  StreamMemory(const StreamMemory&) = delete;
  StreamMemory& operator=(const StreamMemory&) = delete;

  // Frees after the work enqueued on `stream` so far (cuMemFreeAsync); this object is empty
  // afterwards. The stream must be of the pool's device.
  void free_async(const Stream& stream);

 private:
  void release() noexcept;
  CUstream stream_ = nullptr;  // the allocation's stream, where the destructor frees
};

}  // namespace ptxrt
