#include "jit/link.hpp"

#include <cxxabi.h>

#include <charconv>
#include <cstdlib>
#include <map>
#include <memory>
#include <regex>

#include "driver/elf_file.hpp"
#include "driver/toolkit_check.hpp"
#include "ptxrt/core/device_code.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/target.hpp"

namespace ptxrt::detail {
namespace {

// "twice(float)" for "_Z5twicef"; C names and anything unmangled stay as they are.
std::string demangled(const std::string& symbol) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> name(
      abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && name ? std::string(name.get()) + " (" + symbol + ")" : symbol;
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\0' || text.back() == '\n')) text.pop_back();
  return text;
}

// nvJitLink's log on one line: its lines trimmed and joined by "; ", without the "ERROR 9:
// finish" that closes every failed link.
std::string one_line(const std::string& log) {
  static const std::regex finish(R"(ERROR \d+: finish)");
  static const std::regex spaces(R"(\s+)");
  constexpr std::string_view blank{" \0", 2};
  std::string joined;
  std::size_t start = 0;
  while (start < log.size()) {
    const std::size_t end = std::min(log.find('\n', start), log.size());
    std::string line = std::regex_replace(log.substr(start, end - start), spaces, " ");
    start = end + 1;
    line.erase(0, line.find_first_not_of(blank));
    line.erase(line.find_last_not_of(blank) + 1);
    if (line.empty() || std::regex_match(line, finish)) continue;
    joined += (joined.empty() ? "" : "; ") + line;
  }
  return joined;
}

// Each problem nvJitLink reports, in ptxrt's words; nvJitLink's own when it reports none ptxrt
// knows.
std::string summarise_link_errors(const std::string& log) {
  static const std::regex undefined(R"(Undefined reference to '([^']+)' in '([^']+)')");
  // After LTO, ptxas sees one module and names no input.
  static const std::regex unresolved(R"(Unresolved extern (?:function|variable) '([^']+)')");
  // NVVM's words for a duplicate definition, with LTO (DeviceLinker::add finds them in CUBINs).
  static const std::regex duplicate_lto(
      R"((\S+): link error: error: Linking globals named '([^']+)': symbol multiply defined)");
  std::string summary;
  auto add = [&summary](const std::string& problem) {
    summary += (summary.empty() ? "" : "; ") + problem;
  };
  for (std::sregex_iterator it(log.begin(), log.end(), undefined), end; it != end; ++it)
    add("undefined symbol " + demangled((*it)[1]) + ", used in " + (*it)[2].str() +
        " and defined in no input");
  for (std::sregex_iterator it(log.begin(), log.end(), unresolved), end; it != end; ++it)
    add("undefined symbol " + demangled((*it)[1]) + ", defined in no input");
  for (std::sregex_iterator it(log.begin(), log.end(), duplicate_lto), end; it != end; ++it)
    add("symbol " + demangled((*it)[2]) + " is defined twice, again in " + (*it)[1].str());
  return summary.empty() ? one_line(log) : summary;
}

DeviceObjectKind kind_of(nvJitLinkInputType type) {
  switch (type) {
    case NVJITLINK_INPUT_CUBIN:
      return DeviceObjectKind::cubin;
    case NVJITLINK_INPUT_PTX:
      return DeviceObjectKind::ptx;
    case NVJITLINK_INPUT_LTOIR:
      return DeviceObjectKind::ltoir;
    case NVJITLINK_INPUT_FATBIN:
      return DeviceObjectKind::fatbin;
    case NVJITLINK_INPUT_OBJECT:
      return DeviceObjectKind::object;
    default:
      return DeviceObjectKind::library;
  }
}

// 90 of "sm_90" and "sm_90a"; 0 for a virtual architecture, whose link reads no CUBIN entry.
int sm_of(const std::string& arch) {
  int sm = 0;
  if (arch.starts_with("sm_")) std::from_chars(arch.data() + 3, arch.data() + arch.size(), sm);
  return sm;
}

// The CUBINs nvJitLink links from an input as they are: a CUBIN itself, or the uncompressed CUBIN
// entries for the target SM in a fatbin or an object. A library's members are linked only when
// they resolve a symbol, which is nvJitLink's to judge.
std::vector<std::string_view> linked_cubins(nvJitLinkInputType type, std::string_view bytes,
                                            const std::string& name, int sm) {
  if (type == NVJITLINK_INPUT_LIBRARY || type == NVJITLINK_INPUT_PTX ||
      type == NVJITLINK_INPUT_LTOIR)
    return {};
  std::vector<std::string_view> cubins =
      check_device_code(bytes, name, DeviceCodeReader::linker).cubins;
  if (type == NVJITLINK_INPUT_CUBIN) return cubins;
  std::erase_if(cubins, [sm](std::string_view cubin) { return cubin_sm_version(cubin) != sm; });
  return cubins;
}

// Where weak data was first declared, for comparing its other declarations with.
struct WeakData {
  std::string input;
  std::uint64_t size = 0;
};

}  // namespace

std::string input_type_name(nvJitLinkInputType type) {
  switch (type) {
    case NVJITLINK_INPUT_CUBIN:
      return "CUBIN";
    case NVJITLINK_INPUT_PTX:
      return "PTX";
    case NVJITLINK_INPUT_LTOIR:
      return "LTO-IR";
    case NVJITLINK_INPUT_FATBIN:
      return "fatbin";
    case NVJITLINK_INPUT_OBJECT:
      return "device object";
    case NVJITLINK_INPUT_LIBRARY:
      return "device library";
    default:
      return "input";
  }
}

DeviceLinker::DeviceLinker(const std::string& program, const std::string& arch, ImageFormat format,
                           bool lto, bool resource_usage, const std::vector<std::string>& options)
    : what_(program + " for " + arch), sm_(sm_of(arch)), lto_(lto) {
  std::vector<std::string> arguments{"-arch=" + arch};
  if (lto) arguments.push_back("-lto");
  if (format == ImageFormat::ptx) arguments.push_back("-ptx");
  if (resource_usage && format == ImageFormat::cubin) arguments.push_back("-Xptxas=-v");
  arguments.insert(arguments.end(), options.begin(), options.end());
  std::vector<const char*> pointers;
  for (const std::string& argument : arguments) pointers.push_back(argument.c_str());
  std::string joined;
  for (const std::string& argument : arguments) joined += " " + argument;
  check(nvJitLinkCreate(&handle_, static_cast<std::uint32_t>(pointers.size()), pointers.data()),
        "nvJitLinkCreate", "creating the device linker for " + what_ + " with options" + joined);
}

DeviceLinker::~DeviceLinker() { nvJitLinkDestroy(&handle_); }

int DeviceLinker::version() {
  unsigned major = 0;
  unsigned minor = 0;
  check(nvJitLinkVersion(&major, &minor), "nvJitLinkVersion");
  return static_cast<int>(major * 1000 + minor * 10);
}

void DeviceLinker::add(nvJitLinkInputType type, std::string bytes, std::string name) {
  // Checked here, at the last step before nvJitLink, whoever made the bytes: a DeviceObject's
  // fields are the caller's to set.
  const DeviceObjectKind kind = check_device_code(bytes, name, DeviceCodeReader::linker).kind;
  if (kind != kind_of(type))
    throw Error(ErrorKind::invalid_argument, name + " is given to the device linker as " +
                                                 input_type_name(type) + ", but its content is " +
                                                 std::string(to_string(kind)));
  if (kind == DeviceObjectKind::ltoir && !lto_)
    throw Error(ErrorKind::invalid_argument,
                name +
                    " is LTO-IR, which links only with link-time optimisation (--lto, "
                    "CompileOptions::lto)");
  inputs_.push_back({type, std::move(bytes), std::move(name), false});
}

// nvJitLink 13.0 only prints a symbol that two relocatable CUBINs define, or weak data (defined or
// not) they give different sizes, links on, and may crash on such input after an earlier failed
// link: ptxrt finds them first.
void DeviceLinker::complete() {
  constexpr std::uint8_t global_binding = 1;  // STB_GLOBAL
  constexpr std::uint8_t weak_binding = 2;    // STB_WEAK
  constexpr std::uint8_t object_type = 1;     // STT_OBJECT: data, whose size the linker lays out
  std::string inputs;
  std::map<std::string, std::string, std::less<>> global_definitions;
  std::map<std::string, WeakData, std::less<>> weak_data;
  std::string problems;
  auto add_problem = [&problems](const std::string& problem) {
    problems += (problems.empty() ? "" : "; ") + problem;
  };
  for (const LinkInput& input : inputs_) {
    inputs += (inputs.empty() ? "" : ", ") + input.name + " (" + input_type_name(input.type) + ")";
    for (std::string_view cubin : linked_cubins(input.type, input.bytes, input.name, sm_)) {
      const ElfFile elf(cubin);
      for (const ElfSymbol& symbol : elf.symbols()) {
        const std::string name(symbol.name);
        if (symbol.binding == global_binding && symbol.section != 0) {
          auto [first, inserted] = global_definitions.emplace(name, input.name);
          if (!inserted)
            add_problem("symbol " + demangled(name) + " is defined twice: in " + first->second +
                        " and in " + input.name);
        } else if (symbol.binding == weak_binding && symbol.type == object_type) {
          auto [first, inserted] = weak_data.emplace(name, WeakData{input.name, symbol.size});
          if (!inserted && first->second.size != symbol.size)
            add_problem("symbol " + demangled(name) + " is " + std::to_string(first->second.size) +
                        " bytes in " + first->second.input + " but " + std::to_string(symbol.size) +
                        " bytes in " + input.name);
        }
      }
    }
  }
  if (!problems.empty())
    throw Error(ErrorKind::link,
                "linking " + what_ + " failed: " + problems + " (inputs: " + inputs + ")",
                "nvJitLinkComplete", 0, "conflicting definitions", "linking " + what_);
  for (const LinkInput& input : inputs_) {
    const nvJitLinkResult added = nvJitLinkAddData(handle_, input.type, input.bytes.data(),
                                                   input.bytes.size(), input.name.c_str());
    if (added != NVJITLINK_SUCCESS)
      check(added, "nvJitLinkAddData",
            "adding " + input.name + " (" + input_type_name(input.type) + ") to the link of " +
                what_ + ": " + one_line(error_log()));
  }
  const nvJitLinkResult result = nvJitLinkComplete(handle_);
  if (result == NVJITLINK_SUCCESS) return;
  check(
      result, "nvJitLinkComplete",
      "linking " + what_ + ": " + summarise_link_errors(error_log()) + " (inputs: " + inputs + ")");
}

std::string DeviceLinker::output(ImageFormat format) const {
  std::size_t size = 0;
  std::string data;
  if (format == ImageFormat::ptx) {
    check(nvJitLinkGetLinkedPtxSize(handle_, &size), "nvJitLinkGetLinkedPtxSize");
    data.resize(size);
    check(nvJitLinkGetLinkedPtx(handle_, data.data()), "nvJitLinkGetLinkedPtx");
    while (!data.empty() && data.back() == '\0') data.pop_back();
  } else {
    check(nvJitLinkGetLinkedCubinSize(handle_, &size), "nvJitLinkGetLinkedCubinSize");
    data.resize(size);
    check(nvJitLinkGetLinkedCubin(handle_, data.data()), "nvJitLinkGetLinkedCubin");
  }
  return data;
}

std::string DeviceLinker::info_log() const {
  std::size_t size = 0;
  check(nvJitLinkGetInfoLogSize(handle_, &size), "nvJitLinkGetInfoLogSize");
  std::string log(size, '\0');
  if (size > 0) check(nvJitLinkGetInfoLog(handle_, log.data()), "nvJitLinkGetInfoLog");
  return trimmed(std::move(log));
}

std::string DeviceLinker::error_log() const {
  std::size_t size = 0;
  if (nvJitLinkGetErrorLogSize(handle_, &size) != NVJITLINK_SUCCESS || size == 0) return {};
  std::string log(size, '\0');
  if (nvJitLinkGetErrorLog(handle_, log.data()) != NVJITLINK_SUCCESS) return {};
  return log;
}

LinkResult link(const LinkRequest& request) {
  DeviceLinker linker(request.program, request.arch, request.format, request.lto,
                      request.resource_usage, request.options);
  for (const LinkInput& input : request.inputs) linker.add(input.type, input.bytes, input.name);
  linker.complete();
  return {linker.output(request.format), linker.info_log()};
}

}  // namespace ptxrt::detail
