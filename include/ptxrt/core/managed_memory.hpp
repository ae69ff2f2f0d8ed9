// Managed (unified) memory: one address valid on the host and on every device, pages migrating
// to whoever touches them, with prefetch and advice to move them ahead of time.
//
// Thread safety: as for any buffer (memory.hpp). The host may touch managed memory while
// kernels use it only on devices with concurrent managed access
// (DeviceProperties::concurrent_managed_access); elsewhere, synchronize first.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <span>
#include <string>
#include <type_traits>

#include "ptxrt/core/context.hpp"
#include "ptxrt/core/device.hpp"
#include "ptxrt/core/memory.hpp"
#include "ptxrt/export.hpp"

namespace ptxrt {

// Where managed memory is prefetched to or advised about: the host, or a device's memory.
class PTXRT_API MemoryLocation {
 public:
  static MemoryLocation host() { return MemoryLocation(CU_MEM_LOCATION_TYPE_HOST, 0); }
  static MemoryLocation device(const Device& device) {
    return MemoryLocation(CU_MEM_LOCATION_TYPE_DEVICE, device.ordinal());
  }
  CUmemLocation location() const noexcept { return location_; }
  bool is_host() const noexcept { return location_.type == CU_MEM_LOCATION_TYPE_HOST; }
  std::string describe() const;  // "the host", "device 1"

 private:
  MemoryLocation(CUmemLocationType type, int id) : location_{type, id} {}
  CUmemLocation location_;
};

// cuMemAdvise's advice, set or unset.
enum class ManagedAdvice {
  set_read_mostly,  // pages may be copied to every reader (the location is ignored)
  unset_read_mostly,
  set_preferred_location,  // pages live there, and migrate away only when they must
  unset_preferred_location,
  set_accessed_by,  // the location maps the pages, so that it reads them without a fault
  unset_accessed_by,
};

// Untyped managed memory: cuMemAllocManaged (attached globally: any stream, any device may use
// it), freed in the destructor as DeviceMemory is. Error(invalid_argument) on a device without
// managed memory.
class PTXRT_API ManagedMemory : public DeviceMemory {
 public:
  ManagedMemory(const Context& context, std::size_t bytes);

  // The same bytes, for the host.
  void* host_data() const noexcept { return reinterpret_cast<void*>(address_); }

  // Migrates every page to `to` on `stream` (cuMemPrefetchAsync), so that the next touch there
  // does not fault. Needs concurrent managed access (Error(invalid_argument) naming the device
  // otherwise).
  void prefetch(const MemoryLocation& to, StreamRef stream = {}) const;
  // cuMemAdvise over the whole allocation.
  void advise(ManagedAdvice advice, const MemoryLocation& location) const;
};

// A typed array in managed memory: a span on the host, its address for kernels.
template <typename T>
class ManagedBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "managed buffers hold trivially copyable types");

 public:
  ManagedBuffer(const Context& context, std::size_t count)
      : memory_(context, detail::array_bytes(count, sizeof(T))), count_(count) {}

  std::span<T> span() noexcept { return {static_cast<T*>(memory_.host_data()), count_}; }
  std::span<const T> span() const noexcept {
    return {static_cast<const T*>(memory_.host_data()), count_};
  }
  std::size_t size() const noexcept { return count_; }
  CUdeviceptr address() const noexcept { return memory_.address(); }
  ManagedMemory& memory() noexcept { return memory_; }
  const ManagedMemory& memory() const noexcept { return memory_; }

 private:
  ManagedMemory memory_;
  std::size_t count_;
};

}  // namespace ptxrt
