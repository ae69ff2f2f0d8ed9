#include "jit/option_words.hpp"

#include <sstream>
#include <string_view>

namespace ptxrt::detail {

std::vector<std::string> split_option_words(const std::vector<std::string>& options) {
  std::vector<std::string> words;
  for (const std::string& option : options) {
    std::istringstream stream{option};
    for (std::string word; stream >> word;) words.push_back(std::move(word));
  }
  return words;
}

ExtraOptions split_extra_options(const std::vector<std::string>& options) {
  ExtraOptions split;
  const std::vector<std::string> words = split_option_words(options);
  constexpr std::string_view long_form = "--include-path";
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    const bool separate = word == "-I" || word == long_form;
    if (separate && i + 1 < words.size())
      split.include_paths.emplace_back(words[++i]);
    else if (word.starts_with("-I") && word.size() > 2)
      split.include_paths.emplace_back(word.substr(2));
    else if (word.starts_with(std::string(long_form) + "=") && word.size() > long_form.size() + 1)
      split.include_paths.emplace_back(word.substr(long_form.size() + 1));
    else
      split.others.push_back(word);
  }
  return split;
}

}  // namespace ptxrt::detail
