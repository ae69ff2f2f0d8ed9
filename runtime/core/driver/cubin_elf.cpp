#include "driver/cubin_elf.hpp"

#include "ptxrt/core/error.hpp"

namespace ptxrt::detail {
namespace {

constexpr std::uint8_t kElfClass64 = 2;
constexpr std::uint8_t kElfLittleEndian = 1;
constexpr std::uint16_t kMachineCuda = 190;  // EM_CUDA
constexpr std::uint64_t kElfHeaderBytes = 64;
constexpr std::uint64_t kSectionHeaderBytes = 64;
constexpr std::uint64_t kSymbolBytes = 24;
constexpr std::uint32_t kSectionSymbolTable = 2;  // SHT_SYMTAB
constexpr std::uint32_t kSectionNoBits = 8;       // SHT_NOBITS: has a size but no file contents
constexpr std::uint8_t kSymbolFunction = 2;       // STT_FUNC
constexpr std::uint8_t kOtherCudaEntry = 0x10;    // STO_CUDA_ENTRY in st_other
constexpr std::string_view kElfMagic =
    "\x7f"
    "ELF";

// .nv.info records: a format byte, an attribute id, then two bytes that hold the value (byte and
// half formats), nothing (no-value format) or the payload size (sized format).
enum class AttributeFormat : std::uint8_t { no_value = 1, byte = 2, half = 3, sized = 4 };

bool fits(std::uint64_t offset, std::uint64_t size, std::uint64_t total) {
  return offset <= total && size <= total - offset;
}

std::string_view c_string_at(std::string_view table, std::uint64_t offset, std::string_view what) {
  if (offset >= table.size()) {
    malformed_cubin(std::string(what) + " name offset " + std::to_string(offset) +
                    " is past its string table of " + std::to_string(table.size()) + " bytes");
  }
  std::string_view rest = table.substr(offset);
  std::size_t end = rest.find('\0');
  if (end == std::string_view::npos)
    malformed_cubin(std::string(what) + " name is not NUL-terminated");
  return rest.substr(0, end);
}

}  // namespace

void malformed_cubin(const std::string& what) {
  throw Error(ErrorKind::invalid_argument, "malformed CUBIN: " + what);
}

std::uint64_t read_little_endian(std::string_view bytes, std::uint64_t offset, std::size_t width,
                                 std::string_view what) {
  if (!fits(offset, width, bytes.size())) {
    malformed_cubin(std::string(what) + " at offset " + std::to_string(offset) + " needs " +
                    std::to_string(width) + " bytes, but only " + std::to_string(bytes.size()) +
                    " are there");
  }
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < width; ++i)
    value |= std::uint64_t{static_cast<unsigned char>(bytes[offset + i])} << (8 * i);
  return value;
}

bool looks_like_elf(std::string_view bytes) { return bytes.starts_with(kElfMagic); }

CubinElf::CubinElf(std::string_view bytes) : bytes_(bytes) {
  check_header();
  read_sections();
  read_symbols();
}

const ElfSection* CubinElf::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &sections_[it->second];
}

std::vector<ElfEntry> CubinElf::entries() const {
  std::vector<ElfEntry> entries;
  for (std::uint32_t index = 0; index < symbols_.size(); ++index) {
    const ElfSymbol& symbol = symbols_[index];
    if (symbol.type != kSymbolFunction || !symbol.entry || symbol.section >= sections_.size())
      continue;
    const ElfSection& text = sections_[symbol.section];
    if (!text.name.starts_with(".text.") || text.name.substr(6) != symbol.name) continue;
    entries.push_back({index, symbol.name, &text});
  }
  return entries;
}

void CubinElf::check_header() {
  if (bytes_.size() < kElfHeaderBytes) {
    malformed_cubin(std::to_string(bytes_.size()) + " bytes is shorter than an ELF header (64)");
  }
  if (!looks_like_elf(bytes_)) malformed_cubin("no ELF magic number");
  auto elf_class = read_le<std::uint8_t>(bytes_, 4, "ELF class");
  auto encoding = read_le<std::uint8_t>(bytes_, 5, "ELF data encoding");
  if (elf_class != kElfClass64 || encoding != kElfLittleEndian) {
    malformed_cubin("ELF class " + std::to_string(elf_class) + ", encoding " +
                    std::to_string(encoding) + "; a CUBIN is 64-bit (2) little-endian (1)");
  }
  auto machine = read_le<std::uint16_t>(bytes_, 0x12, "e_machine");
  if (machine != kMachineCuda) {
    malformed_cubin("e_machine " + std::to_string(machine) + " is not EM_CUDA (190)");
  }
  flags_ = read_le<std::uint32_t>(bytes_, 0x30, "e_flags");
  // Unused here, but a program header table that runs off the end means a truncated file.
  auto program_headers = read_le<std::uint64_t>(bytes_, 0x20, "e_phoff");
  auto program_header_size = read_le<std::uint16_t>(bytes_, 0x36, "e_phentsize");
  auto program_header_count = read_le<std::uint16_t>(bytes_, 0x38, "e_phnum");
  std::uint64_t table_bytes = std::uint64_t{program_header_count} * program_header_size;
  if (!fits(program_headers, table_bytes, bytes_.size())) {
    malformed_cubin("program header table (" + std::to_string(table_bytes) + " bytes at offset " +
                    std::to_string(program_headers) + ") runs past the end of the " +
                    std::to_string(bytes_.size()) + "-byte file");
  }
}

