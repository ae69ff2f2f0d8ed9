#include "unknown_command.hpp"

#include <algorithm>
#include <cctype>
#include <numeric>

#include "support/quoted.hpp"

namespace ptxrt::cli {
namespace {

const CLI::App* find_command(const CLI::App& group, const std::string& name) {
  for (const CLI::App* command : group.get_subcommands({}))
    if (command->check_name(name)) return command;
  return nullptr;
}

std::vector<std::string> command_names(const CLI::App& group) {
  std::vector<std::string> names;
  // A command in no group is internal, hidden from --help and from these suggestions alike.
  for (const CLI::App* command : group.get_subcommands({}))
    if (!command->get_group().empty()) names.push_back(command->get_name());
  return names;
}

// Whether the word after `command` on the command line must name one of its commands: it has
// some, and no positional argument that could take the word instead (`tune` takes a kernel).
bool expects_command_name(const CLI::App& command) {
  const std::vector<const CLI::Option*> positionals =
      command.get_options([](const CLI::Option* option) { return option->get_positional(); });
  return !command.get_subcommands({}).empty() && positionals.empty();
}

std::string join(const std::vector<std::string>& names) {
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : ", ") + name;
  return joined;
}

// The deepest command the arguments name, and its path ("ptxrt cache warm").
std::pair<const CLI::App*, std::string> named_command(const CLI::App& app,
                                                      const std::vector<std::string>& arguments) {
  const CLI::App* command = &app;
  std::string path = app.get_name();
  for (const std::string& word : arguments) {
    if (word == "--") break;
    if (word.starts_with('-')) continue;
    if (const CLI::App* next = find_command(*command, word)) {
      command = next;
      path += " " + word;
    }
  }
  return {command, path};
}

// "--arch", "-D", "--define": every name an option of `command` answers to.
std::vector<std::string> option_names(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    for (const std::string& name : option->get_snames()) names.push_back("-" + name);
  }
  if (const CLI::Option* help = command.get_help_ptr()) {
    for (const std::string& name : help->get_lnames()) names.push_back("--" + name);
    for (const std::string& name : help->get_snames()) names.push_back("-" + name);
  }
  return names;
}

}  // namespace

std::string command_path(const CLI::App& app, const std::vector<std::string>& arguments) {
  return named_command(app, arguments).second;
}

std::string unexpected_arguments_message(const CLI::App& app,
                                         const std::vector<std::string>& arguments,
                                         const std::vector<std::string>& extras) {
  const auto [command, path] = named_command(app, arguments);
  const std::vector<std::string> names = option_names(*command);
  std::string message;
  for (const std::string& word : extras) {
    message += message.empty() ? "" : "; ";
    // A negative number is a value ("-1"), not an option.
    if (!word.starts_with('-') || word.size() < 2 ||
        std::isdigit(static_cast<unsigned char>(word[1]))) {
      message += "unexpected argument " + detail::quoted(word) + " for '" + path + "'";
      continue;
    }
    // "--arch=sm_90" and "-Dname" name their option before the value.
    const std::string name =
        word.starts_with("--") ? word.substr(0, word.find('=')) : word.substr(0, 2);
    message += "unknown option " + detail::quoted(name) + " for '" + path + "'";
    if (const std::optional<std::string> closest = closest_name(name, names))
      message += " (did you mean '" + *closest + "'?)";
    else
      message += " (see '" + path + " --help')";
  }
  return message;
}

std::size_t edit_distance(std::string_view from, std::string_view to) {
  // Three rows of the dynamic programme: the swap of neighbours looks two rows back.
  std::vector<std::size_t> before(to.size() + 1), previous(to.size() + 1), current(to.size() + 1);
  std::iota(previous.begin(), previous.end(), std::size_t{0});
  for (std::size_t i = 1; i <= from.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= to.size(); ++j) {
      const std::size_t substitution = from[i - 1] == to[j - 1] ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + substitution});
      if (i > 1 && j > 1 && from[i - 1] == to[j - 2] && from[i - 2] == to[j - 1])
        current[j] = std::min(current[j], before[j - 2] + 1);
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[to.size()];
}

std::optional<std::string> closest_name(std::string_view word,
                                        const std::vector<std::string>& names) {
  const std::size_t allowed = std::max<std::size_t>(1, word.size() / 3);
  std::optional<std::string> closest;
  std::size_t closest_distance = allowed + 1;
  for (const std::string& name : names) {
    const std::size_t distance = edit_distance(word, name);
    if (distance < closest_distance) {
      closest = name;
      closest_distance = distance;
    }
  }
  return closest;
}

std::optional<std::string> unknown_command_message(const CLI::App& app,
                                                   const std::vector<std::string>& arguments) {
  const CLI::App* group = &app;
  std::string path;  // the commands above the word: "" or "cache "
  for (const std::string& word : arguments) {
    if (word.starts_with('-') || !expects_command_name(*group)) return std::nullopt;
    if (const CLI::App* command = find_command(*group, word)) {
      group = command;
      path += word + " ";
      continue;
    }
    const std::vector<std::string> names = command_names(*group);
    const std::string unknown = detail::quoted(path + word);
    if (const std::optional<std::string> closest = closest_name(word, names))
      return "unknown command " + unknown + " (did you mean '" + path + *closest + "'?)";
    return "unknown command " + unknown + " (the commands" +
           (path.empty() ? "" : " of '" + path.substr(0, path.size() - 1) + "'") +
           " are: " + join(names) + ")";
  }
  return std::nullopt;
}

}  // namespace ptxrt::cli
