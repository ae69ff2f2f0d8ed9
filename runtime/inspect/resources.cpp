#include "ptxrt/resources.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>

#include "ptxrt/error.hpp"

namespace ptxrt {
namespace {

// The layout of a CUBIN, as CUDA 13.0's ptxas writes it for sm_75 ... sm_121. Every id and size
// below was checked against `cuobjdump -elf` and `-res-usage` on kernels built to exercise it;
// NVIDIA does not document them.
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

// .nv.info records: a format byte, an attribute id, then two bytes that hold the value (byte and
// half formats), nothing (no-value format) or the payload size (sized format).
enum class AttributeFormat : std::uint8_t { no_value = 1, byte = 2, half = 3, sized = 4 };
enum class AttributeId : std::uint8_t {
  max_threads = 0x05,     // EIATTR_MAX_THREADS: x, y, z of .maxntid
  frame_size = 0x11,      // EIATTR_FRAME_SIZE: symbol, bytes (in the module-wide .nv.info)
  min_stack_size = 0x12,  // EIATTR_MIN_STACK_SIZE: symbol, bytes, callees included
  param_bytes = 0x19,     // EIATTR_CBANK_PARAM_SIZE
  register_count = 0x2f,  // EIATTR_REGCOUNT: symbol, registers
  barrier_count = 0x4c,   // EIATTR_NUM_BARRIERS
};

// With CUDA 13 the sm_90+ shared window starts with the system's per-block reserve, and each
// kernel's .nv.shared section covers it; the module then has a .nv.shared.reserved.* section.
constexpr std::size_t kReservedSharedInElf = 1024;
constexpr std::string_view kReservedSharedPrefix = ".nv.shared.reserved.";

[[noreturn]] void malformed(const std::string& what) {
  throw Error(ErrorKind::invalid_argument, "malformed CUBIN: " + what);
}

bool fits(std::uint64_t offset, std::uint64_t size, std::uint64_t total) {
  return offset <= total && size <= total - offset;
}

// Little-endian unsigned read, bounds-checked against `bytes`.
template <typename T>
T read_le(std::string_view bytes, std::uint64_t offset, std::string_view what) {
  if (!fits(offset, sizeof(T), bytes.size())) {
    malformed(std::string(what) + " at offset " + std::to_string(offset) + " needs " +
              std::to_string(sizeof(T)) + " bytes, but only " + std::to_string(bytes.size()) +
              " are there");
  }
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    value |= std::uint64_t{static_cast<unsigned char>(bytes[offset + i])} << (8 * i);
  }
  return static_cast<T>(value);
}

std::string_view c_string_at(std::string_view table, std::uint64_t offset, std::string_view what) {
  if (offset >= table.size()) {
    malformed(std::string(what) + " name offset " + std::to_string(offset) +
              " is past its string table of " + std::to_string(table.size()) + " bytes");
  }
  std::string_view rest = table.substr(offset);
  std::size_t end = rest.find('\0');
  if (end == std::string_view::npos) malformed(std::string(what) + " name is not NUL-terminated");
  return rest.substr(0, end);
}

struct Section {
  std::string_view name;
  std::uint32_t type = 0;
  std::uint32_t info = 0;
  std::uint32_t link = 0;
  std::uint64_t size = 0;
  std::string_view contents;  // empty for NOBITS
};

struct Symbol {
  std::string_view name;
  std::uint8_t type = 0;
  bool entry = false;  // STO_CUDA_ENTRY: a kernel, not a device function
  std::uint16_t section = 0;
};

struct Attribute {
  AttributeId id;
  std::uint16_t value;       // byte and half formats
  std::string_view payload;  // sized format
};

class Elf {
 public:
  explicit Elf(std::string_view bytes) : bytes_(bytes) {
    check_header();
    read_sections();
    read_symbols();
  }

  int sm() const { return static_cast<int>((flags_ >> 8) & 0xff); }
  const std::vector<Section>& sections() const { return sections_; }
  const std::vector<Symbol>& symbols() const { return symbols_; }
  const Section* find(std::string_view name) const {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : &sections_[it->second];
  }

