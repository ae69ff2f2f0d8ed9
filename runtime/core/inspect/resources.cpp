#include "ptxrt/core/resources.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>

#include "driver/elf_file.hpp"
#include "ptxrt/core/error.hpp"

namespace ptxrt {
namespace {

using detail::AttributeId;
using detail::ElfAttribute;
using detail::ElfFile;
using detail::ElfSection;
using detail::malformed_cubin;
using detail::read_attributes;
using detail::read_le;

// With CUDA 13 the sm_90+ shared window starts with the system's per-block reserve, and each
// kernel's .nv.shared section covers it; the module then has a .nv.shared.reserved.* section.
constexpr std::size_t kReservedSharedInElf = 1024;
constexpr std::string_view kReservedSharedPrefix = ".nv.shared.reserved.";

// The module-wide .nv.info holds per-function values keyed by symbol index.
void apply_module_attributes(const ElfSection& section,
                             const std::unordered_map<std::uint32_t, std::size_t>& by_symbol,
                             std::vector<KernelResources>& kernels) {
  for (const ElfAttribute& attribute : read_attributes(section)) {
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
    malformed_cubin("EIATTR_MAX_THREADS of " + std::to_string(threads) + " threads");
  }
  return static_cast<int>(threads);
}

void apply_kernel_attributes(const ElfSection& section, KernelResources& resources) {
  for (const ElfAttribute& attribute : read_attributes(section)) {
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

bool lays_out_reserved_shared(const ElfFile& elf) {
  for (const ElfSection& section : elf.sections()) {
    if (section.name.starts_with(kReservedSharedPrefix)) return true;
  }
  return false;
}

std::size_t user_constant_bytes(const ElfFile& elf) {
  std::size_t bytes = 0;
  for (std::string_view bank : {".nv.constant2", ".nv.constant3"}) {
    if (const ElfSection* section = elf.find(bank)) bytes += section->size;
  }
  return bytes;
}

void apply_sections(const ElfFile& elf, KernelResources& resources, const ElfSection& text) {
  std::string name(resources.name);
  // Before sm_90 ptxas also kept the register count in the top byte of the code section's info.
  resources.registers = static_cast<int>(text.info >> 24);
  if (const ElfSection* info = elf.find(".nv.info." + name))
    apply_kernel_attributes(*info, resources);
  if (const ElfSection* bank = elf.find(".nv.constant0." + name))
    resources.param_bank_bytes = bank->size;
  if (const ElfSection* shared = elf.find(".nv.shared." + name)) {
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

// "a.cu" of "== a.cu ==", the line that opens a source's section of a linked image's log.
std::optional<std::string_view> section_name(std::string_view line) {
  if (line.ends_with('\r')) line.remove_suffix(1);
  if (line.size() < 7 || !line.starts_with("== ") || !line.ends_with(" ==")) return std::nullopt;
  return line.substr(3, line.size() - 6);
}

}  // namespace

std::vector<KernelResources> read_cubin_resources(std::string_view cubin) {
  ElfFile elf(cubin);
  std::vector<KernelResources> kernels;
  std::unordered_map<std::uint32_t, std::size_t> by_symbol;
  std::size_t constants = user_constant_bytes(elf);
  for (const detail::ElfEntry& entry : elf.entries()) {
    KernelResources resources;
    resources.name = std::string(entry.name);
    resources.sm = elf.sm();
    resources.user_constant_bytes = constants;
    apply_sections(elf, resources, *entry.text);
    by_symbol.emplace(entry.symbol_index, kernels.size());
    kernels.push_back(std::move(resources));
  }
  if (const ElfSection* info = elf.find(".nv.info"))
    apply_module_attributes(*info, by_symbol, kernels);
  return kernels;
}

std::vector<KernelResources> parse_ptxas_info(std::string_view log) {
  std::vector<KernelResources> entries;
  bool properties_of_entry = false;
  std::string_view source;
  while (!log.empty()) {
    std::size_t newline = log.find('\n');
    std::string_view line = log.substr(0, newline);
    log = newline == std::string_view::npos ? std::string_view{} : log.substr(newline + 1);
    if (std::optional<std::string_view> section = section_name(line)) {
      // The linker's own section reports the kernels of an LTO link, compiled as one.
      source = *section == "link" ? std::string_view{} : *section;
    } else if (std::string_view name = quoted_after(line, "Compiling entry function '");
               !name.empty()) {
      KernelResources entry;
      entry.name = std::string(name);
      entry.source = std::string(source);
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
    from_cubin[found->second].source = logged.source;
  }
  return from_cubin;
}

std::vector<KernelResources> image_resources(const Image& image) {
  std::vector<KernelResources> from_log = parse_ptxas_info(image.compile_log);
  if (image.format != ImageFormat::cubin) return from_log;
  return merge(read_cubin_resources(image.data), from_log);
}

}  // namespace ptxrt
