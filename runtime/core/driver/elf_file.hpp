// Internal: the one reader of ELF files in ptxrt: CUBINs (64-bit little-endian CUDA ELF, with the
// .nv.info attribute records ptxas writes) and the host objects nvcc -dc writes, which carry
// device code in a section. It lives in the driver layer because loading needs it (a kernel's
// parameter layout comes from its .nv.info section), the resource report reads the same sections
// through it, and the device-code check (check_device_code, driver/device_code.cpp) validates every
// ELF file it meets with it before a toolkit library sees the bytes.
//
// As LLVM's ELFFile does, the constructor checks everything before anything is read: the header,
// the program and section header tables, every section's extent, every name against its string
// table, the symbol and relocation tables' entry sizes and indices, notes and .nv.info records.
// A defect throws Error(invalid_argument) whose message starts "malformed CUBIN: " (or
// "malformed ELF: " for a host file) and names the field, its value and the limit it breaks.
// Needs no driver; views into the bytes it was given, which must outlive it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ptxrt::detail {

// .nv.info attribute ids (EIATTR_*), as CUDA 13.0's ptxas writes them for sm_75 ... sm_121. Every
// id and payload below was checked against kernels built to exercise it; NVIDIA does not document
// them.
enum class AttributeId : std::uint8_t {
  max_threads = 0x05,     // EIATTR_MAX_THREADS: x, y, z of .maxntid
  param_cbank = 0x0a,     // EIATTR_PARAM_CBANK: symbol, then the parameters' offset and size
  externs = 0x0f,         // EIATTR_EXTERNS: the symbols a kernel uses from other modules
  frame_size = 0x11,      // EIATTR_FRAME_SIZE: symbol, bytes (in the module-wide .nv.info)
  min_stack_size = 0x12,  // EIATTR_MIN_STACK_SIZE: symbol, bytes, callees included
  kparam_info = 0x17,     // EIATTR_KPARAM_INFO: one parameter (below 16 KiB)
  param_bytes = 0x19,     // EIATTR_CBANK_PARAM_SIZE: the parameters' bytes
  max_stack_size = 0x23,  // EIATTR_MAX_STACK_SIZE: symbol, bytes
  register_count = 0x2f,  // EIATTR_REGCOUNT: symbol, registers
  kparam_info_v2 = 0x45,  // EIATTR_KPARAM_INFO_V2: one parameter, in kernels with one of 16 KiB+
  barrier_count = 0x4c,   // EIATTR_NUM_BARRIERS
};

struct ElfSection {
  std::string_view name;
  std::uint32_t type = 0;
  std::uint64_t flags = 0;
  std::uint32_t info = 0;
  std::uint32_t link = 0;
  std::uint64_t size = 0;
  std::uint64_t entry_size = 0;
  std::string_view contents;  // empty for NOBITS, .nv.global and .nv.shared.<kernel>
};

struct ElfSymbol {
  std::string_view name;
  std::uint8_t type = 0;
  std::uint8_t binding = 0;
  bool entry = false;  // STO_CUDA_ENTRY: a kernel, not a device function
  std::uint16_t section = 0;
  std::uint64_t size = 0;
};

// One .nv.info record: byte and half formats carry `value`, the sized format a `payload`.
struct ElfAttribute {
  AttributeId id;
  std::uint16_t value;
  std::string_view payload;
};

// An entry point: a kernel's function symbol (STO_CUDA_ENTRY) whose code has a section of its own,
// ".text.<name>". Relocatable device code keeps non-inlined device functions in such sections too.
struct ElfEntry {
  std::uint32_t symbol_index = 0;
  std::string_view name;
  const ElfSection* text = nullptr;
};

// What an ElfFile must be: a CUBIN (e_machine EM_CUDA), or an ELF file for any machine (a host
// object that may carry device code).
enum class ElfMachine { cuda, any };

constexpr std::uint16_t elf_machine_cuda = 190;  // EM_CUDA

class ElfFile {
 public:
  explicit ElfFile(std::string_view bytes, ElfMachine machine = ElfMachine::cuda);

  std::uint16_t machine() const { return machine_; }
  // The SM a CUBIN is for (e_flags).
  int sm() const { return static_cast<int>((flags_ >> 8) & 0xff); }
  const std::vector<ElfSection>& sections() const { return sections_; }
  const std::vector<ElfSymbol>& symbols() const { return symbols_; }
  // The first section of that name; null when there is none.
  const ElfSection* find(std::string_view name) const;
  std::vector<ElfEntry> entries() const;

 private:
  [[noreturn]] void malformed(const std::string& what) const;
  void check_header(ElfMachine machine);
  void check_program_headers();
  void read_sections();
  void read_contents(std::size_t index, std::uint64_t offset);
  void check_section_links() const;
  void read_symbols();
  void check_relocations(const ElfSection& relocations) const;
  void check_notes(const ElfSection& notes) const;
  void check_section_roles() const;
  void check_debug_level() const;
  void check_attribute_symbols(const ElfSection& attributes) const;
  void check_symbol_pairs(const ElfSection& pairs) const;
  std::string describe(std::size_t index) const;

  std::string_view bytes_;
  std::uint16_t machine_ = 0;
  std::uint32_t flags_ = 0;
  bool relocatable_ = false;  // ET_REL: relocations address their section by offset
  std::vector<ElfSection> sections_;
  std::vector<ElfSymbol> symbols_;
  std::map<std::string_view, std::size_t> by_name_;
};

// Whether `bytes` start like an ELF file (the magic number only; ElfFile checks the rest).
bool looks_like_elf(std::string_view bytes);

// The records of a .nv.info or .nv.info.<kernel> section, in file order.
std::vector<ElfAttribute> read_attributes(const ElfSection& section);

[[noreturn]] void malformed_cubin(const std::string& what);

// Little-endian unsigned read at `offset`, bounds-checked against `bytes`; `what` names the field
// in the error.
std::uint64_t read_little_endian(std::string_view bytes, std::uint64_t offset, std::size_t width,
                                 std::string_view what);
template <typename T>
T read_le(std::string_view bytes, std::uint64_t offset, std::string_view what) {
  return static_cast<T>(read_little_endian(bytes, offset, sizeof(T), what));
}

}  // namespace ptxrt::detail
