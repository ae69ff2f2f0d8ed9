#include "ptxrt/core/architecture.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>

#include "ptxrt/core/driver.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/fatbin.hpp"

namespace ptxrt {
namespace {

// "9.0" → 9, 0.
bool parse_isa_version(std::string_view text, int& major, int& minor) {
  const char* end = text.data() + text.size();
  auto [dot, major_error] = std::from_chars(text.data(), end, major);
  if (major_error != std::errc() || dot == end || *dot != '.') return false;
  auto [rest, minor_error] = std::from_chars(dot + 1, end, minor);
  return minor_error == std::errc() && rest != dot + 1;
}

// The rest of the line after `directive` in PTX text (".version", ".target"), trimmed.
std::optional<std::string_view> ptx_directive(std::string_view ptx, std::string_view directive) {
  std::size_t at = 0;
  while ((at = ptx.find(directive, at)) != std::string_view::npos) {
    bool line_start = at == 0 || ptx[at - 1] == '\n';
    std::size_t after = at + directive.size();
    if (line_start && after < ptx.size() && (ptx[after] == ' ' || ptx[after] == '\t')) {
      std::string_view rest = ptx.substr(after + 1, ptx.find('\n', after) - after - 1);
      while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
      return rest;
    }
    at = after;
  }
  return std::nullopt;
}

// Code for `sm` (with its suffix) runs on the device when the device is the same major version
// and at least the same minor, except arch-specific ("a") code, which needs the exact version;
// PTX runs on any device at least as new.
bool runs_on(ImageFormat format, int sm, char suffix, int device) {
  if (suffix == 'a') return device == sm;
  if (format == ImageFormat::ptx && suffix != 'f') return device >= sm;
  return device / 10 == sm / 10 && device >= sm;
}

void check_architecture(const Image& image, const Architecture& built_for, int cc_major,
                        int cc_minor) {
  const int device = cc_major * 10 + cc_minor;
  if (runs_on(image.format, built_for.sm, built_for.suffix, device)) return;
  const std::string device_text = std::to_string(cc_major) + "." + std::to_string(cc_minor);
  throw Error(ErrorKind::invalid_argument,
              std::string(to_string(image.format)) + " of " + image.name + " was built for " +
                  image.arch + " (compute capability " + built_for.compute_capability() +
                  (built_for.suffix ? std::string(1, built_for.suffix) : "") +
                  ") and cannot run on a device of compute capability " + device_text +
                  ": compile it for sm_" + std::to_string(device) + " (CUBIN) or compute_" +
                  std::to_string(device) + " (PTX) instead");
}

// What the driver needs for PTX ISA major.minor, or empty when this driver JIT-compiles it.
std::string ptx_isa_problem(int isa_major, int isa_minor, int driver_version) {
  std::optional<int> needed = cuda_version_for_ptx_isa(isa_major, isa_minor);
  if (needed && driver_version >= *needed) return {};
  return "PTX ISA " + std::to_string(isa_major) + "." + std::to_string(isa_minor) +
         ", which needs a driver for " +
         (needed ? "CUDA " + format_cuda_version(*needed) + " or newer"
                 : "a CUDA newer than any ptxrt knows") +
         ", but this driver is CUDA " + format_cuda_version(driver_version);
}

// cuModuleLoadData picks the CUBIN for the device's SM, else JIT-compiles the newest PTX that
// the device can run: at least one entry must qualify.
void check_fatbin(const Image& image, int driver_version, int cc_major, int cc_minor) {
  const int device = cc_major * 10 + cc_minor;
  std::string held;
  std::string problems;
  for (const FatbinEntry& entry : read_fatbin(image.data)) {
    held += (held.empty() ? "" : ", ") + entry.describe();
    if (entry.format == ImageFormat::ltoir || !runs_on(entry.format, entry.sm, '\0', device))
      continue;
    if (entry.format == ImageFormat::cubin) return;
    const std::string isa =
        ptx_isa_problem(entry.version_major, entry.version_minor, driver_version);
    if (isa.empty()) return;
    problems += "; its " + entry.describe() + " is " + isa;
  }
  const std::string device_text = std::to_string(cc_major) + "." + std::to_string(cc_minor);
  throw Error(ErrorKind::invalid_argument,
              "the fatbin of " + image.name + " holds " + (held.empty() ? "nothing" : held) +
                  ", none of which can run on a device of compute capability " + device_text +
                  " with this driver" + problems + ": add sm_" + std::to_string(device) +
                  " (CUBIN) or compute_" + std::to_string(device) + " (PTX) to its --arch list");
}

void check_ptx(const Image& image, int driver_version, int cc_major, int cc_minor) {
  std::optional<std::string_view> version = ptx_directive(image.data, ".version");
  std::optional<std::string_view> target = ptx_directive(image.data, ".target");
  if (!version || !target)
    throw Error(ErrorKind::invalid_argument,
                "the PTX of " + image.name + " has no .version or .target line");
  int isa_major = 0;
  int isa_minor = 0;
  if (!parse_isa_version(*version, isa_major, isa_minor))
    throw Error(
        ErrorKind::invalid_argument,
        "the PTX of " + image.name + " has an unreadable .version: " + std::string(*version));
  if (std::string problem = ptx_isa_problem(isa_major, isa_minor, driver_version); !problem.empty())
    throw Error(ErrorKind::invalid_argument,
                "the PTX of " + image.name + " is " + problem +
                    " (loading would fail with CUDA_ERROR_UNSUPPORTED_PTX_VERSION): update the "
                    "NVIDIA driver, or compile with an NVRTC no newer than CUDA " +
                    format_cuda_version(driver_version));
  std::string_view arch = target->substr(0, target->find_first_of(", \t\r"));
  std::optional<Architecture> architecture = parse_architecture(arch);
  if (!architecture || architecture->virtual_architecture)
    throw Error(ErrorKind::invalid_argument,
                "the PTX of " + image.name + " has an unreadable .target: " + std::string(arch));
  check_architecture(image, *architecture, cc_major, cc_minor);
}

void check_cubin(const Image& image, int cc_major, int cc_minor) {
  std::optional<int> sm = cubin_sm_version(image.data);
  if (!sm)
    throw Error(ErrorKind::invalid_argument, "the CUBIN of " + image.name +
                                                 " is not a CUDA ELF image (" +
                                                 std::to_string(image.data.size()) + " bytes)");
  // The ELF header does not record an "a" or "f" suffix; the name the image was built for does.
  const std::optional<Architecture> named = parse_architecture(image.arch);
  check_architecture(image, {.sm = *sm, .suffix = named ? named->suffix : '\0'}, cc_major,
                     cc_minor);
}

}  // namespace

std::string Architecture::compute_capability() const {
  return std::to_string(cc_major()) + "." + std::to_string(cc_minor());
}

std::optional<Architecture> parse_architecture(std::string_view name) {
  Architecture architecture;
  if (name.starts_with("compute_")) {
    architecture.virtual_architecture = true;
    name.remove_prefix(8);
  } else if (name.starts_with("sm_")) {
    name.remove_prefix(3);
  } else {
    return std::nullopt;
  }
  if (name.ends_with('a') || name.ends_with('f')) {
    architecture.suffix = name.back();
    name.remove_suffix(1);
  }
  const bool digits_only =
      std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (name.size() < 2 || name.size() > 3 || !digits_only) return std::nullopt;
  std::from_chars(name.data(), name.data() + name.size(), architecture.sm);
  return architecture;
}

std::vector<std::string> target_architectures(std::string_view arch_list) {
  std::vector<std::string> architectures;
  while (!arch_list.empty()) {
    const std::size_t comma = arch_list.find(',');
    if (comma != 0) architectures.emplace_back(arch_list.substr(0, comma));
    arch_list.remove_prefix(comma == std::string_view::npos ? arch_list.size() : comma + 1);
  }
  return architectures;
}

std::optional<int> cuda_version_for_ptx_isa(int isa_major, int isa_minor) {
  // From the PTX ISA release history. Up to 8.5 the ISA tracks CUDA 12.x as 8.x (and 11.x as
  // 7.x); CUDA 12.6 kept 8.5, so from 8.6 on the table is irregular.
  struct Release {
    int isa;
    int cuda;
  };
  static constexpr Release releases[] = {
      {60, 9000},  {61, 9010},  {62, 9020},  {63, 10000}, {64, 10010}, {65, 10020}, {70, 11000},
      {71, 11010}, {72, 11020}, {73, 11030}, {74, 11040}, {75, 11050}, {76, 11060}, {77, 11070},
      {78, 11080}, {80, 12000}, {81, 12010}, {82, 12020}, {83, 12030}, {84, 12040}, {85, 12050},
      {86, 12070}, {87, 12080}, {88, 12090}, {90, 13000}, {91, 13010}};
  const int isa = isa_major * 10 + isa_minor;
  for (const Release& release : releases)
    if (release.isa == isa) return release.cuda;
  return std::nullopt;
}

std::optional<int> cubin_sm_version(std::string_view cubin) {
  constexpr std::size_t header_size = 64;  // ELF64 header
  constexpr std::uint16_t machine_cuda = 190;
  if (cubin.size() < header_size ||
      cubin.substr(0, 4) !=
          "\x7f"
          "ELF" ||
      cubin[4] != 2)
    return std::nullopt;
  std::uint16_t machine = 0;
  std::uint32_t flags = 0;
  std::memcpy(&machine, cubin.data() + 18, sizeof machine);
  std::memcpy(&flags, cubin.data() + 48, sizeof flags);
  if (machine != machine_cuda) return std::nullopt;
  // ELF ABI version 8 (CUDA 13 toolchains) keeps the SM version in bits 8-15; earlier versions
  // keep it in bits 0-7.
  const auto abi_version = static_cast<unsigned char>(cubin[8]);
  return static_cast<int>(abi_version >= 8 ? (flags >> 8) & 0xff : flags & 0xff);
}

void check_image_for_driver(const Image& image, int driver_version, int cc_major, int cc_minor) {
  switch (image.format) {
    case ImageFormat::ptx:
      return check_ptx(image, driver_version, cc_major, cc_minor);
    case ImageFormat::cubin:
      return check_cubin(image, cc_major, cc_minor);
    case ImageFormat::fatbin:
      return check_fatbin(image, driver_version, cc_major, cc_minor);
    case ImageFormat::ltoir:
      throw Error(ErrorKind::invalid_argument,
                  "the LTO-IR of " + image.name +
                      " cannot be loaded: it is an input to the device linker (link it into a "
                      "CUBIN with CompileOptions::lto)");
  }
}

}  // namespace ptxrt
