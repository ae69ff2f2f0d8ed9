// Internal: reading a file that arrives from outside the process (a kernel source, a device
// object, a problem file, a data file, a tuning database, a cache entry). Only a regular file is
// read: a FIFO, a device, a socket or a directory at the path is one clear error, never a hang or
// an endless read, because the file is opened non-blocking and checked with fstat before a byte
// is read. Every read has a size cap, checked against fstat's size before allocating.
//
// Thread safety: stateless; safe from any thread.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "ptxrt/export.hpp"
#include "support/file_descriptor.hpp"

namespace ptxrt::detail {

struct ReadLimits {
  // Larger files are refused with the cap in the message, before anything is allocated.
  std::uint64_t max_bytes = std::uint64_t{1} << 30;
  // Cache entries and database files ptxrt wrote itself are opened with O_NOFOLLOW: a link put
  // there by someone else is refused rather than read.
  bool follow_symlinks = true;
};

// A regular file opened for reading, with its fstat; the descriptor is blocking again.
struct OpenedFile {
  FileDescriptor descriptor;
  struct stat status;
};

// Opens `path` for reading if it is a regular file. Returns nothing when it does not exist;
// throws Error(io) naming `what` and the path for anything else that is wrong (not a regular
// file, a link where none may be, no permission).
PTXRT_API std::optional<OpenedFile> open_regular_file(const std::filesystem::path& path,
                                                      std::string_view what,
                                                      const ReadLimits& limits = {});

// As open_regular_file, for `name` inside the folder open as `folder` (openat); messages name
// `path`, the file's path as the user would write it.
std::optional<OpenedFile> open_regular_file_at(int folder, const std::filesystem::path& name,
                                               const std::filesystem::path& path,
                                               std::string_view what,
                                               const ReadLimits& limits = {});

// The whole content of the regular file `path`; throws Error(io) naming `what` when it is
// missing, is not a regular file, is larger than limits.max_bytes, or cannot be read.
PTXRT_API std::string read_regular_file(const std::filesystem::path& path, std::string_view what,
                                        const ReadLimits& limits = {});

// As read_regular_file, but nothing when the file does not exist.
PTXRT_API std::optional<std::string> read_regular_file_if_exists(const std::filesystem::path& path,
                                                                 std::string_view what,
                                                                 const ReadLimits& limits = {});

// Reads all of an opened regular file (at most limits.max_bytes) from its start.
PTXRT_API std::string read_opened_file(const OpenedFile& file, const std::filesystem::path& path,
                                       std::string_view what, const ReadLimits& limits = {});

// The first `bytes` bytes of an opened regular file, fewer when it is shorter: enough to recognise
// what wrote it without reading it all.
PTXRT_API std::string read_opened_prefix(const OpenedFile& file, std::size_t bytes);

// "a FIFO", "a directory", "a character device", ...: what a non-regular file is, for messages.
std::string_view file_type_name(mode_t mode);

// Bytes [offset, offset + size) of an opened regular file; Error (io) naming `what` when the
// file ends before them.
PTXRT_API std::string read_opened_range(const OpenedFile& file, const std::filesystem::path& path,
                                        std::string_view what, std::uint64_t offset,
                                        std::uint64_t size);

}  // namespace ptxrt::detail
