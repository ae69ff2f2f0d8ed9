// `ptxrt compile`: a kernel (or a program of several files and device objects) to PTX or SASS
// (stdout by default), or to a CUBIN, fatbin or LTO-IR (to a file), with the compile log's
// warnings on stderr.
#include <fstream>
#include <iostream>
#include <memory>

#include "apps/common/disassembly.hpp"
#include "apps/common/kernel_defines.hpp"
#include "cli.hpp"
#include "ptxrt/core/error.hpp"
#include "support/quoted.hpp"

namespace ptxrt::cli {
namespace {

struct CompileArguments {
  std::string kernel;
  std::vector<std::string> defines;
  NvrtcArguments nvrtc;
  LinkArguments link;
  std::string arch = "auto";
  std::string emit = "ptx";
  std::string output;  // "" or "-": stdout
};

void write_output(std::string_view bytes, bool binary, const CompileArguments& arguments) {
  const std::string& output = arguments.output;
  const bool to_stdout = output.empty() || output == "-";
  if (to_stdout && binary)
    throw Error(ErrorKind::invalid_argument,
                "--emit " + arguments.emit +
                    " produces binary, which is not written to stdout: name a file with -o FILE");
  if (to_stdout) {
    std::cout << bytes;
    if (!bytes.ends_with('\n')) std::cout << '\n';
    return;
  }
  std::ofstream file(output, std::ios::binary | std::ios::trunc);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  file.close();
  if (!file) throw Error(ErrorKind::io, "cannot write " + output);
}

ImageFormat format_to_compile(const std::string& emit) {
  if (emit == "ptx") return ImageFormat::ptx;
  if (emit == "fatbin") return ImageFormat::fatbin;
  if (emit == "ltoir") return ImageFormat::ltoir;
  return ImageFormat::cubin;  // cubin, and sass (disassembled from the CUBIN)
}

// A fatbin's --arch lists its parts: a CUBIN per sm_XY, PTX per compute_XY, each checked.
Target fatbin_target(const std::string& arch_list) {
  Target target{{}, ImageFormat::fatbin, {}};
  for (const std::string& arch : target_architectures(arch_list)) {
    const Target part =
        choose_target(arch, arch.starts_with("compute_") ? ImageFormat::ptx : ImageFormat::cubin);
    target.arch += (target.arch.empty() ? "" : ",") + part.arch;
  }
  return target;
}

void run_compile(const CompileArguments& arguments) {
  const ImageFormat format = format_to_compile(arguments.emit);
  const Program program = arguments.link.add_to(load_program(arguments.kernel));
  CompileOptions options;
  options.defines = parse_defines(arguments.defines);
  apps::check_declared(program, options.defines);
  arguments.nvrtc.apply_to(options);
  arguments.link.apply_to(options);
  if (format != ImageFormat::fatbin && arguments.arch.find(',') != std::string::npos)
    throw Error(ErrorKind::invalid_argument,
                "--arch " + detail::quoted(arguments.arch) + " lists several architectures, " +
                    "which make one fatbin (a CUBIN per sm_XY, PTX per compute_XY): add --emit "
                    "fatbin, or give one architecture");
  options.target = format == ImageFormat::fatbin ? fatbin_target(arguments.arch)
                                                 : choose_target(arguments.arch, format);
  // Only what the user should read: ptxas' resource report is `ptxrt resources`' business.
  options.resource_usage = false;
  const Image image = compile(program, options);
  if (!image.compile_log.empty()) std::cerr << image.compile_log << '\n';
  if (arguments.emit == "sass")
    write_output(apps::disassemble(image.data), false, arguments);
  else
    write_output(image.data, format != ImageFormat::ptx, arguments);
}

}  // namespace

void add_compile_commands(CLI::App& app) {
  auto arguments = std::make_shared<CompileArguments>();
  CLI::App* command = app.add_subcommand(
      "compile",
      "Compile a kernel, or a program of several files and device objects, to PTX or SASS "
      "(printed), or to a CUBIN, fatbin or LTO-IR (written with -o)");
  add_kernel_argument(*command, arguments->kernel);
  add_link_arguments(*command, arguments->link);
  add_define_option(*command, arguments->defines);
  add_nvrtc_arguments(*command, arguments->nvrtc);
  add_arch_option(*command, arguments->arch);
  command
      ->add_option("--emit", arguments->emit,
                   "what to produce: ptx, cubin, fatbin (a CUBIN per sm_XY and PTX per compute_XY "
                   "of --arch sm_80,sm_90,compute_90), ltoir, or sass (each kernel's machine code, "
                   "through the toolkit's nvdisasm or cuobjdump)")
      ->check(CLI::IsMember({"ptx", "cubin", "fatbin", "ltoir", "sass"}))
      ->capture_default_str();
  command->add_option("-o,--output", arguments->output,
                      "the file to write (default: stdout, for PTX and SASS only)");
  command->callback([arguments] { run_compile(*arguments); });
}

}  // namespace ptxrt::cli
