// Host <-> device copies that overlap other work whatever memory the host side is in:
// page-locked spans go straight to the copy engine (cudaMemcpyAsync semantics); pageable ones go
// through two pinned staging buffers in turn, so that the CPU copies one chunk into a buffer
// while the copy engine moves the previous one (the driver's own pageable path does the two one
// after the other, and holds the calling thread throughout).
//
// Thread safety: a StagedCopier belongs to one thread at a time (its staging buffers are reused
// from call to call).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "ptxrt/core/memory.hpp"
#include "ptxrt/core/stream.hpp"

namespace ptxrt::apps {

class StagedCopier {
 public:
  // The staging buffers (2 x chunk_bytes of pinned memory) are allocated on first need.
  explicit StagedCopier(const Context& context, std::size_t chunk_bytes = std::size_t{16} << 20);

  // Enqueues `source` into `destination` at byte `offset` on `stream`. Returns once `source` may
  // be reused: at once for page-locked memory (which must then stay unchanged until the stream
  // has passed the copy), after the last chunk reached the staging buffers for pageable memory.
  void upload(DeviceRange& destination, std::size_t offset, std::span<const std::byte> source,
              const Stream& stream);
  // Enqueues `source` at byte `offset` into `destination` after the work on `stream`. The bytes
  // are in `destination` once the stream is synchronized; for pageable memory, on return.
  void download(std::span<std::byte> destination, const DeviceRange& source, std::size_t offset,
                const Stream& stream);

 private:
  void allocate_staging();
  Context context_;
  std::size_t chunk_bytes_;
  std::vector<PinnedMemory> staging_;
  std::vector<Event> drained_;  // recorded after the copy that last used each staging buffer
};

// True when every byte of `bytes` is page-locked for `context`'s copies (both ends: one
// allocation or registration).
bool page_locked(const Context& context, std::span<const std::byte> bytes);

}  // namespace ptxrt::apps
