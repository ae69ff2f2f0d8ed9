#include "driver/elf_file.hpp"

#include <cstdio>

#include "ptxrt/core/error.hpp"
#include "support/checked_size.hpp"

namespace ptxrt::detail {
namespace {

constexpr std::uint8_t kElfClass64 = 2;
constexpr std::uint8_t kElfLittleEndian = 1;
constexpr std::uint32_t kElfVersion = 1;
constexpr std::uint64_t kElfHeaderBytes = 64;
constexpr std::uint64_t kProgramHeaderBytes = 56;
constexpr std::uint64_t kSectionHeaderBytes = 64;
constexpr std::uint64_t kSymbolBytes = 24;
constexpr std::uint64_t kRelBytes = 16;
constexpr std::uint64_t kRelaBytes = 24;
constexpr std::uint64_t kNoteHeaderBytes = 12;
constexpr std::uint16_t kTypeRelocatable = 1;         // ET_REL
constexpr std::uint32_t kSectionProgramBits = 1;      // SHT_PROGBITS
constexpr std::uint32_t kSectionSymbolTable = 2;      // SHT_SYMTAB
constexpr std::uint32_t kSectionStringTable = 3;      // SHT_STRTAB
constexpr std::uint32_t kSectionRela = 4;             // SHT_RELA
constexpr std::uint32_t kSectionNote = 7;             // SHT_NOTE
constexpr std::uint32_t kSectionNoBits = 8;           // SHT_NOBITS: has a size but no file contents
constexpr std::uint32_t kSectionRel = 9;              // SHT_REL
constexpr std::uint32_t kSectionDynamicSymbols = 11;  // SHT_DYNSYM
constexpr std::uint32_t kSectionCudaInfo = 0x70000000;   // SHT_CUDA_INFO: .nv.info records
constexpr std::uint32_t kSectionCallGraph = 0x70000001;  // .nv.callgraph: caller, callee
constexpr std::uint32_t kSectionPrototype = 0x70000002;  // .nv.prototype: symbol, prototype
// .nv.global and .nv.shared.<kernel>: device memory with a size, like SHT_NOBITS, and no bytes
// in the file (their sh_offset points anywhere).
constexpr std::uint32_t kSectionCudaGlobal = 0x70000007;
constexpr std::uint32_t kSectionCudaShared = 0x7000000a;
// From sm_100: the Mercury copy of a kernel's code (.nv.capmerc.text.<kernel>) and the Mercury
// symbol table (.nv.merc.symtab), whose sh_info, like code's and a symbol table's, is a symbol's
// index (past the section count in a module of a few kernels).
constexpr std::uint32_t kSectionMercuryCode = 0x70000016;
constexpr std::uint32_t kSectionMercurySymbols = 0x70000085;
constexpr std::uint64_t kFlagExecutable = 0x4;  // SHF_EXECINSTR
constexpr std::uint64_t kFlagInfoLink = 0x40;   // SHF_INFO_LINK: sh_info is a section index
// Device code aligns sections to 128 bytes at most; nvJitLink fails to allocate for 2^40.
constexpr std::uint64_t kMaxAlignment = std::uint64_t{1} << 16;
constexpr std::uint16_t kFirstReservedIndex = 0xff00;  // SHN_LORESERVE: ABS, COMMON, ...
constexpr std::uint8_t kSymbolFunction = 2;            // STT_FUNC
constexpr std::uint8_t kOtherCudaEntry = 0x10;         // STO_CUDA_ENTRY in st_other
constexpr std::string_view kElfMagic =
    "\x7f"
    "ELF";

// .nv.info records: a format byte, an attribute id, then two bytes that hold the value (byte and
// half formats), nothing (no-value format) or the payload size (sized format).
enum class AttributeFormat : std::uint8_t { no_value = 1, byte = 2, half = 3, sized = 4 };

bool has_file_contents(std::uint32_t type, std::uint16_t machine) {
  if (type == kSectionNoBits) return false;
  return machine != elf_machine_cuda || (type != kSectionCudaGlobal && type != kSectionCudaShared);
}

// R_CUDA_NONE (0) ... R_CUDA_CONST_FIELD22_37 (115), as nvJitLink 13.0 lists them.
constexpr std::uint32_t kCudaRelocationTypes = 116;

// R_CUDA_FUNC_DESC*: the address of a function's descriptor, which nvJitLink looks up for the
// symbol (and crashes on when it names no function).
bool is_function_descriptor(std::uint32_t type) {
  return (type >= 31 && type <= 35) || (type >= 47 && type <= 49) || (type >= 61 && type <= 63) ||
         (type >= 92 && type <= 99);
}

bool is_symbol_table(std::uint32_t type) {
  return type == kSectionSymbolTable || type == kSectionDynamicSymbols;
}

std::string hex(std::uint32_t value) {
  char text[9];
  std::snprintf(text, sizeof text, "%08x", value);
  return text;
}

std::uint64_t aligned_to_4(std::uint64_t bytes) { return (bytes + 3) & ~std::uint64_t{3}; }

}  // namespace

void malformed_cubin(const std::string& what) {
  throw Error(ErrorKind::invalid_argument, "malformed CUBIN: " + what);
}

std::uint64_t read_little_endian(std::string_view bytes, std::uint64_t offset, std::size_t width,
                                 std::string_view what) {
  if (!range_inside(offset, width, bytes.size())) {
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

ElfFile::ElfFile(std::string_view bytes, ElfMachine machine) : bytes_(bytes) {
  check_header(machine);
  check_program_headers();
  read_sections();
  check_section_links();
  if (machine_ == elf_machine_cuda) {
    check_section_roles();
    check_debug_level();
  }
  read_symbols();
  for (const ElfSection& section : sections_) {
    if (section.type == kSectionRel || section.type == kSectionRela) check_relocations(section);
    if (section.type == kSectionNote) check_notes(section);
    if (machine_ != elf_machine_cuda) continue;
    if (section.type == kSectionCudaInfo) check_attribute_symbols(section);
    if (section.type == kSectionCallGraph || section.type == kSectionPrototype)
      check_symbol_pairs(section);
  }
}

const ElfSection* ElfFile::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &sections_[it->second];
}

std::vector<ElfEntry> ElfFile::entries() const {
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

void ElfFile::malformed(const std::string& what) const {
  throw Error(
      ErrorKind::invalid_argument,
      std::string(machine_ == elf_machine_cuda ? "malformed CUBIN: " : "malformed ELF: ") + what);
}

std::string ElfFile::describe(std::size_t index) const {
  std::string text = "section " + std::to_string(index);
  if (index < sections_.size() && !sections_[index].name.empty())
    text += " (" + std::string(sections_[index].name) + ")";
  return text;
}

void ElfFile::check_header(ElfMachine machine) {
  if (machine == ElfMachine::cuda) machine_ = elf_machine_cuda;  // names the file in messages
  if (bytes_.size() < kElfHeaderBytes)
    malformed(std::to_string(bytes_.size()) + " bytes is shorter than an ELF header (64)");
  if (!looks_like_elf(bytes_)) malformed("no ELF magic number");
  const auto elf_class = read_le<std::uint8_t>(bytes_, 4, "ELF class");
  const auto encoding = read_le<std::uint8_t>(bytes_, 5, "ELF data encoding");
  if (elf_class != kElfClass64 || encoding != kElfLittleEndian)
    malformed("ELF class " + std::to_string(elf_class) + ", encoding " + std::to_string(encoding) +
              "; device code is 64-bit (2) little-endian (1)");
  const auto identity_version = read_le<std::uint8_t>(bytes_, 6, "EI_VERSION");
  const auto version = read_le<std::uint32_t>(bytes_, 0x14, "e_version");
  if (identity_version != kElfVersion || version != kElfVersion)
    malformed("ELF version " + std::to_string(identity_version) + " (e_ident), " +
              std::to_string(version) + " (e_version); only version 1 exists");
  const auto found_machine = read_le<std::uint16_t>(bytes_, 0x12, "e_machine");
  if (machine == ElfMachine::cuda && found_machine != elf_machine_cuda)
    malformed("e_machine " + std::to_string(found_machine) + " is not EM_CUDA (190)");
  machine_ = found_machine;
  const auto header_bytes = read_le<std::uint16_t>(bytes_, 0x34, "e_ehsize");
  if (header_bytes != kElfHeaderBytes)
    malformed("ELF header size (e_ehsize) " + std::to_string(header_bytes) + " is not 64");
  flags_ = read_le<std::uint32_t>(bytes_, 0x30, "e_flags");
  relocatable_ = read_le<std::uint16_t>(bytes_, 0x10, "e_type") == kTypeRelocatable;
}

void ElfFile::check_program_headers() {
  const auto table = read_le<std::uint64_t>(bytes_, 0x20, "e_phoff");
  const auto entry_bytes = read_le<std::uint16_t>(bytes_, 0x36, "e_phentsize");
  const auto count = read_le<std::uint16_t>(bytes_, 0x38, "e_phnum");
  if (count == 0) return;
  if (entry_bytes != kProgramHeaderBytes)
    malformed("program header size (e_phentsize) " + std::to_string(entry_bytes) + " is not 56");
  if (!range_inside(table, count * kProgramHeaderBytes, bytes_.size()))
    malformed("program header table (" + std::to_string(count) + " x 56 bytes at offset " +
              std::to_string(table) + ") runs past the end (" + std::to_string(bytes_.size()) +
              " bytes)");
  for (std::uint64_t index = 0; index < count; ++index) {
    const std::uint64_t header = table + index * kProgramHeaderBytes;
    const auto offset = read_le<std::uint64_t>(bytes_, header + 0x08, "p_offset");
    const auto size = read_le<std::uint64_t>(bytes_, header + 0x20, "p_filesz");
    if (!range_inside(offset, size, bytes_.size()))
      malformed("segment " + std::to_string(index) + " at offset " + std::to_string(offset) +
                " + " + std::to_string(size) + " bytes runs past the end (" +
                std::to_string(bytes_.size()) + " bytes)");
  }
}

void ElfFile::read_sections() {
  const auto table = read_le<std::uint64_t>(bytes_, 0x28, "e_shoff");
  const auto entry_bytes = read_le<std::uint16_t>(bytes_, 0x3a, "e_shentsize");
  const auto count = read_le<std::uint16_t>(bytes_, 0x3c, "e_shnum");
  const auto names_index = read_le<std::uint16_t>(bytes_, 0x3e, "e_shstrndx");
  if (count == 0) malformed("no section header table (e_shnum is 0)");
  if (entry_bytes != kSectionHeaderBytes)
    malformed("section header size (e_shentsize) " + std::to_string(entry_bytes) + " is not 64");
  if (!range_inside(table, count * kSectionHeaderBytes, bytes_.size()))
    malformed("section header table (" + std::to_string(count) + " x 64 bytes at offset " +
              std::to_string(table) + ") runs past the end (" + std::to_string(bytes_.size()) +
              " bytes)");
  if (names_index >= count)
    malformed("section name table index (e_shstrndx) " + std::to_string(names_index) +
              " is not below the " + std::to_string(count) + " sections");
  std::vector<std::uint32_t> name_offsets;
  std::vector<std::uint64_t> offsets;
  std::vector<std::uint64_t> alignments;
  for (std::uint64_t index = 0; index < count; ++index) {
    const std::uint64_t header = table + index * kSectionHeaderBytes;
    ElfSection section;
    name_offsets.push_back(read_le<std::uint32_t>(bytes_, header, "sh_name"));
    section.type = read_le<std::uint32_t>(bytes_, header + 0x04, "sh_type");
    section.flags = read_le<std::uint64_t>(bytes_, header + 0x08, "sh_flags");
    offsets.push_back(read_le<std::uint64_t>(bytes_, header + 0x18, "sh_offset"));
    section.size = read_le<std::uint64_t>(bytes_, header + 0x20, "sh_size");
    section.link = read_le<std::uint32_t>(bytes_, header + 0x28, "sh_link");
    section.info = read_le<std::uint32_t>(bytes_, header + 0x2c, "sh_info");
    alignments.push_back(read_le<std::uint64_t>(bytes_, header + 0x30, "sh_addralign"));
    section.entry_size = read_le<std::uint64_t>(bytes_, header + 0x38, "sh_entsize");
    sections_.push_back(section);
  }
  // The names first, so that every later message can say which section is at fault.
  read_contents(names_index, offsets[names_index]);
  const std::string_view names = sections_[names_index].contents;
  if (sections_[names_index].type != kSectionStringTable)
    malformed("section name table (section " + std::to_string(names_index) + ") has type " +
              std::to_string(sections_[names_index].type) + ", not a string table (3)");
  for (std::size_t index = 0; index < sections_.size(); ++index) {
    if (name_offsets[index] >= names.size())
      malformed("section " + std::to_string(index) + "'s name offset " +
                std::to_string(name_offsets[index]) + " is past the section name table (" +
                std::to_string(names.size()) + " bytes)");
    sections_[index].name = names.substr(name_offsets[index]).data();
    by_name_.emplace(sections_[index].name, index);
  }
  for (std::size_t index = 0; index < sections_.size(); ++index) {
    read_contents(index, offsets[index]);
    const std::uint64_t alignment = alignments[index];
    const bool cuda = machine_ == elf_machine_cuda;
    if ((alignment & (alignment - 1)) != 0 || (cuda && alignment > kMaxAlignment))
      malformed(describe(index) + " is aligned to " + std::to_string(alignment) +
                " bytes, not a power of two" + (cuda ? " up to 65536" : ""));
  }
}

// Checks that section `index` lies inside the file and takes its contents from there.
void ElfFile::read_contents(std::size_t index, std::uint64_t offset) {
  ElfSection& section = sections_[index];
  if (!has_file_contents(section.type, machine_)) return;
  if (!range_inside(offset, section.size, bytes_.size()))
    malformed(describe(index) + " at offset " + std::to_string(offset) + " + " +
              std::to_string(section.size) + " bytes runs past the end (" +
              std::to_string(bytes_.size()) + " bytes)");
  section.contents = bytes_.substr(offset, section.size);
  if (section.type == kSectionStringTable && !section.contents.empty() &&
      section.contents.back() != '\0')
    malformed("string table " + describe(index) + " does not end with a NUL");
}

void ElfFile::check_section_links() const {
  const std::size_t count = sections_.size();
  for (std::size_t index = 0; index < count; ++index) {
    const ElfSection& section = sections_[index];
    if (section.link >= count)
      malformed(describe(index) + " links to section " + std::to_string(section.link) +
                ", but there are " + std::to_string(count) + " sections");
    const bool relocations = section.type == kSectionRel || section.type == kSectionRela;
    // In a CUBIN every sh_info but the symbol tables' and code's (checked with the symbols) is a
    // section index or 0: nvJitLink follows others and crashes past the sections. In other ELF
    // files, that of relocations and SHF_INFO_LINK sections. Relocations' is one whatever their
    // flags say: it is followed to the section they apply to.
    const bool symbol_index = is_symbol_table(section.type) ||
                              section.type == kSectionMercurySymbols ||
                              section.type == kSectionMercuryCode ||
                              (section.flags & kFlagExecutable) != 0;
    const bool info_is_section =
        relocations || (machine_ == elf_machine_cuda ? !symbol_index
                                                     : (section.flags & kFlagInfoLink) != 0);
    if (info_is_section && section.info >= count)
      malformed(describe(index) + " refers (sh_info) to section " + std::to_string(section.info) +
                ", but there are " + std::to_string(count) + " sections");
    std::uint64_t wanted_entry = 0;
    if (is_symbol_table(section.type)) wanted_entry = kSymbolBytes;
    if (section.type == kSectionRel) wanted_entry = kRelBytes;
    if (section.type == kSectionRela) wanted_entry = kRelaBytes;
    if (wanted_entry != 0 && section.entry_size != wanted_entry)
      malformed(describe(index) + " has entries of " + std::to_string(section.entry_size) +
                " bytes, not " + std::to_string(wanted_entry));
    if (has_file_contents(section.type, machine_) && section.entry_size != 0 &&
        section.size % section.entry_size != 0)
      malformed(describe(index) + " of " + std::to_string(section.size) +
                " bytes is not a whole number of its " + std::to_string(section.entry_size) +
                "-byte entries");
    const std::uint32_t linked_type = sections_[section.link].type;
    if (is_symbol_table(section.type) && linked_type != kSectionStringTable)
      malformed("symbol table " + describe(index) + " links to " + describe(section.link) +
                ", which is not a string table");
    if (relocations && !is_symbol_table(linked_type))
      malformed("relocations " + describe(index) + " link to " + describe(section.link) +
                ", which is not a symbol table");
  }
}

void ElfFile::read_symbols() {
  std::size_t table_index = sections_.size();
  for (std::size_t index = 0; index < sections_.size(); ++index) {
    if (sections_[index].type != kSectionSymbolTable) continue;
    if (table_index != sections_.size())
      malformed("two symbol tables: " + describe(table_index) + " and " + describe(index));
    table_index = index;
  }
  if (table_index == sections_.size()) {
    if (machine_ == elf_machine_cuda) malformed("no symbol table");
    return;
  }
  const ElfSection& table = sections_[table_index];
  const std::string_view names = sections_[table.link].contents;
  const std::uint64_t count = table.size / kSymbolBytes;
  if (table.info > count)
    malformed("symbol table " + describe(table_index) + " says its globals start at symbol " +
              std::to_string(table.info) + " of " + std::to_string(count));
  for (std::uint64_t index = 0; index < count; ++index) {
    const std::string_view entry = table.contents.substr(index * kSymbolBytes, kSymbolBytes);
    const auto name_offset = read_le<std::uint32_t>(entry, 0, "st_name");
    if (name_offset >= names.size())
      malformed("symbol " + std::to_string(index) + "'s name offset " +
                std::to_string(name_offset) + " is past its string table (" +
                std::to_string(names.size()) + " bytes)");
    ElfSymbol symbol;
    symbol.name = names.substr(name_offset).data();
    const auto info = read_le<std::uint8_t>(entry, 4, "st_info");
    symbol.type = info & 0x0f;
    symbol.binding = info >> 4;
    symbol.entry = (read_le<std::uint8_t>(entry, 5, "st_other") & kOtherCudaEntry) != 0;
    symbol.section = read_le<std::uint16_t>(entry, 6, "st_shndx");
    symbol.size = read_le<std::uint64_t>(entry, 16, "st_size");
    if (symbol.section >= sections_.size() && symbol.section < kFirstReservedIndex)
      malformed("symbol " + std::to_string(index) + " (" + std::string(symbol.name) +
                ") is in section " + std::to_string(symbol.section) + ", but there are " +
                std::to_string(sections_.size()) + " sections");
    symbols_.push_back(symbol);
  }
  if (machine_ != elf_machine_cuda) return;
  // ptxas keeps a code section's symbol in the low 24 bits of its sh_info (registers above).
  for (std::size_t index = 0; index < sections_.size(); ++index) {
    const ElfSection& section = sections_[index];
    if ((section.flags & kFlagExecutable) != 0 && (section.info & 0xffffff) >= count)
      malformed("code " + describe(index) + " refers (sh_info) to symbol " +
                std::to_string(section.info & 0xffffff) + ", but there are " +
                std::to_string(count));
  }
}

void ElfFile::check_relocations(const ElfSection& relocations) const {
  const std::uint64_t entry_bytes = relocations.entry_size;
  const std::uint64_t symbols = sections_[relocations.link].size / kSymbolBytes;
  const ElfSection& target = sections_[relocations.info];
  const std::string where = "relocation section " + std::string(relocations.name);
  for (std::uint64_t index = 0; index < relocations.size / entry_bytes; ++index) {
    const std::string_view entry = relocations.contents.substr(index * entry_bytes, entry_bytes);
    const auto offset = read_le<std::uint64_t>(entry, 0, "r_offset");
    const auto info = read_le<std::uint64_t>(entry, 8, "r_info");
    const std::uint64_t symbol = info >> 32;
    const auto type = static_cast<std::uint32_t>(info);
    const std::string relocation = where + ": relocation " + std::to_string(index);
    if (symbol >= symbols)
      malformed(relocation + " refers to symbol " + std::to_string(symbol) + ", but there are " +
                std::to_string(symbols));
    if (machine_ == elf_machine_cuda) {
      if (type >= kCudaRelocationTypes)
        malformed(relocation + " has type " + std::to_string(type) +
                  ", which no CUDA 13 tool knows (R_CUDA_* end at 115)");
      if (is_function_descriptor(type) &&
          (symbol >= symbols_.size() || symbols_[symbol].type != kSymbolFunction))
        malformed(relocation + " makes a function descriptor (type " + std::to_string(type) +
                  ") of symbol " + std::to_string(symbol) + ", which is not a function");
    }
    // Those of a host executable or library address memory, not a section; a CUBIN's sections
    // all start at address 0.
    const bool offset_in_section = relocatable_ || machine_ == elf_machine_cuda;
    if (offset_in_section && has_file_contents(target.type, machine_) && offset >= target.size)
      malformed(relocation + " at offset " + std::to_string(offset) + " is outside " +
                describe(relocations.info) + " (" + std::to_string(target.size) + " bytes)");
  }
}

void ElfFile::check_notes(const ElfSection& notes) const {
  std::string_view rest = notes.contents;
  while (!rest.empty()) {
    const std::string where = "note at offset " + std::to_string(notes.size - rest.size()) +
                              " of " + std::string(notes.name);
    if (rest.size() < kNoteHeaderBytes) malformed(where + " is cut short");
    const std::uint64_t name_bytes = aligned_to_4(read_le<std::uint32_t>(rest, 0, "n_namesz"));
    const std::uint64_t description_bytes = read_le<std::uint32_t>(rest, 4, "n_descsz");
    const std::uint64_t end = kNoteHeaderBytes + name_bytes + description_bytes;
    if (end > rest.size())
      malformed(where + " needs " + std::to_string(end) + " bytes, but " +
                std::to_string(rest.size()) + " are left");
    rest.remove_prefix(std::min<std::uint64_t>(aligned_to_4(end), rest.size()));
  }
}

namespace {

// The sections nvJitLink finds by name and reads as their type: a name with the wrong type (a
// note that is not SHT_NOTE, a code section without SHF_EXECINSTR) crashes it.
struct SectionRole {
  std::string_view name;
  bool prefix;  // the name starts with `name`
  std::uint32_t type;
  std::uint64_t flags = 0;  // that must be set
};

constexpr SectionRole kSectionRoles[] = {
    {".shstrtab", false, kSectionStringTable},
    {".strtab", false, kSectionStringTable},
    {".symtab", false, kSectionSymbolTable},
    {".rela", true, kSectionRela},
    {".rel.", true, kSectionRel},
    {".note", true, kSectionNote},
    {".nv.info", false, kSectionCudaInfo},
    {".nv.info.", true, kSectionCudaInfo},
    {".nv.callgraph", false, kSectionCallGraph},
    {".nv.prototype", false, kSectionPrototype},
    {".text.", true, kSectionProgramBits, kFlagExecutable},
    {".debug_", true, kSectionProgramBits},
};

}  // namespace

void ElfFile::check_section_roles() const {
  for (std::size_t index = 0; index < sections_.size(); ++index) {
    const ElfSection& section = sections_[index];
    for (const SectionRole& role : kSectionRoles) {
      const bool named =
          role.prefix ? section.name.starts_with(role.name) : section.name == role.name;
      if (!named) continue;
      if (section.type != role.type || (section.flags & role.flags) != role.flags)
        malformed(describe(index) + " has type " + std::to_string(section.type) + " and flags " +
                  std::to_string(section.flags) + "; a section of that name has type " +
                  std::to_string(role.type) +
                  (role.flags != 0 ? " and flags " + std::to_string(role.flags) : ""));
      break;
    }
    // Relocations are named after the section they apply to, which ptxas always gives them.
    if (section.type == kSectionRel || section.type == kSectionRela) {
      const std::string_view prefix = section.type == kSectionRela ? ".rela" : ".rel";
      if (!section.name.starts_with(prefix) ||
          section.name.substr(prefix.size()) != sections_[section.info].name)
        malformed("relocations " + describe(index) + " apply (sh_info) to " +
                  describe(section.info) + ", not to the section they are named after");
    }
  }
}

// In ELF ABI 8 (CUDA 13) the top byte of e_flags says how ptxas built the code, and nvJitLink
// trusts it to say which debug sections there are: it crashes when they are not. The values are
// every one CUDA 13's ptxas writes for sm_75 ... sm_121, each checked against the sections it
// comes with; NVIDIA does not document them.
void ElfFile::check_debug_level() const {
  constexpr std::uint8_t elf_abi_with_debug_level = 8;
  if (read_le<std::uint8_t>(bytes_, 8, "EI_ABIVERSION") != elf_abi_with_debug_level) return;
  const bool debug_info = find(".debug_info") != nullptr;
  const bool line_table = find(".debug_line") != nullptr || find(".nv_debug_line_sass") != nullptr;
  const unsigned level = flags_ >> 24;
  bool matches = false;
  switch (level) {
    case 0x06:  // optimised, no debug information
      matches = !debug_info && !line_table;
      break;
    case 0x09:  // -lineinfo
    case 0x0a:
      matches = !debug_info && line_table;
      break;
    case 0x0f:  // -G
    case 0x10:
      matches = debug_info;
      break;
    default:
      malformed("e_flags 0x" + hex(flags_) + " has a debug level (top byte) no ptxas writes");
  }
  if (!matches)
    malformed("e_flags 0x" + hex(flags_) + " gives a debug level that the sections contradict (" +
              (debug_info ? "" : "no ") + ".debug_info, " + (line_table ? "" : "no ") +
              "line table)");
}

// .nv.callgraph and .nv.prototype: pairs of symbol indices, where the call graph also marks its
// ends with -1 ... -4.
void ElfFile::check_symbol_pairs(const ElfSection& pairs) const {
  constexpr std::uint32_t first_marker = 0xfffffffc;
  for (std::uint64_t at = 0; at + 4 <= pairs.size; at += 4) {
    const auto symbol = read_le<std::uint32_t>(pairs.contents, at, "symbol index");
    if (symbol >= symbols_.size() && (pairs.type != kSectionCallGraph || symbol < first_marker))
      malformed(std::string(pairs.name) + " names symbol " + std::to_string(symbol) +
                " at offset " + std::to_string(at) + ", but there are " +
                std::to_string(symbols_.size()));
  }
}

// The .nv.info records that name symbols, by index: the module-wide ones per function, a
// kernel's parameter bank and parameters, and the symbols it takes from other modules.
void ElfFile::check_attribute_symbols(const ElfSection& attributes) const {
  for (const ElfAttribute& attribute : read_attributes(attributes)) {
    std::uint64_t symbol_words = 0;
    switch (attribute.id) {
      case AttributeId::frame_size:
      case AttributeId::min_stack_size:
      case AttributeId::max_stack_size:
      case AttributeId::register_count:
      case AttributeId::param_cbank:
      case AttributeId::kparam_info:
      case AttributeId::kparam_info_v2:
        symbol_words = attribute.payload.empty() ? 0 : 1;
        break;
      case AttributeId::externs:
        symbol_words = attribute.payload.size() / 4;
        break;
      default:
        break;
    }
    for (std::uint64_t word = 0; word < symbol_words; ++word) {
      const auto symbol = read_le<std::uint32_t>(attribute.payload, word * 4, "attribute symbol");
      if (symbol >= symbols_.size())
        malformed("attribute " + std::to_string(static_cast<int>(attribute.id)) + " in " +
                  std::string(attributes.name) + " names symbol " + std::to_string(symbol) +
                  ", but there are " + std::to_string(symbols_.size()));
    }
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
        if (!range_inside(at, value, records.size())) {
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
