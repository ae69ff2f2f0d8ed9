#include "driver/archive_file.hpp"

#include <algorithm>
#include <charconv>
#include <optional>

#include "ptxrt/core/error.hpp"
#include "support/checked_size.hpp"

namespace ptxrt::detail {
namespace {

constexpr std::string_view kArchiveMagic = "!<arch>\n";
// A member header: name (16), date (12), owner (6), group (6), mode (8), size (10), "`\n".
constexpr std::uint64_t kMemberHeaderBytes = 60;
constexpr std::string_view kHeaderEnd = "`\n";

[[noreturn]] void malformed(const std::string& what) {
  throw Error(ErrorKind::invalid_argument, "malformed static library: " + what);
}

// A field padded with spaces, without them.
std::string_view trimmed(std::string_view field) {
  return field.substr(0, field.find_last_not_of(' ') + 1);
}

std::uint64_t big_endian(std::string_view bytes, std::uint64_t offset, std::size_t width) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < width; ++i)
    value = value << 8 | static_cast<unsigned char>(bytes[offset + i]);
  return value;
}

bool all_digits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

bool looks_like_archive(std::string_view bytes) { return bytes.starts_with(kArchiveMagic); }

ArchiveFile::ArchiveFile(std::string_view bytes) : bytes_(bytes) {
  if (!looks_like_archive(bytes_)) malformed("no archive magic \"!<arch>\\n\"");
  std::uint64_t at = kArchiveMagic.size();
  while (at < bytes_.size()) at = read_member(at);
  for (const SymbolTable& table : symbol_tables_) check_symbol_table(table);
}

std::uint64_t ArchiveFile::read_member(std::uint64_t header_offset) {
  const std::string where = "member header at offset " + std::to_string(header_offset);
  if (!range_inside(header_offset, kMemberHeaderBytes, bytes_.size()))
    malformed(where + " is cut short: " + std::to_string(bytes_.size() - header_offset) +
              " of its 60 bytes are there");
  const std::string_view header = bytes_.substr(header_offset, kMemberHeaderBytes);
  if (header.substr(58) != kHeaderEnd) malformed(where + " does not end with \"`\\n\"");
  const std::string_view size_field = trimmed(header.substr(48, 10));
  std::uint64_t size = 0;
  const auto [end, error] =
      std::from_chars(size_field.data(), size_field.data() + size_field.size(), size);
  if (!all_digits(size_field) || error != std::errc() ||
      end != size_field.data() + size_field.size())
    malformed(where + " has the size \"" + std::string(size_field) + "\", not a decimal number");
  const std::string name = member_name(trimmed(header.substr(0, 16)), header_offset);
  const std::uint64_t start = header_offset + kMemberHeaderBytes;
  if (!range_inside(start, size, bytes_.size()))
    malformed("member " + name + " at offset " + std::to_string(header_offset) + " + " +
              std::to_string(size) + " bytes runs past the end (" + std::to_string(bytes_.size()) +
              " bytes)");
  const std::string_view contents = bytes_.substr(start, size);
  if (name == "/")
    symbol_tables_.push_back({contents, 4});
  else if (name == "/SYM64/")
    symbol_tables_.push_back({contents, 8});
  else if (name == "//")
    long_names_ = contents;
  else
    members_.push_back({name, header_offset, contents});
  // Members start at even offsets: an odd-sized one is followed by a newline.
  return start + size + size % 2;
}

// "bar.o" of "bar.o/", or of "/123" (at 123 in the long-name table); the tables' own names as
// they are.
std::string ArchiveFile::member_name(std::string_view field, std::uint64_t header_offset) const {
  if (field == "/" || field == "//" || field == "/SYM64/") return std::string(field);
  if (field.size() > 1 && field.front() == '/' && all_digits(field.substr(1))) {
    std::uint64_t offset = 0;
    std::from_chars(field.data() + 1, field.data() + field.size(), offset);
    const std::string where = "member at offset " + std::to_string(header_offset) +
                              " names itself at " + std::to_string(offset) +
                              " in the long-name table";
    if (offset >= long_names_.size())
      malformed(where + ", which has " + std::to_string(long_names_.size()) + " bytes" +
                (long_names_.empty() ? " (or does not precede it)" : ""));
    const std::string_view rest = long_names_.substr(offset);
    const std::size_t line_end = rest.find('\n');
    if (line_end == std::string_view::npos) malformed(where + ", where no name ends");
    std::string_view name = rest.substr(0, line_end);
    if (name.ends_with('/')) name.remove_suffix(1);
    return std::string(name);
  }
  return std::string(field.ends_with('/') ? field.substr(0, field.size() - 1) : field);
}

// A count, that many offsets of member headers (big-endian), then that many NUL-terminated names.
void ArchiveFile::check_symbol_table(const SymbolTable& table) const {
  const std::string_view contents = table.contents;
  const std::size_t width = table.entry_bytes;
  if (contents.size() < width)
    malformed("symbol table of " + std::to_string(contents.size()) + " bytes holds no count");
  const std::uint64_t count = big_endian(contents, 0, width);
  const std::optional<std::uint64_t> offsets_bytes = checked_product(count, width);
  if (!offsets_bytes || !range_inside(width, *offsets_bytes, contents.size()))
    malformed("symbol table counts " + std::to_string(count) + " symbols, more than its " +
              std::to_string(contents.size()) + " bytes hold");
  const std::string_view names = contents.substr(width + *offsets_bytes);
  if (static_cast<std::uint64_t>(std::count(names.begin(), names.end(), '\0')) < count)
    malformed("symbol table counts " + std::to_string(count) + " symbols, but holds fewer names");
  for (std::uint64_t index = 0; index < count; ++index) {
    const std::uint64_t offset = big_endian(contents, width + index * width, width);
    if (!std::ranges::binary_search(members_, offset, {}, &ArchiveMember::header_offset))
      malformed("symbol table entry " + std::to_string(index) + " points at offset " +
                std::to_string(offset) + ", where no member starts");
  }
}

}  // namespace ptxrt::detail