void CubinElf::read_sections() {
  auto table = read_le<std::uint64_t>(bytes_, 0x28, "e_shoff");
  auto entry_size = read_le<std::uint16_t>(bytes_, 0x3a, "e_shentsize");
  auto count = read_le<std::uint16_t>(bytes_, 0x3c, "e_shnum");
  auto names_index = read_le<std::uint16_t>(bytes_, 0x3e, "e_shstrndx");
  if (count == 0) malformed_cubin("no section headers");
  if (entry_size < kSectionHeaderBytes) {
    malformed_cubin("section header size " + std::to_string(entry_size) + " is below 64");
  }
  if (!fits(table, std::uint64_t{count} * entry_size, bytes_.size())) {
    malformed_cubin("section header table (" + std::to_string(count) + " x " +
                    std::to_string(entry_size) + " bytes at offset " + std::to_string(table) +
                    ") runs past the end of the " + std::to_string(bytes_.size()) + "-byte file");
  }
  if (names_index >= count) {
    malformed_cubin("section name table index " + std::to_string(names_index) + " is not below " +
                    std::to_string(count) + " sections");
  }
  std::vector<std::uint32_t> name_offsets;
  for (std::uint64_t i = 0; i < count; ++i) {
    std::uint64_t header = table + i * entry_size;
    ElfSection section;
    name_offsets.push_back(read_le<std::uint32_t>(bytes_, header, "sh_name"));
    section.type = read_le<std::uint32_t>(bytes_, header + 0x04, "sh_type");
    auto offset = read_le<std::uint64_t>(bytes_, header + 0x18, "sh_offset");
    section.size = read_le<std::uint64_t>(bytes_, header + 0x20, "sh_size");
    section.link = read_le<std::uint32_t>(bytes_, header + 0x28, "sh_link");
    section.info = read_le<std::uint32_t>(bytes_, header + 0x2c, "sh_info");
    if (section.type != kSectionNoBits) {
      if (!fits(offset, section.size, bytes_.size())) {
        malformed_cubin("section " + std::to_string(i) + " (" + std::to_string(section.size) +
                        " bytes at offset " + std::to_string(offset) +
                        ") runs past the end of the " + std::to_string(bytes_.size()) +
                        "-byte file");
      }
      section.contents = bytes_.substr(offset, section.size);
    }
    sections_.push_back(section);
  }
  std::string_view names = sections_[names_index].contents;
  for (std::size_t i = 0; i < sections_.size(); ++i) {
    sections_[i].name = c_string_at(names, name_offsets[i], "section");
    by_name_.emplace(sections_[i].name, i);
  }
}

void CubinElf::read_symbols() {
  const ElfSection* table = nullptr;
  for (const ElfSection& section : sections_) {
    if (section.type == kSectionSymbolTable) table = &section;
  }
  if (!table) malformed_cubin("no symbol table");
  if (table->link >= sections_.size()) {
    malformed_cubin("symbol table links to string table " + std::to_string(table->link) +
                    ", but there are " + std::to_string(sections_.size()) + " sections");
  }
  std::string_view names = sections_[table->link].contents;
  std::string_view entries = table->contents;
  for (std::uint64_t at = 0; at + kSymbolBytes <= entries.size(); at += kSymbolBytes) {
    ElfSymbol symbol;
    symbol.name = c_string_at(names, read_le<std::uint32_t>(entries, at, "st_name"), "symbol");
    symbol.type = read_le<std::uint8_t>(entries, at + 4, "st_info") & 0x0f;
    symbol.entry = (read_le<std::uint8_t>(entries, at + 5, "st_other") & kOtherCudaEntry) != 0;
    symbol.section = read_le<std::uint16_t>(entries, at + 6, "st_shndx");
    symbols_.push_back(symbol);
  }
}

std::vector<ElfAttribute> read_attributes(const ElfSection& section) {
  std::string what = "attribute record in " + std::string(section.name);
  std::string_view records = section.contents;
  std::vector<ElfAttribute> attributes;
  std::uint64_t at = 0;
  while (at < records.size()) {
    auto format = static_cast<AttributeFormat>(read_le<std::uint8_t>(records, at, what));
    auto id = static_cast<AttributeId>(read_le<std::uint8_t>(records, at + 1, what));
    auto value = read_le<std::uint16_t>(records, at + 2, what);
    at += 4;
    switch (format) {
      case AttributeFormat::no_value:
      case AttributeFormat::byte:
      case AttributeFormat::half:
        attributes.push_back({id, value, {}});
        break;
      case AttributeFormat::sized:
        if (!fits(at, value, records.size())) {
          malformed_cubin(what + " at offset " + std::to_string(at - 4) + " claims " +
                          std::to_string(value) + " bytes, but the section has " +
                          std::to_string(records.size() - at) + " left");
        }
        attributes.push_back({id, 0, records.substr(at, value)});
        at += value;
        break;
      default:
        malformed_cubin(what + " at offset " + std::to_string(at - 4) + " has unknown format " +
                        std::to_string(static_cast<int>(format)));
    }
  }
  return attributes;
}

}  // namespace ptxrt::detail
