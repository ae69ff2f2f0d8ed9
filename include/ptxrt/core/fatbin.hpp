// A fatbin's table of contents, read without a driver: which CUBINs (per SM) and which PTX (per
// virtual architecture, with its ISA version) it holds. nvFatbin builds fatbins (compile() with
// an ImageFormat::fatbin target); this reads them, for the check before loading and for reports.
// Pure functions on bytes; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ptxrt/core/image.hpp"
#include "ptxrt/export.hpp"

namespace ptxrt {

struct PTXRT_API FatbinEntry {
  ImageFormat format = ImageFormat::cubin;  // cubin, ptx or ltoir
  int sm = 0;                               // 90 for sm_90 / compute_90
  // The PTX ISA version of a PTX entry (9.0 → 9, 0); the ELF ABI version of a CUBIN's.
  int version_major = 0;
  int version_minor = 0;
  bool compressed = false;
  // The entry's bytes as stored (compressed ones stay compressed).
  std::string_view payload;

  // "sm_90 CUBIN", "compute_90 PTX (ISA 9.0)".
  std::string describe() const;
};

// Whether `bytes` start with the fatbin magic (0xBA55ED50).
PTXRT_API bool is_fatbin(std::string_view bytes) noexcept;

// The bytes the fatbin at the start of `bytes` spans, its header and entries: a section of a host
// object may hold several back to back. Throws Error (invalid_argument) when its header is not
// a fatbin's or claims more bytes than there are.
PTXRT_API std::uint64_t fatbin_size(std::string_view bytes);

// Every entry of a fatbin, in file order; the views point into `fatbin`. Checks the container:
// each entry's header, kind and name inside it, its payload inside the fatbin, and for a
// compressed entry the sizes it declares (and a zstd frame's own). Throws Error
// (invalid_argument) naming the entry and the defect; never reads outside `fatbin`. The payloads
// themselves are checked by the device-code check before a toolkit library reads them.
PTXRT_API std::vector<FatbinEntry> read_fatbin(std::string_view fatbin);

}  // namespace ptxrt
