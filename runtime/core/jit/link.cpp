#include "jit/link.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <regex>

#include "driver/toolkit_check.hpp"
#include "ptxrt/core/error.hpp"

namespace ptxrt::detail {
namespace {

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

// One line per problem nvJitLink reports, in ptxrt's words.
std::string summarise_link_errors(const std::string& log) {
  static const std::regex undefined(R"(Undefined reference to '([^']+)' in '([^']+)')");
  // After LTO, ptxas sees one module and names no input.
  static const std::regex unresolved(R"(Unresolved extern (?:function|variable) '([^']+)')");
  // NVVM's words for a duplicate definition, with LTO (DeviceLinker::add finds them in CUBINs).
  static const std::regex duplicate_lto(
      R"((\S+): link error: error: Linking globals named '([^']+)': symbol multiply defined)");
  std::string summary;
  for (std::sregex_iterator it(log.begin(), log.end(), undefined), end; it != end; ++it)
    summary += "\n  undefined symbol " + demangled((*it)[1]) + ", used in " + (*it)[2].str() +
               " and defined in no input";
  for (std::sregex_iterator it(log.begin(), log.end(), unresolved), end; it != end; ++it)
    summary += "\n  undefined symbol " + demangled((*it)[1]) + ", defined in no input";
  for (std::sregex_iterator it(log.begin(), log.end(), duplicate_lto), end; it != end; ++it)
    summary +=
        "\n  symbol " + demangled((*it)[2]) + " is defined twice, again in " + (*it)[1].str();
  return summary;
}

}  // namespace

DeviceLinker::DeviceLinker(const std::string& program, const std::string& arch, ImageFormat format,
                           bool lto, bool resource_usage, const std::vector<std::string>& options)
    : what_(program + " for " + arch) {
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
  inputs_.push_back({type, std::move(bytes), std::move(name)});
}

// nvJitLink 13.0 only prints a symbol that two relocatable CUBINs define, links on, and may
// crash on such input after an earlier failed link: ptxrt finds them first.
void DeviceLinker::complete() {
  std::string inputs;
  std::map<std::string, std::string> definitions;
  std::string duplicates;
  for (const Input& input : inputs_) {
    inputs += (inputs.empty() ? "" : ", ") + input.name + " (" + input_type_name(input.type) + ")";
    if (input.type != NVJITLINK_INPUT_CUBIN) continue;
    for (std::string& symbol : defined_global_symbols(input.bytes)) {
      auto [first, inserted] = definitions.emplace(symbol, input.name);
      if (!inserted)
        duplicates += "\n  symbol " + demangled(symbol) + " is defined twice: in " + first->second +
                      " and in " + input.name;
    }
  }
  if (!duplicates.empty())
    throw Error(ErrorKind::link,
                "linking " + what_ + " failed:" + duplicates + "\n  inputs: " + inputs,
                "nvJitLinkComplete", 0, "duplicate definitions", "linking " + what_);
  for (const Input& input : inputs_) {
    const nvJitLinkResult added = nvJitLinkAddData(handle_, input.type, input.bytes.data(),
                                                   input.bytes.size(), input.name.c_str());
    if (added != NVJITLINK_SUCCESS)
      check(added, "nvJitLinkAddData",
            "adding " + input.name + " (" + input_type_name(input.type) + ") to the link of " +
                what_ + ": " + trimmed(error_log()));
  }
  const nvJitLinkResult result = nvJitLinkComplete(handle_);
  if (result == NVJITLINK_SUCCESS) return;
  const std::string log = trimmed(error_log());
  check(result, "nvJitLinkComplete",
        "linking " + what_ + summarise_link_errors(log) + "\n  inputs: " + inputs + "\n\n" + log);
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

}  // namespace ptxrt::detail
