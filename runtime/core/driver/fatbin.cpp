#include "ptxrt/core/fatbin.hpp"

#include <cstdint>
#include <optional>

#include "driver/elf_file.hpp"
#include "ptxrt/core/error.hpp"
#include "support/checked_size.hpp"

namespace ptxrt {
namespace {

using detail::range_inside;
using detail::read_le;

// The layout nvFatbin and nvcc write (little-endian; undocumented, checked against both in CUDA
// 13): a 16-byte header (magic, version, header size, size of what follows), then entries, each a
// header followed by its payload. An entry's header holds, at these offsets:
//   0 kind, 4 header size, 8 payload size, 16 compressed size, 24 version minor, 26 major,
//   28 SM, 32 and 36 offset and length of the entry's name within the header, 40 flags,
//   56 size once decompressed.
constexpr std::uint32_t fatbin_magic = 0xBA55ED50;
constexpr std::uint64_t fatbin_header_bytes = 16;
constexpr std::uint64_t entry_header_min_bytes = 64;
constexpr std::uint16_t kind_ptx = 1;
constexpr std::uint16_t kind_elf = 2;
constexpr std::uint16_t kind_ltoir = 8;
// 0x2000: the older compression; 0x8000: zstd. 0x10000 marks LTO-IR, which is stored encoded.
constexpr std::uint64_t flag_compressed = 0x2000;
constexpr std::uint64_t flag_zstd = 0x8000;
constexpr std::uint64_t flag_encoded = 0x10000;
// What a fatbin entry may expand to: more than any device code, less than an allocation that
// harms the process.
constexpr std::uint64_t max_decompressed_bytes = std::uint64_t{1} << 30;
constexpr std::uint32_t zstd_frame_magic = 0xFD2FB528;

[[noreturn]] void malformed(const std::string& defect) {
  throw Error(ErrorKind::invalid_argument, "not a well-formed fatbin: " + defect);
}

// The content size a zstd frame header declares (RFC 8878, 3.1.1.1); nothing when it declares
// none. Throws when the payload is not a zstd frame.
std::optional<std::uint64_t> zstd_content_size(std::string_view frame, const std::string& where) {
  if (frame.size() < 5 || read_le<std::uint32_t>(frame, 0, "zstd magic") != zstd_frame_magic)
    malformed(where + " is marked zstd-compressed but does not start with a zstd frame");
  const auto descriptor = read_le<std::uint8_t>(frame, 4, "zstd frame header");
  const int size_flag = descriptor >> 6;
  const bool single_segment = (descriptor & 0x20) != 0;
  constexpr std::uint64_t dictionary_id_bytes[] = {0, 1, 2, 4};
  const std::uint64_t at = 5 + (single_segment ? 0 : 1) + dictionary_id_bytes[descriptor & 3];
  constexpr std::size_t content_size_bytes[] = {0, 2, 4, 8};
  const std::size_t width = size_flag == 0 && single_segment ? 1 : content_size_bytes[size_flag];
  if (width == 0) return std::nullopt;
  if (!range_inside(at, width, frame.size()))
    malformed(where + "'s zstd frame header is cut short");
  const std::uint64_t value = detail::read_little_endian(frame, at, width, "zstd content size");
  return width == 2 ? value + 256 : value;
}

void check_compressed_sizes(std::string_view header, std::string_view payload, std::uint64_t flags,
                            const std::string& where) {
  const auto compressed_bytes = read_le<std::uint32_t>(header, 16, "compressed size");
  const auto decompressed_bytes = read_le<std::uint64_t>(header, 56, "decompressed size");
  if (compressed_bytes == 0 || compressed_bytes > payload.size())
    malformed(where + " declares " + std::to_string(compressed_bytes) +
              " compressed bytes in a payload of " + std::to_string(payload.size()));
  if (decompressed_bytes == 0 || decompressed_bytes > max_decompressed_bytes)
    malformed(where + " declares " + std::to_string(decompressed_bytes) +
              " bytes once decompressed (at most 1 GiB)");
  if ((flags & flag_zstd) == 0 || (flags & flag_encoded) != 0) return;
  const std::optional<std::uint64_t> framed =
      zstd_content_size(payload.substr(0, compressed_bytes), where);
  if (framed && *framed != decompressed_bytes)
    malformed(where + " declares " + std::to_string(decompressed_bytes) +
              " bytes once decompressed, but its zstd frame holds " + std::to_string(*framed));
}

}  // namespace

std::string FatbinEntry::describe() const {
  const std::string number = std::to_string(sm);
  if (format == ImageFormat::cubin) return "sm_" + number + " CUBIN";
  std::string text = "compute_" + number + " " + std::string(to_string(format));
  if (format == ImageFormat::ptx)
    text += " (ISA " + std::to_string(version_major) + "." + std::to_string(version_minor) + ")";
  return text;
}

bool is_fatbin(std::string_view bytes) noexcept {
  return bytes.size() >= 4 && read_le<std::uint32_t>(bytes, 0, "fatbin magic") == fatbin_magic;
}

std::uint64_t fatbin_size(std::string_view fatbin) {
  if (fatbin.size() < fatbin_header_bytes || !is_fatbin(fatbin))
    malformed("no fatbin header (" + std::to_string(fatbin.size()) + " bytes)");
  const auto header_bytes = read_le<std::uint16_t>(fatbin, 6, "fatbin header size");
  const auto body_bytes = read_le<std::uint64_t>(fatbin, 8, "fatbin size");
  if (header_bytes < fatbin_header_bytes || !range_inside(header_bytes, body_bytes, fatbin.size()))
    malformed("its header claims " + std::to_string(body_bytes) + " bytes after " +
              std::to_string(header_bytes) + ", but there are " + std::to_string(fatbin.size()));
  return header_bytes + body_bytes;
}

std::vector<FatbinEntry> read_fatbin(std::string_view fatbin) {
  const std::uint64_t end = fatbin_size(fatbin);
  std::vector<FatbinEntry> entries;
  for (std::uint64_t at = read_le<std::uint16_t>(fatbin, 6, "fatbin header size"); at < end;) {
    const std::string where =
        "entry " + std::to_string(entries.size() + 1) + " at offset " + std::to_string(at);
    if (end - at < entry_header_min_bytes)
      malformed(where + " has " + std::to_string(end - at) + " bytes, less than an entry header (" +
                std::to_string(entry_header_min_bytes) + ")");
    const auto kind = read_le<std::uint16_t>(fatbin, at, "fatbin entry kind");
    const auto header_bytes = read_le<std::uint32_t>(fatbin, at + 4, "fatbin entry header size");
    const auto payload_bytes = read_le<std::uint64_t>(fatbin, at + 8, "fatbin entry size");
    if (header_bytes < entry_header_min_bytes)
      malformed(where + " has a " + std::to_string(header_bytes) + "-byte header, less than " +
                std::to_string(entry_header_min_bytes));
    if (header_bytes > end - at || payload_bytes > end - at - header_bytes)
      malformed(where + " (a " + std::to_string(header_bytes) + "-byte header and " +
                std::to_string(payload_bytes) + " bytes) runs past the fatbin's end (" +
                std::to_string(end) + " bytes)");
    const std::string_view header = fatbin.substr(at, header_bytes);
    FatbinEntry entry;
    if (kind == kind_ptx)
      entry.format = ImageFormat::ptx;
    else if (kind == kind_elf)
      entry.format = ImageFormat::cubin;
    else if (kind == kind_ltoir)
      entry.format = ImageFormat::ltoir;
    else
      malformed(where + " has unknown kind " + std::to_string(kind) +
                " (1 PTX, 2 CUBIN, 8 LTO-IR)");
    const auto name_offset = read_le<std::uint32_t>(header, 32, "fatbin entry name offset");
    const auto name_bytes = read_le<std::uint32_t>(header, 36, "fatbin entry name size");
    if (name_bytes != 0 && !range_inside(name_offset, name_bytes, header_bytes))
      malformed(where + "'s name (" + std::to_string(name_bytes) + " bytes at " +
                std::to_string(name_offset) + ") is outside its " + std::to_string(header_bytes) +
                "-byte header");
    entry.version_minor = read_le<std::uint16_t>(header, 24, "fatbin entry version");
    entry.version_major = read_le<std::uint16_t>(header, 26, "fatbin entry version");
    entry.sm = static_cast<int>(read_le<std::uint32_t>(header, 28, "fatbin entry SM"));
    const auto flags = read_le<std::uint64_t>(header, 40, "fatbin entry flags");
    entry.compressed = (flags & (flag_compressed | flag_zstd)) != 0;
    entry.payload = fatbin.substr(at + header_bytes, payload_bytes);
    if (entry.compressed) check_compressed_sizes(header, entry.payload, flags, where);
    entries.push_back(entry);
    at += header_bytes + payload_bytes;
  }
  return entries;
}

}  // namespace ptxrt
