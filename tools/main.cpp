// `ptxrt`: compile, inspect and cache CUDA kernels from the command line. Each command group lives
// in its own file and registers itself here.
#include <exception>
#include <iostream>
#include <optional>

#include "cli.hpp"
#include "ptxrt/core/program.hpp"
#include "closest_pair.hpp"
#include "host_commands.hpp"
#include "multi_gpu.hpp"
#include "unknown_command.hpp"

int main(int argc, char** argv) {
  // `compile --lto --link` and `resources --lto --link` link in a child process of this one.
  if (std::optional<int> code = ptxrt::serve_isolated_link(argc, argv)) return *code;
  CLI::App app{
      "ptxrt: JIT-compile CUDA kernels with NVRTC, inspect their resources, manage the "
      "disk cache",
      "ptxrt"};
  ptxrt::cli::add_devices_commands(app);
  ptxrt::cli::add_kernels_commands(app);
  ptxrt::cli::add_compile_commands(app);
  ptxrt::cli::add_resources_commands(app);
  ptxrt::cli::add_cache_commands(app);
  ptxrt::cli::add_demo_command(app);
  add_run_command(app);
  add_bench_command(app);
  ptxrt::cli::add_closest_pair_command(app);
  ptxrt::cli::add_multi_gpu_command(app);
  ptxrt::cli::add_tune_commands(app);
  // One command per invocation: CLI11 would otherwise read a command's name in another's
  // arguments as a second command (`ptxrt tune closest-pair` would run `closest-pair`).
  app.require_subcommand(0, 1);
  try {
    app.parse(argc, argv);
    // Checked here rather than by require_subcommand(), which would hide an unknown command's
    // name behind "a subcommand is required".
    if (app.get_subcommands().empty()) throw CLI::RequiredError("A command");
    return 0;
  } catch (const CLI::RuntimeError& failure) {
    // A command that ran and failed (e.g. a verification), having said why.
    return failure.get_exit_code();
  } catch (const CLI::ParseError& error) {
    // --help arrives here too, as a "success" that prints the help.
    if (error.get_exit_code() == 0) return app.exit(error);
    // A mistyped command name fails as whatever CLI11 made of the word (an extra argument, a
    // missing command): say what it is instead.
    if (const std::optional<std::string> unknown =
            ptxrt::cli::unknown_command_message(app, {argv + 1, argv + argc})) {
      std::cerr << "ptxrt: error: " << *unknown << '\n';
      return 2;
    }
    app.exit(error);
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "ptxrt: error: " << error.what() << '\n';
    return 1;
  }
}
