#include "ptxrt/core/managed_memory.hpp"

#include "driver/driver_api.hpp"
#include "ptxrt/core/error.hpp"

namespace ptxrt {
namespace {

CUmem_advise driver_advice(ManagedAdvice advice) {
  switch (advice) {
    case ManagedAdvice::set_read_mostly:
      return CU_MEM_ADVISE_SET_READ_MOSTLY;
    case ManagedAdvice::unset_read_mostly:
      return CU_MEM_ADVISE_UNSET_READ_MOSTLY;
    case ManagedAdvice::set_preferred_location:
      return CU_MEM_ADVISE_SET_PREFERRED_LOCATION;
    case ManagedAdvice::unset_preferred_location:
      return CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION;
    case ManagedAdvice::set_accessed_by:
      return CU_MEM_ADVISE_SET_ACCESSED_BY;
    case ManagedAdvice::unset_accessed_by:
      return CU_MEM_ADVISE_UNSET_ACCESSED_BY;
  }
  return CU_MEM_ADVISE_SET_READ_MOSTLY;
}

std::string device_name(const Context& context) {
  return "device " + std::to_string(context.device().ordinal());
}

CUdeviceptr allocate_managed(const Context& context, std::size_t bytes) {
  if (!context.device().properties().managed_memory)
    throw Error(ErrorKind::invalid_argument,
                device_name(context) + " cannot allocate managed memory "
                                       "(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 0)");
  CUdeviceptr address = 0;
  if (bytes == 0) return address;  // cuMemAllocManaged rejects 0, like cuMemAlloc
  ContextGuard guard(context);
  check(detail::driver().cuMemAllocManaged(&address, bytes, CU_MEM_ATTACH_GLOBAL),
        "cuMemAllocManaged",
        "allocating " + std::to_string(bytes) + " bytes of managed memory on " +
            device_name(context));
  return address;
}

}  // namespace

std::string MemoryLocation::describe() const {
  return is_host() ? "the host" : "device " + std::to_string(location_.id);
}

ManagedMemory::ManagedMemory(const Context& context, std::size_t bytes)
    : DeviceMemory(context, allocate_managed(context, bytes), bytes) {}

void ManagedMemory::prefetch(const MemoryLocation& to, StreamRef stream) const {
  if (!context_.device().properties().concurrent_managed_access)
    throw Error(ErrorKind::invalid_argument,
                "prefetching managed memory to " + to.describe() +
                    " needs concurrent managed access, which " + device_name(context_) +
                    " lacks (CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 0): pages migrate "
                    "on first touch there");
  if (bytes_ == 0) return;
  ContextGuard guard(context_);
  check(detail::driver().cuMemPrefetchAsync(address_, bytes_, to.location(), 0, stream.handle()),
        "cuMemPrefetchAsync",
        "prefetching " + std::to_string(bytes_) + " bytes of managed memory to " + to.describe());
}

void ManagedMemory::advise(ManagedAdvice advice, const MemoryLocation& location) const {
  if (bytes_ == 0) return;
  ContextGuard guard(context_);
  check(detail::driver().cuMemAdvise(address_, bytes_, driver_advice(advice), location.location()),
        "cuMemAdvise",
        "advising about " + std::to_string(bytes_) + " bytes of managed memory for " +
            location.describe());
}

}  // namespace ptxrt
