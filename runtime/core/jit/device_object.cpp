// Prebuilt device objects: read, recognised by their content and checked whole
// (check_device_code), so that a misnamed file links as what it is, and a file that holds no
// device code or is damaged is refused naming it before nvJitLink reads a byte.
#include <algorithm>
#include <charconv>

#include "ptxrt/core/error.hpp"
#include "ptxrt/core/program.hpp"
#include "support/regular_file.hpp"

namespace ptxrt {
namespace {

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

}  // namespace

std::vector<std::string> DeviceObject::architectures() const {
  return check_device_code(bytes, name, DeviceCodeReader::linker).architectures;
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

DeviceObject DeviceObject::from_bytes(std::string bytes, std::string name) {
  const DeviceObjectKind kind = check_device_code(bytes, name, DeviceCodeReader::linker).kind;
  return DeviceObject{std::move(name), std::move(bytes), kind};
}

DeviceObject DeviceObject::from_file(const std::filesystem::path& path) {
  return from_bytes(detail::read_regular_file(path, "device object"), path.filename().string());
}

}  // namespace ptxrt