 private:
  void check_header() {
    if (bytes_.size() < kElfHeaderBytes) {
      malformed(std::to_string(bytes_.size()) + " bytes is shorter than an ELF header (64)");
    }
    if (bytes_.substr(0, 4) !=
        "\x7f"
        "ELF")
      malformed("no ELF magic number");
    auto elf_class = read_le<std::uint8_t>(bytes_, 4, "ELF class");
    auto encoding = read_le<std::uint8_t>(bytes_, 5, "ELF data encoding");
    if (elf_class != kElfClass64 || encoding != kElfLittleEndian) {
      malformed("ELF class " + std::to_string(elf_class) + ", encoding " +
                std::to_string(encoding) + "; a CUBIN is 64-bit (2) little-endian (1)");
    }
    auto machine = read_le<std::uint16_t>(bytes_, 0x12, "e_machine");
    if (machine != kMachineCuda) {
      malformed("e_machine " + std::to_string(machine) + " is not EM_CUDA (190)");
    }
    flags_ = read_le<std::uint32_t>(bytes_, 0x30, "e_flags");
    // Unused here, but a program header table that runs off the end means a truncated file.
    auto program_headers = read_le<std::uint64_t>(bytes_, 0x20, "e_phoff");
    auto program_header_size = read_le<std::uint16_t>(bytes_, 0x36, "e_phentsize");
    auto program_header_count = read_le<std::uint16_t>(bytes_, 0x38, "e_phnum");
    std::uint64_t table_bytes = std::uint64_t{program_header_count} * program_header_size;
    if (!fits(program_headers, table_bytes, bytes_.size())) {
      malformed("program header table (" + std::to_string(table_bytes) + " bytes at offset " +
                std::to_string(program_headers) + ") runs past the end of the " +
                std::to_string(bytes_.size()) + "-byte file");
    }
  }

