// `ptxrt`: compile, inspect and cache CUDA kernels from the command line. Each command group lives
// in its own file and registers itself here.
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "closest_pair.hpp"
#include "host_commands.hpp"
#include "multi_gpu.hpp"
#include "ptxrt/core/program.hpp"
#include "support/quoted.hpp"
#include "unknown_command.hpp"

namespace {

// One line for a command line that does not parse: a mistyped command or option named with the
// closest one, anything else in CLI11's words after the command it concerns.
std::string parse_error_message(const CLI::App& app, const std::vector<std::string>& arguments,
                                const CLI::ParseError& error) {
  // A mistyped command name fails as whatever CLI11 made of the word (an extra argument, a
  // missing command): say what it is instead.
  if (const std::optional<std::string> unknown =
          ptxrt::cli::unknown_command_message(app, arguments))
    return *unknown;
  const std::string what = error.what();
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
    // "The following arguments were not expected: b a", listed last to first.
    std::vector<std::string> extras;
    std::istringstream words(what.substr(what.find(": ") + 2));
    for (std::string word; words >> word;) extras.insert(extras.begin(), word);
    return ptxrt::cli::unexpected_arguments_message(app, arguments, extras);
  }
  const std::string command = ptxrt::cli::command_path(app, arguments);
  std::string message = (command == app.get_name() ? "" : command.substr(app.get_name().size() + 1) + ": ") + what;
  // "--emit: cubn not in {ptx,cubin,fatbin,ltoir,sass}": name the value meant.
  static const std::regex not_in(R"((\S+) not in \{([^}]*)\})");
  if (std::smatch match; std::regex_search(what, match, not_in)) {
    std::vector<std::string> values;
    std::istringstream list(match[2].str());
    for (std::string value; std::getline(list, value, ',');) values.push_back(value);
    if (const std::optional<std::string> closest = ptxrt::cli::closest_name(match[1].str(), values))
      message += " (did you mean '" + *closest + "'?)";
  }
  return message;
}

// `ptxrt help [command...]`: the usage of ptxrt or of the command named, as --help prints it.
void add_help_command(CLI::App& app) {
  auto words = std::make_shared<std::vector<std::string>>();
  CLI::App* command = app.add_subcommand(
      "help", "Print the usage of ptxrt or of a command (ptxrt help tune show)");
  command->add_option("command", *words, "the command, and the command under it");
  command->callback([&app, words] {
    const CLI::App* named = &app;
    std::string path;
    for (const std::string& word : *words) {
      std::vector<std::string> names;
      const CLI::App* next = nullptr;
      // A command in no group is internal, and has no help to show.
      for (const CLI::App* candidate : named->get_subcommands({}))
        if (!candidate->get_group().empty()) {
          names.push_back(candidate->get_name());
          if (candidate->check_name(word)) next = candidate;
        }
      if (next == nullptr) {
        const std::optional<std::string> closest = ptxrt::cli::closest_name(word, names);
        std::cerr << "ptxrt: error: unknown command " << ptxrt::detail::quoted(path + word)
                  << (closest ? " (did you mean '" + path + *closest + "'?)" : std::string())
                  << '\n';
        throw CLI::RuntimeError(2);
      }
      named = next;
      path += word + " ";
    }
    // Not named->help(): on ptxrt itself that shows the command selected, which is this one.
    const std::string name = "ptxrt " + path;  // "ptxrt tune show "
    std::cout << named->get_formatter()->make_help(named, name.substr(0, name.size() - 1),
                                                  CLI::AppFormatMode::Normal);
  });
}

}  // namespace

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
  add_help_command(app);
  app.set_version_flag("-v,--version", "ptxrt " PTXRT_VERSION);
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
    // --help and --version arrive here too, as "successes" that print.
    if (error.get_exit_code() == 0) return app.exit(error);
    std::cerr << "ptxrt: error: " << parse_error_message(app, {argv + 1, argv + argc}, error)
              << '\n';
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "ptxrt: error: " << error.what() << '\n';
    return 1;
  }
}
