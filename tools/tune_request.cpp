#include "tune_request.hpp"

#include <algorithm>
#include <array>
#include <filesystem>

#include "ptxrt/core/error.hpp"
#include "support/quoted.hpp"

namespace ptxrt::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::string_view kernel_name = "kernel";
// What a resume gives itself, and the worker's mode, which only a tune starts.
constexpr std::array<std::string_view, 5> not_recorded{"help", "db", "resume", "continues",
                                                       "worker"};

bool is_flag(const CLI::Option& option) { return option.get_expected_min() == 0; }

// The recorded path, absolute; a builtin problem's name stays as it is.
std::string absolute_if_file(const std::string& text) {
  std::error_code error;
  return fs::exists(text, error) ? fs::absolute(text).string() : text;
}

}  // namespace

json tune_request(const CLI::App& tune) {
  json request = json::object();
  for (const CLI::Option* option : tune.get_options()) {
    const std::string& name = option->get_single_name();
    if (option->count() == 0 ||
        std::find(not_recorded.begin(), not_recorded.end(), name) != not_recorded.end())
      continue;
    if (is_flag(*option)) {
      request[name] = true;
      continue;
    }
    std::vector<std::string> values = option->results();
    if (name == kernel_name || name == "problem" || name == "source")
      std::transform(values.begin(), values.end(), values.begin(), absolute_if_file);
    request[name] = values;
  }
  return request;
}

std::vector<std::string> request_arguments(const json& request, const CLI::App& tune,
                                           std::string_view where) {
  const auto refuse = [&](const std::string& field, const std::string& problem) {
    return Error(ErrorKind::invalid_argument,
                 std::string(where) + ": " + detail::quoted(field) + " " + problem);
  };
  std::vector<std::string> arguments{"tune"};
  std::vector<std::string> kernel;
  for (const auto& [name, value] : request.items()) {
    const CLI::Option* option = tune.get_option_no_throw(
        name == kernel_name ? name : (name.size() == 1 ? "-" : "--") + name);
    if (option == nullptr ||
        std::find(not_recorded.begin(), not_recorded.end(), name) != not_recorded.end())
      throw refuse(name, "is no option a request records (recorded by a later ptxrt?)");
    if (is_flag(*option)) {
      if (value != json(true)) throw refuse(name, "is a flag: expected true");
      arguments.push_back("--" + name);
      continue;
    }
    if (!value.is_array() || value.empty() ||
        !std::all_of(value.begin(), value.end(), [](const json& item) { return item.is_string(); }))
      throw refuse(name, "expected a list of its values as strings");
    for (const json& item : value) {
      if (name == kernel_name)
        kernel.push_back(item.get<std::string>());
      else
        arguments.push_back("--" + name + "=" + item.get<std::string>());
    }
  }
  if (!kernel.empty()) arguments.push_back("--");
  arguments.insert(arguments.end(), kernel.begin(), kernel.end());
  return arguments;
}

}  // namespace ptxrt::cli
