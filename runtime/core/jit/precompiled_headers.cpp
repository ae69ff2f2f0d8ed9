#include "jit/precompiled_headers.hpp"

#include <cuda.h>
#include <sys/stat.h>

#include <algorithm>
#include <string_view>

#include "jit/nvrtc_check.hpp"
#include "ptxrt/core/disk_cache.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/log.hpp"
#include "ptxrt/core/target.hpp"

namespace ptxrt::detail {
namespace {

namespace fs = std::filesystem;

// What every PCH file of NVRTC's EDG front end begins with.
constexpr std::string_view precompiled_header_magic = "EDG C/C++ version ";

std::shared_mutex& heap_mutex() {
  static std::shared_mutex mutex;
  return mutex;
}

// PCH files of many header sets add up; a quarter of the disk cache's bound is theirs.
std::uintmax_t folder_bound() { return DiskCache::default_max_bytes() / 4; }

// "<program>_<n>.pch", the names NVRTC gives the PCH files it creates.
bool is_precompiled_header_name(std::string_view name) {
  constexpr std::string_view suffix = ".pch";
  if (!name.ends_with(suffix)) return false;
  name.remove_suffix(suffix.size());
  const std::size_t underscore = name.rfind('_');
  return underscore != std::string_view::npos && underscore > 0 && underscore + 1 < name.size() &&
         name.find_first_not_of("0123456789", underscore + 1) == std::string_view::npos;
}

bool holds_precompiled_header(const OpenedFile& file) {
  return read_opened_prefix(file, precompiled_header_magic.size()) == precompiled_header_magic;
}

}  // namespace

void keep_precompiled_headers_private_and_bounded(const PrivateFolder& folder,
                                                  std::uintmax_t bound_bytes) {
  struct Header {
    std::string name;
    std::uintmax_t bytes;
    fs::file_time_type modified;
  };
  std::vector<Header> headers;
  std::uintmax_t total = 0;
  for (std::string& name : folder.names()) {
    if (!is_precompiled_header_name(name)) continue;
    std::optional<OpenedFile> file;
    try {
      file = folder.open_regular_file(name, "precompiled header");
    } catch (const Error&) {
      continue;  // not a file NVRTC wrote: a link, a FIFO, a folder
    }
    if (!file || file->status.st_uid != ::geteuid() || !holds_precompiled_header(*file)) continue;
    ::fchmod(file->descriptor.get(), 0600);
    const auto bytes = static_cast<std::uintmax_t>(file->status.st_size);
    total += bytes;
    headers.push_back({std::move(name), bytes, modification_time(file->status)});
  }
  std::sort(headers.begin(), headers.end(),
            [](const Header& a, const Header& b) { return a.modified < b.modified; });
  for (const Header& header : headers) {
    if (total <= bound_bytes) break;
    if (folder.remove_file_if(header.name, holds_precompiled_header)) total -= header.bytes;
  }
}

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
  try {
    folder_ = PrivateFolder::open(folder, "precompiled-header folder");
  } catch (const Error& error) {
    log::warn_once("pch " + folder.string(),
                   std::string(error.what()) + "; compiling without precompiled headers");
    return;
  }
  // Quiet: the log must read the same with and without PCH.
  options_ = {"-pch", "--pch-dir=" + folder.string(), "--pch-messages=false",
              "--pch-verbose=false"};
  heap_.lock();
}

void PrecompiledHeaderUse::finish(nvrtcProgram program) {
#if CUDA_VERSION >= 12080
  if (!folder_) return;
  const nvrtcResult status = nvrtcGetPCHCreateStatus(program);
  if (status == NVRTC_SUCCESS) {
    keep_precompiled_headers_private_and_bounded(*folder_, folder_bound());
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
