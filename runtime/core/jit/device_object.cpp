// Prebuilt device objects: read, and recognised by their content, so that a misnamed file links
// as what it is and a file that holds no device code is refused naming it.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <span>

#include "ptxrt/core/error.hpp"
#include "ptxrt/core/fatbin.hpp"
#include "ptxrt/core/program.hpp"
#include "ptxrt/core/target.hpp"
#include "support/regular_file.hpp"

namespace ptxrt {
namespace {

constexpr std::uint16_t elf_machine_cuda = 190;
constexpr std::string_view archive_magic = "!<arch>\n";
constexpr std::size_t archive_member_header_bytes = 60;
// LLVM bitcode, bare or in its wrapper: what NVVM's LTO-IR is.
constexpr std::string_view bitcode_magic = "BC\xc0\xde";
constexpr std::uint32_t bitcode_wrapper_magic = 0x0B17C0DE;
// nvcc -dc puts its device code, a fatbin, in one of these sections of a host object.
constexpr std::string_view device_sections[] = {"__nv_relfatbin", ".nv_fatbin"};

template <class T>
T read_at(std::string_view bytes, std::size_t offset) {
  T value{};
  if (offset <= bytes.size() && sizeof value <= bytes.size() - offset)
    std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

bool is_elf(std::string_view bytes) {
  return bytes.size() >= 64 &&
         bytes.substr(0, 4) ==
             "\x7f"
             "ELF" &&
         bytes[4] == 2;
}

std::uint16_t elf_machine(std::string_view bytes) { return read_at<std::uint16_t>(bytes, 18); }

// The content of each section of a 64-bit ELF whose name is one of `names`; bounds-checked.
std::vector<std::string_view> elf_sections(std::string_view elf,
                                           std::span<const std::string_view> names) {
  const auto table = read_at<std::uint64_t>(elf, 0x28);
  const auto entry_bytes = read_at<std::uint16_t>(elf, 0x3a);
  const auto count = read_at<std::uint16_t>(elf, 0x3c);
  const auto names_index = read_at<std::uint16_t>(elf, 0x3e);
  if (entry_bytes < 64 || table > elf.size() || count > (elf.size() - table) / entry_bytes ||
      names_index >= count)
    return {};
  auto section = [&](std::size_t index) -> std::string_view {
    const std::size_t header = table + index * entry_bytes;
    const auto offset = read_at<std::uint64_t>(elf, header + 0x18);
    const auto size = read_at<std::uint64_t>(elf, header + 0x20);
    if (offset > elf.size() || size > elf.size() - offset) return {};
    return elf.substr(offset, size);
  };
  const std::string_view strings = section(names_index);
  std::vector<std::string_view> found;
  for (std::size_t index = 0; index < count; ++index) {
    const auto name_offset = read_at<std::uint32_t>(elf, table + index * entry_bytes);
    if (name_offset >= strings.size()) continue;
    const std::string_view rest = strings.substr(name_offset);
    const std::string_view name = rest.substr(0, rest.find('\0'));
    for (std::string_view wanted : names)
      if (name == wanted) found.push_back(section(index));
  }
  return found;
}

// The members of a System V archive (ar, nvcc -lib), bounds-checked.
std::vector<std::string_view> archive_members(std::string_view archive) {
  std::vector<std::string_view> members;
  for (std::size_t at = archive_magic.size();
       at <= archive.size() && archive.size() - at >= archive_member_header_bytes;) {
    std::size_t size = 0;
    const std::string_view size_field = archive.substr(at + 48, 10);
    std::from_chars(size_field.data(), size_field.data() + size_field.size(), size);
    at += archive_member_header_bytes;
    if (size > archive.size() - at) break;
    members.push_back(archive.substr(at, size));
    at += size + (size % 2);
  }
  return members;
}

// The fatbins a host object or a library holds.
std::vector<std::string_view> embedded_fatbins(std::string_view bytes, DeviceObjectKind kind) {
  std::vector<std::string_view> objects{bytes};
  if (kind == DeviceObjectKind::library) objects = archive_members(bytes);
  std::vector<std::string_view> fatbins;
  for (std::string_view object : objects)
    if (is_elf(object))
      for (std::string_view section : elf_sections(object, device_sections))
        if (is_fatbin(section)) fatbins.push_back(section);
  return fatbins;
}

bool is_bitcode(std::string_view bytes) {
  if (bytes.starts_with(bitcode_magic)) return true;
  std::uint32_t magic = 0;
  if (bytes.size() >= sizeof magic) std::memcpy(&magic, bytes.data(), sizeof magic);
  return magic == bitcode_wrapper_magic;
}

// PTX is text with a .version and a .target directive at the start of a line.
bool is_ptx(std::string_view bytes) {
  if (bytes.find('\0') != std::string_view::npos) return false;
  auto has_directive = [&](std::string_view directive) {
    for (std::size_t at = bytes.find(directive); at != std::string_view::npos;
         at = bytes.find(directive, at + 1)) {
      std::size_t line_start = bytes.find_last_not_of(" \t", at == 0 ? 0 : at - 1);
      if (at == 0 || line_start == std::string_view::npos || bytes[line_start] == '\n') return true;
    }
    return false;
  };
  return has_directive(".version") && has_directive(".target");
}

[[noreturn]] void not_device_code(const std::string& name, const std::string& what) {
  throw Error(ErrorKind::invalid_argument,
              name + " is not a device object: " + what +
                  "; the device linker takes CUBIN, PTX, LTO-IR, fatbins, and objects and static "
                  "libraries made with nvcc -dc (nvcc -lib, ar)");
}

DeviceObjectKind recognise(std::string_view bytes, const std::string& name) {
  if (bytes.empty()) not_device_code(name, "it is empty");
  if (is_fatbin(bytes)) return DeviceObjectKind::fatbin;
  if (bytes.starts_with(archive_magic)) {
    if (embedded_fatbins(bytes, DeviceObjectKind::library).empty())
      not_device_code(name, "it is a static library whose members hold no device code");
    return DeviceObjectKind::library;
  }
  if (is_elf(bytes)) {
    if (elf_machine(bytes) == elf_machine_cuda) return DeviceObjectKind::cubin;
    if (embedded_fatbins(bytes, DeviceObjectKind::object).empty())
      not_device_code(name, "it is an ELF file for the host (machine " +
                                std::to_string(elf_machine(bytes)) + ") without device code");
    return DeviceObjectKind::object;
  }
  if (is_bitcode(bytes)) return DeviceObjectKind::ltoir;
  if (is_ptx(bytes)) return DeviceObjectKind::ptx;
  const bool text = bytes.find('\0') == std::string_view::npos;
  not_device_code(name, text ? "it is a text file, and not PTX (no .version and .target lines)"
                             : "its content is none of the known formats");
}

// 90 of "sm_90", "compute_90a"; nothing when no number follows the underscore.
std::optional<int> number_after_underscore(std::string_view arch) {
  const std::size_t underscore = arch.find('_');
  if (underscore == std::string_view::npos) return std::nullopt;
  int number = 0;
  const char* start = arch.data() + underscore + 1;
  auto [end, error] = std::from_chars(start, arch.data() + arch.size(), number);
  if (error != std::errc() || end == start) return std::nullopt;
  return number;
}

std::string ptx_target(std::string_view ptx) {
  const std::size_t at = ptx.find(".target");
  if (at == std::string_view::npos) return {};
  std::string_view rest = ptx.substr(at + 7);
  rest.remove_prefix(std::min(rest.find_first_not_of(" \t"), rest.size()));
  return std::string(rest.substr(0, rest.find_first_of(", \t\r\n")));
}

}  // namespace

namespace detail {

std::vector<std::string> defined_global_symbols(std::string_view elf) {
  constexpr std::uint32_t symbol_table = 2;  // SHT_SYMTAB
  constexpr std::size_t symbol_bytes = 24;
  std::vector<std::string> defined;
  if (!is_elf(elf)) return defined;
  const auto table = read_at<std::uint64_t>(elf, 0x28);
  const auto entry_bytes = read_at<std::uint16_t>(elf, 0x3a);
  const auto count = read_at<std::uint16_t>(elf, 0x3c);
  if (entry_bytes < 64 || table > elf.size() || count > (elf.size() - table) / entry_bytes)
    return defined;
  auto section = [&](std::size_t index) -> std::string_view {
    const std::size_t header = table + index * entry_bytes;
    const auto offset = read_at<std::uint64_t>(elf, header + 0x18);
    const auto size = read_at<std::uint64_t>(elf, header + 0x20);
    if (index >= count || offset > elf.size() || size > elf.size() - offset) return {};
    return elf.substr(offset, size);
  };
  for (std::size_t index = 0; index < count; ++index) {
    const std::size_t header = table + index * entry_bytes;
    if (read_at<std::uint32_t>(elf, header + 4) != symbol_table) continue;
    const std::string_view symbols = section(index);
    const std::string_view names = section(read_at<std::uint32_t>(elf, header + 0x28));
    for (std::size_t at = 0; at + symbol_bytes <= symbols.size(); at += symbol_bytes) {
      const auto name = read_at<std::uint32_t>(symbols, at);
      const auto binding = read_at<std::uint8_t>(symbols, at + 4) >> 4;
      const auto defined_in = read_at<std::uint16_t>(symbols, at + 6);
      if (binding != 1 || defined_in == 0 || name >= names.size()) continue;  // STB_GLOBAL
      const std::string_view rest = names.substr(name);
      defined.emplace_back(rest.substr(0, rest.find('\0')));
    }
  }
  return defined;
}

}  // namespace detail

std::vector<std::string> DeviceObject::architectures() const {
  std::vector<std::string> found;
  auto add = [&found](std::string arch) {
    if (!arch.empty() && std::find(found.begin(), found.end(), arch) == found.end())
      found.push_back(std::move(arch));
  };
  switch (kind) {
    case DeviceObjectKind::cubin:
      if (std::optional<int> sm = cubin_sm_version(bytes)) add("sm_" + std::to_string(*sm));
      break;
    case DeviceObjectKind::ptx:
      if (const std::string target = ptx_target(bytes);
          target.starts_with("sm_") && number_after_underscore(target))
        add("compute_" + target.substr(3));
      break;
    case DeviceObjectKind::ltoir:
      break;
    case DeviceObjectKind::fatbin:
    case DeviceObjectKind::object:
    case DeviceObjectKind::library: {
      std::vector<std::string_view> fatbins{bytes};
      if (kind != DeviceObjectKind::fatbin) fatbins = embedded_fatbins(bytes, kind);
      for (std::string_view fatbin : fatbins) {
        std::vector<FatbinEntry> entries;
        try {
          entries = read_fatbin(fatbin);
        } catch (const Error&) {
          continue;  // the linker judges what this reader cannot
        }
        for (const FatbinEntry& entry : entries)
          add((entry.format == ImageFormat::cubin ? "sm_" : "compute_") + std::to_string(entry.sm));
      }
    }
  }
  return found;
}

void DeviceObject::check_links_into(const std::string& arch) const {
  const std::vector<std::string> held = architectures();
  if (held.empty()) return;  // LTO-IR, or nothing this reader knows: the linker judges
  const std::optional<int> target = number_after_underscore(arch);
  if (!target) return;
  for (const std::string& entry : held) {
    const std::optional<int> sm = number_after_underscore(entry);
    // SASS links into its own SM family at or above it; PTX and LTO-IR into any newer SM.
    if (!sm ||
        (entry.starts_with("sm_") ? *sm / 10 == *target / 10 && *sm <= *target : *sm <= *target))
      return;
  }
  std::string list;
  for (const std::string& entry : held) list += (list.empty() ? "" : ", ") + entry;
  throw Error(ErrorKind::link,
              name + " (" + std::string(to_string(kind)) + ") holds device code for " + list +
                  " only, which cannot link into " + arch + ": rebuild it for " + arch +
                  " (nvcc -dc -arch=" + arch + ") or add compute_XY PTX no newer than " + arch);
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

DeviceObject DeviceObject::from_bytes(std::string bytes, std::string name) {
  DeviceObjectKind kind = recognise(bytes, name);
  return DeviceObject{std::move(name), std::move(bytes), kind};
}

DeviceObject DeviceObject::from_file(const std::filesystem::path& path) {
  return from_bytes(detail::read_regular_file(path, "device object"), path.filename().string());
}

}  // namespace ptxrt
