// Internal: NVRTC's automatic precompiled headers (CUDA 12.8+). A compile that asks for them
// reuses the parse of heavy headers (cooperative_groups.h, CUB, <cuda/std/...>) that an earlier
// compile of this process saved in the PCH folder beside the disk cache. The PCH never changes
// what is compiled: its options stay out of the Image and the cache key.
//
// The folder is a PrivateFolder (support/private_folder.hpp): one that is refused (a link,
// another user's, writable by others) turns PCH off, said once, and is not written at all.
// NVRTC names each PCH file after the program, "<name>_<n>.pch", and (NVRTC 13) deletes those it
// made when the process exits; those of a process that died stay, and the folder is kept under
// its bound by deleting the oldest of them. ptxrt deletes only files with such a name that hold
// what NVRTC writes (an EDG precompiled header), never anything else put in the folder.
#pragma once

#include <nvrtc.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "support/private_folder.hpp"

namespace ptxrt::detail {

// Whether this NVRTC has automatic PCH.
bool precompiled_headers_supported();

// One compile's use of the PCH folder: the NVRTC options, and the process-wide PCH heap held
// shared while NVRTC runs (a resize needs it alone).
class PrecompiledHeaderUse {
 public:
  // Nothing to do (no options) when `folder` is empty, NVRTC lacks PCH, or the folder is refused
  // (reported once).
  explicit PrecompiledHeaderUse(const std::filesystem::path& folder);
  const std::vector<std::string>& options() const noexcept { return options_; }
  // After nvrtcCompileProgram: a PCH NVRTC could not create for want of heap grows the heap to
  // what NVRTC reported, for the next compile; a PCH it created is made private (0600) and the
  // folder kept under its bound.
  void finish(nvrtcProgram program);

 private:
  std::optional<PrivateFolder> folder_;
  std::vector<std::string> options_;
  std::shared_lock<std::shared_mutex> heap_;
};

// Makes NVRTC's PCH files in `folder` private (0600: NVRTC creates them with the process's
// umask) and deletes the oldest of them until they take at most `bound_bytes`. Every other file
// is left as it is.
PTXRT_API void keep_precompiled_headers_private_and_bounded(const PrivateFolder& folder,
                                                            std::uintmax_t bound_bytes);

}  // namespace ptxrt::detail
