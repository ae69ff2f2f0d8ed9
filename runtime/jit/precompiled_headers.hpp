// Internal: NVRTC's automatic precompiled headers (CUDA 12.8+). A compile that asks for them
// reuses the parse of heavy headers (cooperative_groups.h, CUB, <cuda/std/...>) that an earlier
// compile saved in the PCH folder beside the disk cache. The PCH never changes what is compiled:
// its options stay out of the Image and the cache key.
#pragma once

#include <nvrtc.h>

#include <filesystem>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

namespace ptxrt::detail {

// Whether this NVRTC has automatic PCH.
bool precompiled_headers_supported();

// One compile's use of the PCH folder: the NVRTC options, and the process-wide PCH heap held
// shared while NVRTC runs (a resize needs it alone).
class PrecompiledHeaderUse {
 public:
  // Nothing to do (no options) when `folder` is empty, NVRTC lacks PCH, or the folder is not
  // safe (see DiskCache::prepare_private_directory; reported once).
  explicit PrecompiledHeaderUse(const std::filesystem::path& folder);
  const std::vector<std::string>& options() const noexcept { return options_; }
  // After nvrtcCompileProgram: a PCH NVRTC could not create for want of heap grows the heap to
  // what NVRTC reported, for the next compile; a PCH it created is made private (0600) and the
  // folder kept under its bound, oldest files first.
  void finish(nvrtcProgram program);

 private:
  std::filesystem::path folder_;
  std::vector<std::string> options_;
  std::shared_lock<std::shared_mutex> heap_;
};

}  // namespace ptxrt::detail
