// `ptxrt compile`: a kernel to PTX (stdout by default) or CUBIN (to a file), with the compile log's
// warnings on stderr.
#include <fstream>
#include <iostream>
#include <memory>

#include "cli.hpp"
#include "host/common/kernel_defines.hpp"
#include "ptxrt/error.hpp"

namespace ptxrt::cli {
namespace {

struct CompileArguments {
  std::string kernel;
  std::vector<std::string> defines;
  NvrtcArguments nvrtc;
  std::string arch = "auto";
  std::string emit = "ptx";
  std::string output;  // "" or "-": stdout
};

void write_output(const Image& image, const std::string& output) {
  const bool to_stdout = output.empty() || output == "-";
  if (to_stdout && image.format == ImageFormat::cubin)
    throw Error(ErrorKind::invalid_argument,
                "--emit cubin produces binary, which is not written to stdout: name a file with "
                "-o FILE");
  if (to_stdout) {
    std::cout << image.data;
    if (!image.data.ends_with('\n')) std::cout << '\n';
    return;
  }
  std::ofstream file(output, std::ios::binary | std::ios::trunc);
  file.write(image.data.data(), static_cast<std::streamsize>(image.data.size()));
  file.close();
  if (!file) throw Error(ErrorKind::io, "cannot write " + output);
}

void run_compile(const CompileArguments& arguments) {
  const ImageFormat format = arguments.emit == "cubin" ? ImageFormat::cubin : ImageFormat::ptx;
  const Program program = load_program(arguments.kernel);
  CompileOptions options;
  options.defines = parse_defines(arguments.defines);
  host::check_declared(program, options.defines);
  arguments.nvrtc.apply_to(options);
  options.target = choose_target(arguments.arch, format);
  // Only what the user should read: ptxas' resource report is `ptxrt resources`' business.
  options.resource_usage = false;
  const Image image = compile(program, options);
  if (!image.compile_log.empty()) std::cerr << image.compile_log << '\n';
  write_output(image, arguments.output);
}

}  // namespace

void add_compile_commands(CLI::App& app) {
  auto arguments = std::make_shared<CompileArguments>();
  CLI::App* command =
      app.add_subcommand("compile", "Compile a kernel to PTX (printed) or CUBIN (written with -o)");
  add_kernel_argument(*command, arguments->kernel);
  add_define_option(*command, arguments->defines);
  add_nvrtc_arguments(*command, arguments->nvrtc);
  add_arch_option(*command, arguments->arch);
  command->add_option("--emit", arguments->emit, "what to produce")
      ->check(CLI::IsMember({"ptx", "cubin"}))
      ->capture_default_str();
  command->add_option("-o,--output", arguments->output,
                      "the file to write (default: stdout, for PTX only)");
  command->callback([arguments] { run_compile(*arguments); });
}

}  // namespace ptxrt::cli
