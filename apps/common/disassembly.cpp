#include "apps/common/disassembly.hpp"

#include <cstdlib>
#include <regex>

#include "ptxrt/core/error.hpp"
#include "ptxrt/core/program.hpp"
#include "ptxrt/core/target.hpp"
#include "support/child_process.hpp"

namespace ptxrt::apps {
namespace {

namespace fs = std::filesystem;

// A disassembler is quick; this only bounds a tool that hangs.
constexpr std::chrono::seconds tool_timeout{120};

std::vector<fs::path> toolkit_bin_folders() {
  std::vector<fs::path> folders;
  for (const char* variable : {"CUDA_PATH", "CUDA_HOME"})
    if (const char* value = std::getenv(variable); value && *value)
      folders.push_back(fs::path(value) / "bin");
  if (const std::string nvrtc = nvrtc_library_path(); !nvrtc.empty())
    folders.push_back(fs::path(nvrtc).parent_path().parent_path() / "bin");
  for (const fs::path& include : toolkit_include_paths())
    folders.push_back(include.parent_path() / "bin");
  if (const char* path = std::getenv("PATH"))
    for (std::string_view rest = path; !rest.empty();) {
      const std::size_t colon = rest.find(':');
      if (colon != 0) folders.emplace_back(rest.substr(0, colon));
      rest.remove_prefix(colon == std::string_view::npos ? rest.size() : colon + 1);
    }
  return folders;
}

std::string run_tool(const std::vector<std::string>& arguments, std::string_view cubin) {
  // The tools read a path: the CUBIN is their /dev/stdin, and nothing is left on disk.
  const detail::FileDescriptor input = detail::memory_file(cubin, "ptxrt.cubin");
  detail::ChildProcess tool(arguments, input.get());
  std::string output;
  while (std::optional<std::string> line = tool.read_line(tool_timeout)) output += *line + "\n";
  const bool finished = tool.closed();
  const std::string status = tool.terminate();
  if (!finished || status != "exited with code 0")
    throw Error(ErrorKind::invalid_argument, fs::path(arguments[0]).filename().string() +
                                                 " could not disassemble the CUBIN (" +
                                                 std::to_string(cubin.size()) + " bytes): it " +
                                                 (finished ? status : "did not finish in time") +
                                                 "; its own message, if any, is on stderr");
  return output;
}

// The opcode's class, or empty: "FFMA.FTZ" -> FFMA, "LDG.E.128" -> LDG, "ULDC.64" -> LDC.
std::string_view class_of(std::string_view opcode) {
  const std::string_view base = opcode.substr(0, opcode.find('.'));
  if (base == "ULDC") return "LDC";
  if (base == "LDSM") return "LDS";
  if (base == "JMP") return "BRA";
  if (base == "BRX") return "BRA";
  for (const std::string& known : instruction_classes())
    if (base == known) return known;
  return {};
}

}  // namespace

std::optional<fs::path> find_toolkit_program(std::string_view name) {
  for (const fs::path& folder : toolkit_bin_folders()) {
    const fs::path candidate = folder / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

std::string disassemble(std::string_view cubin) {
  if (std::optional<fs::path> nvdisasm = find_toolkit_program("nvdisasm"))
    return run_tool({nvdisasm->string(), "-c", "/dev/stdin"}, cubin);
  if (std::optional<fs::path> cuobjdump = find_toolkit_program("cuobjdump"))
    return run_tool({cuobjdump->string(), "-sass", "/dev/stdin"}, cubin);
  std::string searched;
  for (const fs::path& folder : toolkit_bin_folders())
    searched += (searched.empty() ? "" : ", ") + folder.string();
  throw Error(
      ErrorKind::not_found,
      "SASS needs nvdisasm or cuobjdump from the CUDA toolkit, and neither was found (looked "
      "in " +
          searched +
          "): install the toolkit's, or pip's nvidia-cuda-nvdisasm "
          "(scripts/setup.sh adds it to a toolkit made of pip wheels) and put its bin/ on PATH "
          "or set CUDA_PATH");
}

const std::vector<std::string>& instruction_classes() {
  static const std::vector<std::string> classes{"FFMA", "LDG", "STG", "LDS", "STS",
                                                "LDL",  "STL", "LDC", "BAR", "BRA"};
  return classes;
}

int KernelInstructions::count(std::string_view instruction_class) const {
  auto found = by_class.find(instruction_class);
  return found == by_class.end() ? 0 : found->second;
}

std::vector<KernelInstructions> count_instructions(std::string_view sass) {
  // nvdisasm opens a kernel with `.section .text.NAME,...`, cuobjdump with `Function : NAME`.
  static const std::regex kernel_start(R"(^\s*(?:\.section\s+\.text\.([^,\s]+)|Function : (\S+)))");
  static const std::regex instruction(
      R"(/\*[0-9a-f]{4,}\*/\s+(?:\{\s*)?(@!?U?P[0-9T]+\s+)?([A-Z][A-Z0-9_.]*))");
  std::vector<KernelInstructions> kernels;
  std::match_results<std::string_view::const_iterator> match;
  for (std::string_view rest = sass; !rest.empty();) {
    const std::size_t newline = rest.find('\n');
    const std::string_view line = rest.substr(0, newline);
    rest.remove_prefix(newline == std::string_view::npos ? rest.size() : newline + 1);
    if (std::regex_search(line.begin(), line.end(), match, kernel_start)) {
      kernels.push_back({match[1].matched ? match[1].str() : match[2].str(), 0, {}});
      continue;
    }
    if (kernels.empty() || !std::regex_search(line.begin(), line.end(), match, instruction))
      continue;
    // `@!PT` never executes: ptxas pads with it.
    if (match[1].matched && match[1].str().starts_with("@!PT")) continue;
    KernelInstructions& kernel = kernels.back();
    ++kernel.total;
    if (std::string_view found = class_of(match[2].str()); !found.empty())
      ++kernel.by_class[std::string(found)];
  }
  return kernels;
}

}  // namespace ptxrt::apps
