// SASS, the machine code a CUBIN holds, through the toolkit's disassembler (nvdisasm, else
// cuobjdump) run as a child process without a shell; and the instruction mix of each kernel
// read from it. No GPU needed.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxrt::apps {

// Where the toolkit program `name` ("nvdisasm") is: $CUDA_PATH/bin, $CUDA_HOME/bin, the bin/
// beside the NVRTC library in use, the build's toolkit, then $PATH. Nothing when none has it.
std::optional<std::filesystem::path> find_toolkit_program(std::string_view name);

// The disassembly of every kernel of `cubin`, as the tool prints it (nvdisasm -c, or
// cuobjdump -sass). Throws Error (not_found) naming both tools and where they were looked for
// when neither is found; Error (invalid_argument) with the tool's exit status when it fails.
std::string disassemble(std::string_view cubin);

// The instruction classes counted per kernel, in report order: FFMA; loads and stores by memory
// space (LDG/STG global, LDS/STS shared, LDL/STL local, LDC constant); barriers (BAR); branches
// (BRA, BRX, JMP).
const std::vector<std::string>& instruction_classes();

struct KernelInstructions {
  std::string kernel;  // the entry symbol
  int total = 0;       // every instruction that can execute (not @!PT padding)
  std::map<std::string, int, std::less<>> by_class;  // instruction_classes() -> count

  int count(std::string_view instruction_class) const;
};

// Counts each kernel's instructions in the output of disassemble() (either tool's format).
std::vector<KernelInstructions> count_instructions(std::string_view sass);

}  // namespace ptxrt::apps
