#include "ptxrt/core/fatbin.hpp"

#include <cstdint>
#include <cstring>

#include "ptxrt/core/error.hpp"

namespace ptxrt {
namespace {

// The layout nvFatbin and nvcc write (little-endian): a 16-byte header (magic, version, header
// size, size of what follows), then entries, each a header (kind, header size, payload size,
// version, SM, flags) followed by its payload.
constexpr std::uint32_t fatbin_magic = 0xBA55ED50;
constexpr std::size_t fatbin_header_bytes = 16;
constexpr std::size_t entry_header_min_bytes = 48;
constexpr std::uint16_t kind_ptx = 1;
constexpr std::uint16_t kind_elf = 2;
constexpr std::uint16_t kind_ltoir = 4;
constexpr std::uint64_t flag_compressed = 0x2000 | 0x8000;

template <class T>
T read_at(std::string_view bytes, std::size_t offset) {
  T value{};
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

[[noreturn]] void malformed(const std::string& defect) {
  throw Error(ErrorKind::invalid_argument, "not a well-formed fatbin: " + defect);
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
  return bytes.size() >= 4 && read_at<std::uint32_t>(bytes, 0) == fatbin_magic;
}

std::vector<FatbinEntry> read_fatbin(std::string_view fatbin) {
  if (fatbin.size() < fatbin_header_bytes || !is_fatbin(fatbin))
    malformed("no fatbin header (" + std::to_string(fatbin.size()) + " bytes)");
  const auto header_bytes = read_at<std::uint16_t>(fatbin, 6);
  const auto body_bytes = read_at<std::uint64_t>(fatbin, 8);
  if (header_bytes < fatbin_header_bytes || header_bytes > fatbin.size() ||
      body_bytes > fatbin.size() - header_bytes)
    malformed("its header claims " + std::to_string(body_bytes) + " bytes after " +
              std::to_string(header_bytes) + ", but the file has " + std::to_string(fatbin.size()));
  std::vector<FatbinEntry> entries;
  const std::size_t end = header_bytes + static_cast<std::size_t>(body_bytes);
  for (std::size_t at = header_bytes; at < end;) {
    if (end - at < entry_header_min_bytes)
      malformed("entry at byte " + std::to_string(at) + " is truncated");
    const auto kind = read_at<std::uint16_t>(fatbin, at);
    const auto entry_header_bytes = read_at<std::uint32_t>(fatbin, at + 4);
    const auto payload_bytes = read_at<std::uint64_t>(fatbin, at + 8);
    if (entry_header_bytes < entry_header_min_bytes || entry_header_bytes > end - at ||
        payload_bytes > end - at - entry_header_bytes)
      malformed("entry at byte " + std::to_string(at) + " runs past the end");
    FatbinEntry entry;
    if (kind == kind_ptx)
      entry.format = ImageFormat::ptx;
    else if (kind == kind_elf)
      entry.format = ImageFormat::cubin;
    else if (kind == kind_ltoir)
      entry.format = ImageFormat::ltoir;
    else
      malformed("entry at byte " + std::to_string(at) + " has unknown kind " +
                std::to_string(kind));
    entry.version_minor = read_at<std::uint16_t>(fatbin, at + 24);
    entry.version_major = read_at<std::uint16_t>(fatbin, at + 26);
    entry.sm = static_cast<int>(read_at<std::uint32_t>(fatbin, at + 28));
    entry.compressed = (read_at<std::uint64_t>(fatbin, at + 40) & flag_compressed) != 0;
    entry.payload = fatbin.substr(at + entry_header_bytes, static_cast<std::size_t>(payload_bytes));
    entries.push_back(entry);
    at += entry_header_bytes + static_cast<std::size_t>(payload_bytes);
  }
  return entries;
}

}  // namespace ptxrt
