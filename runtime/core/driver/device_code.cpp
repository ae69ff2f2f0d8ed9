#include "ptxrt/core/device_code.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "driver/archive_file.hpp"
#include "driver/elf_file.hpp"
#include "ptxrt/core/architecture.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/fatbin.hpp"
#include "support/checked_size.hpp"

namespace ptxrt {
namespace {

using detail::ElfFile;
using detail::ElfMachine;
using detail::range_inside;
using detail::read_le;

// LLVM bitcode, bare or in its wrapper (magic, version, offset, size, CPU type).
constexpr std::string_view bitcode_magic = "BC\xc0\xde";
constexpr std::uint32_t bitcode_wrapper_magic = 0x0B17C0DE;
constexpr std::uint64_t bitcode_wrapper_header_bytes = 20;
// The LTO-IR NVRTC (nvrtcGetLTOIR) and nvcc -dlto write: this magic, then a header whose u32 at
// 0x10 is where the encoded IR starts (0x28 in CUDA 13).
constexpr std::uint32_t ltoir_magic = 0x7F4E43ED;
constexpr std::uint64_t ltoir_header_bytes = 0x28;
// nvcc -dc puts its device code, fatbins, in one of these sections of a host object.
constexpr std::string_view device_sections[] = {"__nv_relfatbin", ".nv_fatbin"};

// Runs `check`; an Error it throws comes back with `where` before its message, so that the
// message leads from the file to the defect ("member bar.o: entry 1 (sm_90 CUBIN): ...").
template <class Check>
auto within(const std::string& where, Check&& check) {
  try {
    return check();
  } catch (const Error& error) {
    throw Error(error.kind(), where + ": " + error.what());
  }
}

[[noreturn]] void damaged(const std::string& what) {
  throw Error(ErrorKind::invalid_argument, what);
}

void add_architecture(std::vector<std::string>& architectures, std::string arch) {
  if (std::find(architectures.begin(), architectures.end(), arch) == architectures.end())
    architectures.push_back(std::move(arch));
}

std::uint32_t u32_at(std::string_view bytes, std::uint64_t offset) {
  return read_le<std::uint32_t>(bytes, offset, "magic number");
}

bool is_ltoir(std::string_view bytes) {
  if (bytes.starts_with(bitcode_magic)) return true;
  if (bytes.size() < 4) return false;
  return u32_at(bytes, 0) == ltoir_magic || u32_at(bytes, 0) == bitcode_wrapper_magic;
}

// PTX is text with a .version and a .target directive at the start of a line; NULs may only pad
// its end.
bool is_ptx(std::string_view bytes) {
  const std::string_view text = bytes.substr(0, bytes.find_last_not_of('\0') + 1);
  if (text.empty() || text.find('\0') != std::string_view::npos) return false;
  auto has_directive = [&](std::string_view directive) {
    for (std::size_t at = text.find(directive); at != std::string_view::npos;
         at = text.find(directive, at + 1)) {
      const std::size_t before =
          at == 0 ? std::string_view::npos : text.find_last_not_of(" \t", at - 1);
      if (at == 0 || before == std::string_view::npos || text[before] == '\n') return true;
    }
    return false;
  };
  return has_directive(".version") && has_directive(".target");
}

// "sm_90" of ".target sm_90, debug"; empty when there is no .target.
std::string ptx_target(std::string_view ptx) {
  const std::size_t at = ptx.find(".target");
  if (at == std::string_view::npos) return {};
  std::string_view rest = ptx.substr(at + 7);
  rest.remove_prefix(std::min(rest.find_first_not_of(" \t"), rest.size()));
  return std::string(rest.substr(0, rest.find_first_of(", \t\r\n")));
}

void check_ltoir(std::string_view bytes) {
  const std::string size = std::to_string(bytes.size());
  if (bytes.starts_with(bitcode_magic)) {
    if (bytes.size() % 4 != 0)
      damaged("LLVM bitcode of " + size + " bytes, not a whole number of 32-bit words");
    return;
  }
  if (u32_at(bytes, 0) == bitcode_wrapper_magic) {
    if (bytes.size() < bitcode_wrapper_header_bytes)
      damaged("bitcode wrapper of " + size + " bytes is shorter than its header (20)");
    const auto offset = u32_at(bytes, 8);
    const auto length = u32_at(bytes, 12);
    if (!range_inside(offset, length, bytes.size()))
      damaged("bitcode wrapper says its bitcode is at offset " + std::to_string(offset) + " + " +
              std::to_string(length) + " bytes, past the end (" + size + " bytes)");
    if (!bytes.substr(offset, length).starts_with(bitcode_magic))
      damaged("bitcode wrapper holds no bitcode at offset " + std::to_string(offset));
    return;
  }
  if (bytes.size() <= ltoir_header_bytes)
    damaged("LTO-IR of " + size + " bytes is no longer than its header (40)");
  const auto start = u32_at(bytes, 0x10);
  if (start < ltoir_header_bytes || start >= bytes.size())
    damaged("LTO-IR header says its IR starts at byte " + std::to_string(start) +
            ", outside 40 ... " + std::to_string(bytes.size() - 1));
}

void check_cubin(std::string_view bytes, DeviceCode& found) {
  ElfFile(bytes, ElfMachine::cuda);
  if (const std::optional<int> sm = cubin_sm_version(bytes))
    add_architecture(found.architectures, "sm_" + std::to_string(*sm));
  found.cubins.push_back(bytes);
}

void check_fatbin_payload(const FatbinEntry& entry, DeviceCode& found) {
  if (entry.compressed) return;  // read_fatbin checked the sizes it declares
  switch (entry.format) {
    case ImageFormat::cubin:
      ElfFile(entry.payload, ElfMachine::cuda);
      found.cubins.push_back(entry.payload);
      return;
    case ImageFormat::ptx:
      // The toolkit reads it as a C string.
      if (entry.payload.find('\0') == std::string_view::npos)
        damaged("its PTX has no terminating NUL within its " +
                std::to_string(entry.payload.size()) + " bytes");
      return;
    case ImageFormat::ltoir:
      check_ltoir(entry.payload);
      return;
    case ImageFormat::fatbin:
      return;  // read_fatbin gives no such entry
  }
}

void check_fatbin(std::string_view fatbin, DeviceCode& found) {
  const std::vector<FatbinEntry> entries = read_fatbin(fatbin);
  for (std::size_t index = 0; index < entries.size(); ++index) {
    const FatbinEntry& entry = entries[index];
    within("entry " + std::to_string(index + 1) + " (" + entry.describe() + ")",
           [&] { check_fatbin_payload(entry, found); });
    add_architecture(
        found.architectures,
        (entry.format == ImageFormat::cubin ? "sm_" : "compute_") + std::to_string(entry.sm));
  }
}

// One fatbin or several back to back (as a linked host object's section holds them), with zero
// bytes between and after them.
void check_fatbins(std::string_view bytes, DeviceCode& found) {
  std::uint64_t at = 0;
  for (int count = 1; at < bytes.size(); ++count) {
    const std::size_t next = bytes.find_first_not_of('\0', at);
    if (next == std::string_view::npos) return;
    const std::string_view rest = bytes.substr(next);
    if (!is_fatbin(rest))
      damaged("the bytes at offset " + std::to_string(next) +
              " after a fatbin are neither zero padding nor another fatbin");
    const std::string where =
        count == 1 ? "" : "fatbin " + std::to_string(count) + " at offset " + std::to_string(next);
    if (where.empty())
      check_fatbin(rest.substr(0, fatbin_size(rest)), found);
    else
      within(where, [&] { check_fatbin(rest.substr(0, fatbin_size(rest)), found); });
    at = next + fatbin_size(rest);
  }
}

// Checks a host object and the fatbins in its device-code sections; whether it has any.
bool check_host_object(std::string_view bytes, DeviceCode& found) {
  const ElfFile elf(bytes, ElfMachine::any);
  bool device_code = false;
  for (const detail::ElfSection& section : elf.sections()) {
    if (std::find(std::begin(device_sections), std::end(device_sections), section.name) ==
            std::end(device_sections) ||
        section.contents.empty())
      continue;
    within("section " + std::string(section.name), [&] { check_fatbins(section.contents, found); });
    device_code = true;
  }
  return device_code;
}

// Checks every member of a static library (each an ELF object: a host object from nvcc -dc, or a
// CUBIN); whether any holds device code.
bool check_library(std::string_view bytes, DeviceCode& found) {
  const detail::ArchiveFile archive(bytes);
  bool device_code = false;
  for (const detail::ArchiveMember& member : archive.members()) {
    within("member " + member.name, [&] {
      if (!detail::looks_like_elf(member.contents))
        damaged("it is not an ELF object, as the members of a device library are");
      if (read_le<std::uint16_t>(member.contents, 18, "e_machine") == detail::elf_machine_cuda) {
        check_cubin(member.contents, found);
        device_code = true;
      } else if (check_host_object(member.contents, found)) {
        device_code = true;
      }
    });
  }
  return device_code;
}

DeviceObjectKind recognise(std::string_view bytes) {
  if (is_fatbin(bytes)) return DeviceObjectKind::fatbin;
  if (detail::looks_like_archive(bytes)) return DeviceObjectKind::library;
  if (detail::looks_like_elf(bytes)) {
    // Too short to say: the CUBIN check says what is missing.
    if (bytes.size() < 20) return DeviceObjectKind::cubin;
    return read_le<std::uint16_t>(bytes, 18, "e_machine") == detail::elf_machine_cuda
               ? DeviceObjectKind::cubin
               : DeviceObjectKind::object;
  }
  if (is_ltoir(bytes)) return DeviceObjectKind::ltoir;
  return DeviceObjectKind::ptx;  // or nothing ptxrt knows: is_ptx tells
}

// Why `bytes` are not device code, in words; empty when they are.
std::string not_device_code(std::string_view bytes, DeviceObjectKind kind) {
  if (bytes.empty()) return "it is empty";
  if (kind != DeviceObjectKind::ptx || is_ptx(bytes)) return {};
  return bytes.find('\0') == std::string_view::npos
             ? "it is a text file, and not PTX (no .version and .target lines)"
             : "its content is none of the known formats";
}

// "LTO-IR", "a host object from nvcc -dc", "a static library": what only the linker takes.
std::string linker_input_described(DeviceObjectKind kind) {
  if (kind == DeviceObjectKind::object) return "a host object from nvcc -dc";
  if (kind == DeviceObjectKind::library) return "a static library";
  return std::string(to_string(kind));
}

[[noreturn]] void refuse(std::string_view name, DeviceCodeReader reader, const std::string& why) {
  const std::string subject = name.empty() ? "the image" : std::string(name);
  if (reader == DeviceCodeReader::linker)
    throw Error(ErrorKind::invalid_argument,
                subject + " is not a device object: " + why +
                    "; the device linker takes CUBIN, PTX, LTO-IR, fatbins, and objects and "
                    "static libraries made with nvcc -dc (nvcc -lib, ar)");
  throw Error(ErrorKind::invalid_argument, subject + " cannot be loaded: " + why +
                                               "; the driver loads a CUBIN, PTX or a fatbin");
}

// Checks `bytes` as `kind`; whether they hold device code.
bool check_contents(std::string_view bytes, DeviceObjectKind kind, DeviceCode& found) {
  switch (kind) {
    case DeviceObjectKind::cubin:
      check_cubin(bytes, found);
      return true;
    case DeviceObjectKind::ptx:
      if (std::string target = ptx_target(bytes);
          target.starts_with("sm_") && target.size() > 3 && target[3] >= '0' && target[3] <= '9')
        add_architecture(found.architectures, "compute_" + target.substr(3));
      return true;
    case DeviceObjectKind::ltoir:
      check_ltoir(bytes);
      return true;
    case DeviceObjectKind::fatbin:
      check_fatbins(bytes, found);
      return true;
    case DeviceObjectKind::object:
      return check_host_object(bytes, found);
    case DeviceObjectKind::library:
      return check_library(bytes, found);
  }
  return false;
}

}  // namespace

DeviceCode check_device_code(std::string_view bytes, std::string_view name,
                             DeviceCodeReader reader) {
  DeviceCode code;
  code.kind = recognise(bytes);
  if (std::string why = not_device_code(bytes, code.kind); !why.empty()) refuse(name, reader, why);
  const bool loadable = code.kind == DeviceObjectKind::cubin ||
                        code.kind == DeviceObjectKind::ptx || code.kind == DeviceObjectKind::fatbin;
  if (reader == DeviceCodeReader::loader && !loadable)
    refuse(name, reader,
           "it is " + linker_input_described(code.kind) + ", which only the device linker takes");
  const std::string subject = name.empty() ? "the image" : std::string(name);
  if (within(subject, [&] { return check_contents(bytes, code.kind, code); })) return code;
  refuse(name, reader,
         code.kind == DeviceObjectKind::library
             ? "it is a static library whose members hold no device code"
             : "it is an ELF file for the host (machine " +
                   std::to_string(read_le<std::uint16_t>(bytes, 18, "e_machine")) +
                   ") without device code");
}

std::string_view to_string(DeviceObjectKind kind) {
  switch (kind) {
    case DeviceObjectKind::cubin:
      return "CUBIN";
    case DeviceObjectKind::ptx:
      return "PTX";
    case DeviceObjectKind::ltoir:
      return "LTO-IR";
    case DeviceObjectKind::fatbin:
      return "fatbin";
    case DeviceObjectKind::object:
      return "device object";
    case DeviceObjectKind::library:
      return "device library";
  }
  return "device object";
}

}  // namespace ptxrt
