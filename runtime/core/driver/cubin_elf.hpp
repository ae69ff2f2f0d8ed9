// Internal: the reader of CUBIN bytes (a 64-bit little-endian CUDA ELF) and of the .nv.info
// attribute records ptxas writes into it. It lives in the driver layer because loading needs it
// (a kernel's parameter layout comes from its .nv.info section, read where the module is loaded),
// and the resource report of runtime/inspect reads the same sections through it: one ELF reader.
// Needs no driver. Every read is bounds-checked; a defect throws Error(invalid_argument) whose
// message starts "malformed CUBIN: " and names it.
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
  frame_size = 0x11,      // EIATTR_FRAME_SIZE: symbol, bytes (in the module-wide .nv.info)
  min_stack_size = 0x12,  // EIATTR_MIN_STACK_SIZE: symbol, bytes, callees included
  kparam_info = 0x17,     // EIATTR_KPARAM_INFO: one parameter (below 16 KiB)
  param_bytes = 0x19,     // EIATTR_CBANK_PARAM_SIZE: the parameters' bytes
  register_count = 0x2f,  // EIATTR_REGCOUNT: symbol, registers
  kparam_info_v2 = 0x45,  // EIATTR_KPARAM_INFO_V2: one parameter, in kernels with one of 16 KiB+
  barrier_count = 0x4c,   // EIATTR_NUM_BARRIERS
};

struct ElfSection {
  std::string_view name;
  std::uint32_t type = 0;
  std::uint32_t info = 0;
  std::uint32_t link = 0;
  std::uint64_t size = 0;
  std::string_view contents;  // empty for NOBITS
};

struct ElfSymbol {
  std::string_view name;
  std::uint8_t type = 0;
  bool entry = false;  // STO_CUDA_ENTRY: a kernel, not a device function
  std::uint16_t section = 0;
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

// Views into the bytes it was given, which must outlive it.
class CubinElf {
 public:
  explicit CubinElf(std::string_view bytes);

  int sm() const { return static_cast<int>((flags_ >> 8) & 0xff); }
  const std::vector<ElfSection>& sections() const { return sections_; }
  const std::vector<ElfSymbol>& symbols() const { return symbols_; }
  const ElfSection* find(std::string_view name) const;
  std::vector<ElfEntry> entries() const;

 private:
  void check_header();
  void read_sections();
  void read_symbols();

  std::string_view bytes_;
  std::uint32_t flags_ = 0;
  std::vector<ElfSection> sections_;
  std::vector<ElfSymbol> symbols_;
  std::map<std::string_view, std::size_t> by_name_;
};

// Whether `bytes` start like an ELF file (the magic number only; CubinElf checks the rest).
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
