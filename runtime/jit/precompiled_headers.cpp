#include "jit/precompiled_headers.hpp"

#include <cuda.h>
#include <sys/stat.h>

#include <algorithm>

#include "ptxrt/disk_cache.hpp"
#include "ptxrt/error.hpp"
#include "ptxrt/log.hpp"
#include "ptxrt/target.hpp"

namespace ptxrt::detail {
namespace {

namespace fs = std::filesystem;

std::shared_mutex& heap_mutex() {
  static std::shared_mutex mutex;
  return mutex;
}

// PCH files of many header sets add up; a quarter of the disk cache's bound is theirs.
std::uintmax_t folder_bound() { return DiskCache::default_max_bytes() / 4; }

void keep_private_and_bounded(const fs::path& folder) {
  struct File {
    fs::path path;
    std::uintmax_t bytes;
    fs::file_time_type modified;
  };
  std::vector<File> files;
  std::uintmax_t total = 0;
  std::error_code error;
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    std::error_code file_error;
    if (!it->is_regular_file(file_error)) continue;
    ::chmod(it->path().c_str(), 0600);  // NVRTC writes with the process's umask
    File file{it->path(), it->file_size(file_error), it->last_write_time(file_error)};
    if (file_error) continue;
    total += file.bytes;
    files.push_back(std::move(file));
  }
  std::sort(files.begin(), files.end(),
            [](const File& a, const File& b) { return a.modified < b.modified; });
  for (const File& file : files) {
    if (total <= folder_bound()) break;
    if (fs::remove(file.path, error)) total -= file.bytes;
  }
}

}  // namespace

bool precompiled_headers_supported() {
#if CUDA_VERSION >= 12080
  return nvrtc_version() >= 12080;
#else
  return false;
#endif
}

PrecompiledHeaderUse::PrecompiledHeaderUse(const fs::path& folder)
    : heap_(heap_mutex(), std::defer_lock) {
  if (folder.empty() || !precompiled_headers_supported()) return;
  if (std::string problem = DiskCache::prepare_private_directory(folder); !problem.empty()) {
    log::warn_once("pch " + folder.string(), "precompiled-header folder '" + folder.string() +
                                                 "': " + problem + "; compiling without PCH");
    return;
  }
  folder_ = folder;
  // Quiet: the log must read the same with and without PCH.
  options_ = {"-pch", "--pch-dir=" + folder.string(), "--pch-messages=false",
              "--pch-verbose=false"};
  heap_.lock();
}

void PrecompiledHeaderUse::finish(nvrtcProgram program) {
#if CUDA_VERSION >= 12080
  if (folder_.empty()) return;
  const nvrtcResult status = nvrtcGetPCHCreateStatus(program);
  if (status == NVRTC_SUCCESS) {
    keep_private_and_bounded(folder_);
    return;
  }
  if (status != NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED) return;
  std::size_t required = 0;
  check(nvrtcGetPCHHeapSizeRequired(program, &required), "nvrtcGetPCHHeapSizeRequired");
  heap_.unlock();
  std::unique_lock resize(heap_mutex());
  std::size_t current = 0;
  check(nvrtcGetPCHHeapSize(&current), "nvrtcGetPCHHeapSize");
  if (required > current) {
    check(nvrtcSetPCHHeapSize(required), "nvrtcSetPCHHeapSize",
          "growing NVRTC's precompiled-header heap to " + std::to_string(required) + " bytes");
    if (log::enabled(log::Level::info))
      log::write(log::Level::info, "NVRTC's precompiled-header heap grown from " +
                                       std::to_string(current) + " to " + std::to_string(required) +
                                       " bytes");
  }
#else
  (void)program;
#endif
}

}  // namespace ptxrt::detail
