// Internal: finds the headers a program includes, the way NVRTC will, so that their contents can
// feed the cache key (editing a header must change the key). Named headers win over files, as
// they do in NVRTC; a quoted include is looked up beside the including file first, then along
// the search paths; includes found nowhere (the toolkit's, or in a disabled #if branch) are
// skipped, since the NVRTC version stands for the toolkit's.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/regular_file.hpp"

namespace ptxrt::detail {

// Kernel sources and headers are read as regular files of at most 64 MiB.
inline constexpr ReadLimits source_limits{.max_bytes = std::uint64_t{64} << 20};

struct IncludedFile {
  std::string include_name;  // as spelled in the #include
  std::string content;
};

// The text of a named (in-memory) header, or nothing.
using NamedHeaderLookup = std::function<std::optional<std::string_view>(std::string_view)>;

// Every header reachable from `source`, each once, in the order first included.
std::vector<IncludedFile> find_included_files(std::string_view source,
                                              const std::filesystem::path& directory,
                                              const NamedHeaderLookup& named_headers,
                                              const std::vector<std::filesystem::path>& search_paths);

// The text of a source or header, for the readers that go on without it (the include scan, a
// compile error's source lines): nothing when it is missing, is not a regular file, is larger
// than source_limits or cannot be read.
PTXRT_API std::optional<std::string> read_source_if_readable(const std::filesystem::path& path);

}  // namespace ptxrt::detail