  void read_sections() {
    auto table = read_le<std::uint64_t>(bytes_, 0x28, "e_shoff");
    auto entry_size = read_le<std::uint16_t>(bytes_, 0x3a, "e_shentsize");
    auto count = read_le<std::uint16_t>(bytes_, 0x3c, "e_shnum");
    auto names_index = read_le<std::uint16_t>(bytes_, 0x3e, "e_shstrndx");
    if (count == 0) malformed("no section headers");
    if (entry_size < kSectionHeaderBytes) {
      malformed("section header size " + std::to_string(entry_size) + " is below 64");
    }
    if (!fits(table, std::uint64_t{count} * entry_size, bytes_.size())) {
      malformed("section header table (" + std::to_string(count) + " x " +
                std::to_string(entry_size) + " bytes at offset " + std::to_string(table) +
                ") runs past the end of the " + std::to_string(bytes_.size()) + "-byte file");
    }
    if (names_index >= count) {
      malformed("section name table index " + std::to_string(names_index) + " is not below " +
                std::to_string(count) + " sections");
    }
    std::vector<std::uint32_t> name_offsets;
    for (std::uint64_t i = 0; i < count; ++i) {
      std::uint64_t header = table + i * entry_size;
      Section section;
      name_offsets.push_back(read_le<std::uint32_t>(bytes_, header, "sh_name"));
      section.type = read_le<std::uint32_t>(bytes_, header + 0x04, "sh_type");
      auto offset = read_le<std::uint64_t>(bytes_, header + 0x18, "sh_offset");
      section.size = read_le<std::uint64_t>(bytes_, header + 0x20, "sh_size");
      section.link = read_le<std::uint32_t>(bytes_, header + 0x28, "sh_link");
      section.info = read_le<std::uint32_t>(bytes_, header + 0x2c, "sh_info");
      if (section.type != kSectionNoBits) {
        if (!fits(offset, section.size, bytes_.size())) {
          malformed("section " + std::to_string(i) + " (" + std::to_string(section.size) +
                    " bytes at offset " + std::to_string(offset) + ") runs past the end of the " +
                    std::to_string(bytes_.size()) + "-byte file");
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

  void read_symbols() {
    const Section* table = nullptr;
    for (const Section& section : sections_) {
      if (section.type == kSectionSymbolTable) table = &section;
    }
    if (!table) malformed("no symbol table");
    if (table->link >= sections_.size()) {
      malformed("symbol table links to string table " + std::to_string(table->link) +
                ", but there are " + std::to_string(sections_.size()) + " sections");
    }
    std::string_view names = sections_[table->link].contents;
    std::string_view entries = table->contents;
    for (std::uint64_t at = 0; at + kSymbolBytes <= entries.size(); at += kSymbolBytes) {
      Symbol symbol;
      symbol.name = c_string_at(names, read_le<std::uint32_t>(entries, at, "st_name"), "symbol");
      symbol.type = read_le<std::uint8_t>(entries, at + 4, "st_info") & 0x0f;
      symbol.entry = (read_le<std::uint8_t>(entries, at + 5, "st_other") & kOtherCudaEntry) != 0;
      symbol.section = read_le<std::uint16_t>(entries, at + 6, "st_shndx");
      symbols_.push_back(symbol);
    }
  }

  std::string_view bytes_;
  std::uint32_t flags_ = 0;
  std::vector<Section> sections_;
  std::vector<Symbol> symbols_;
  std::map<std::string_view, std::size_t> by_name_;
};

std::vector<Attribute> read_attributes(const Section& section) {
  std::string what = "attribute record in " + std::string(section.name);
  std::string_view records = section.contents;
  std::vector<Attribute> attributes;
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
          malformed(what + " at offset " + std::to_string(at - 4) + " claims " +
                    std::to_string(value) + " bytes, but the section has " +
                    std::to_string(records.size() - at) + " left");
        }
        attributes.push_back({id, 0, records.substr(at, value)});
        at += value;
        break;
      default:
        malformed(what + " at offset " + std::to_string(at - 4) + " has unknown format " +
                  std::to_string(static_cast<int>(format)));
    }
  }
  return attributes;
}

// The module-wide .nv.info holds per-function values keyed by symbol index.
void apply_module_attributes(const Section& section,
                             const std::unordered_map<std::uint32_t, std::size_t>& by_symbol,
                             std::vector<KernelResources>& kernels) {
  for (const Attribute& attribute : read_attributes(section)) {
    if (attribute.payload.empty()) continue;
    auto symbol = read_le<std::uint32_t>(attribute.payload, 0, "function attribute symbol");
    auto value = read_le<std::uint32_t>(attribute.payload, 4, "function attribute value");
    auto kernel = by_symbol.find(symbol);
    if (kernel == by_symbol.end()) continue;  // a device function's, not an entry's
    KernelResources& resources = kernels[kernel->second];
    switch (attribute.id) {
      case AttributeId::register_count:
        resources.registers = static_cast<int>(value);
        break;
      case AttributeId::frame_size:
        resources.stack_frame_bytes = value;
        break;
      case AttributeId::min_stack_size:
        resources.cumulative_stack_bytes = value;
        break;
      default:
        break;
    }
  }
}

int block_bound(std::string_view payload) {
  std::uint64_t threads = 1;
  for (std::uint64_t at = 0; at < 12; at += 4) {
    threads *= read_le<std::uint32_t>(payload, at, "EIATTR_MAX_THREADS");
  }
  if (threads > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
    malformed("EIATTR_MAX_THREADS of " + std::to_string(threads) + " threads");
  }
  return static_cast<int>(threads);
}

void apply_kernel_attributes(const Section& section, KernelResources& resources) {
  for (const Attribute& attribute : read_attributes(section)) {
    switch (attribute.id) {
      case AttributeId::barrier_count:
        resources.barriers = attribute.value & 0xff;
        break;
      case AttributeId::param_bytes:
        resources.param_bytes = attribute.value;
        break;
      case AttributeId::max_threads:
        resources.max_threads_per_block = block_bound(attribute.payload);
        break;
      default:
        break;
    }
  }
}

bool lays_out_reserved_shared(const Elf& elf) {
  for (const Section& section : elf.sections()) {
    if (section.name.starts_with(kReservedSharedPrefix)) return true;
  }
  return false;
}

std::size_t user_constant_bytes(const Elf& elf) {
  std::size_t bytes = 0;
  for (std::string_view bank : {".nv.constant2", ".nv.constant3"}) {
    if (const Section* section = elf.find(bank)) bytes += section->size;
  }
  return bytes;
}

void apply_sections(const Elf& elf, KernelResources& resources, const Section& text) {
  std::string name(resources.name);
  // Before sm_90 ptxas also kept the register count in the top byte of the code section's info.
  resources.registers = static_cast<int>(text.info >> 24);
  if (const Section* info = elf.find(".nv.info." + name)) apply_kernel_attributes(*info, resources);
  if (const Section* bank = elf.find(".nv.constant0." + name))
    resources.param_bank_bytes = bank->size;
  if (const Section* shared = elf.find(".nv.shared." + name)) {
    std::size_t reserved = lays_out_reserved_shared(elf) ? kReservedSharedInElf : 0;
    resources.reserved_shared_bytes = std::min<std::size_t>(reserved, shared->size);
    resources.static_shared_bytes = shared->size - resources.reserved_shared_bytes;
  }
}

// Parses "N unit" out of one comma-separated item of a ptxas line; false when there is no number.
bool parse_item(std::string_view item, std::size_t& value, std::string_view& unit) {
  std::size_t digit = item.find_first_of("0123456789");
  if (digit == std::string_view::npos) return false;
  const char* end = item.data() + item.size();
  auto [rest, error] = std::from_chars(item.data() + digit, end, value);
  if (error != std::errc{}) return false;
  unit = std::string_view(rest, static_cast<std::size_t>(end - rest));
  while (!unit.empty() && (unit.front() == ' ')) unit.remove_prefix(1);
  while (!unit.empty() && (unit.back() == ' ' || unit.back() == '\r')) unit.remove_suffix(1);
  return true;
}

void apply_log_items(std::string_view line, KernelResources& resources) {
  while (!line.empty()) {
    std::size_t comma = line.find(',');
    std::string_view item = line.substr(0, comma);
    line = comma == std::string_view::npos ? std::string_view{} : line.substr(comma + 1);
    std::size_t value = 0;
    std::string_view unit;
    if (!parse_item(item, value, unit)) continue;
    if (unit == "registers")
      resources.registers = static_cast<int>(value);
    else if (unit == "barriers")
      resources.barriers = static_cast<int>(value);
    else if (unit == "bytes smem")
      resources.static_shared_bytes = value;
    else if (unit == "bytes cmem[0]")
      resources.param_bank_bytes = value;
    else if (unit == "bytes stack frame")
      resources.stack_frame_bytes = value;
    else if (unit == "bytes cumulative stack size")
      resources.cumulative_stack_bytes = value;
    else if (unit == "bytes spill stores")
      resources.spill_store_bytes = value;
    else if (unit == "bytes spill loads")
      resources.spill_load_bytes = value;
  }
}

std::string_view quoted_after(std::string_view line, std::string_view marker) {
  std::size_t start = line.find(marker);
  if (start == std::string_view::npos) return {};
  std::string_view rest = line.substr(start + marker.size());
  return rest.substr(0, rest.find('\''));
}

int sm_of(std::string_view arch) {
  std::size_t underscore = arch.find('_');
  int sm = 0;
  if (underscore != std::string_view::npos) {
    std::from_chars(arch.data() + underscore + 1, arch.data() + arch.size(), sm);
  }
  return sm;
}

}  // namespace

std::vector<KernelResources> read_cubin_resources(std::string_view cubin) {
  Elf elf(cubin);
  std::vector<KernelResources> kernels;
  std::unordered_map<std::uint32_t, std::size_t> by_symbol;
  std::size_t constants = user_constant_bytes(elf);
  for (std::uint32_t index = 0; index < elf.symbols().size(); ++index) {
    const Symbol& symbol = elf.symbols()[index];
    // Relocatable device code keeps non-inlined device functions in .text sections of their own.
    if (symbol.type != kSymbolFunction || !symbol.entry || symbol.section >= elf.sections().size())
      continue;
    const Section& text = elf.sections()[symbol.section];
    if (!text.name.starts_with(".text.") || text.name.substr(6) != symbol.name) continue;
    KernelResources resources;
    resources.name = std::string(symbol.name);
    resources.sm = elf.sm();
    resources.user_constant_bytes = constants;
    apply_sections(elf, resources, text);
    by_symbol.emplace(index, kernels.size());
    kernels.push_back(std::move(resources));
  }
  if (const Section* info = elf.find(".nv.info"))
    apply_module_attributes(*info, by_symbol, kernels);
  return kernels;
}

std::vector<KernelResources> parse_ptxas_info(std::string_view log) {
  std::vector<KernelResources> entries;
  bool properties_of_entry = false;
  while (!log.empty()) {
    std::size_t newline = log.find('\n');
    std::string_view line = log.substr(0, newline);
    log = newline == std::string_view::npos ? std::string_view{} : log.substr(newline + 1);
    if (std::string_view name = quoted_after(line, "Compiling entry function '"); !name.empty()) {
      KernelResources entry;
      entry.name = std::string(name);
      entry.sm = sm_of(quoted_after(line, "' for '"));
      entries.push_back(std::move(entry));
      properties_of_entry = false;
    } else if (std::size_t at = line.find("Function properties for "); at != line.npos) {
      std::string_view function =
          line.substr(at + std::string_view("Function properties for ").size());
      while (!function.empty() && (function.back() == '\r' || function.back() == ' ')) {
        function.remove_suffix(1);
      }
      properties_of_entry = !entries.empty() && entries.back().name == function;
    } else if (line.find("bytes stack frame") != line.npos) {
      if (properties_of_entry) apply_log_items(line, entries.back());
    } else if (line.find("Used ") != line.npos && !entries.empty()) {
      apply_log_items(line.substr(line.find("Used ")), entries.back());
    }
  }
  return entries;
}

std::vector<KernelResources> merge(std::vector<KernelResources> from_cubin,
                                   const std::vector<KernelResources>& from_log) {
  std::unordered_map<std::string, std::size_t> by_name;
  for (std::size_t i = 0; i < from_cubin.size(); ++i) by_name.emplace(from_cubin[i].name, i);
  for (const KernelResources& logged : from_log) {
    auto found = by_name.find(logged.name);
    if (found == by_name.end()) {
      from_cubin.push_back(logged);
      continue;
    }
    from_cubin[found->second].spill_store_bytes = logged.spill_store_bytes;
    from_cubin[found->second].spill_load_bytes = logged.spill_load_bytes;
  }
  return from_cubin;
}

}  // namespace ptxrt
