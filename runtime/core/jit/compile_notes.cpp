#include "jit/compile_notes.hpp"

#include <algorithm>
#include <cctype>

#include "jit/std_headers.hpp"

namespace ptxrt::detail {

namespace {

bool is_word_character(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// Whether `word` stands in `line` as a whole identifier.
bool names_word(std::string_view line, std::string_view word) {
  for (std::size_t at = line.find(word); at != std::string_view::npos;
       at = line.find(word, at + 1)) {
    const bool starts = at == 0 || !is_word_character(line[at - 1]);
    const std::size_t end = at + word.size();
    if (starts && (end == line.size() || !is_word_character(line[end]))) return true;
  }
  return false;
}

}  // namespace

std::string missing_standard_header_notes(std::string_view log, std::string_view source) {
  constexpr std::string_view marker = "cannot open source file \"";
  std::string notes;
  for (std::size_t at = log.find(marker); at != std::string_view::npos;
       at = log.find(marker, at + 1)) {
    const std::size_t start = at + marker.size(), end = log.find('"', start);
    if (end == std::string_view::npos) break;
    const std::string name(log.substr(start, end - start));
    if (name.find('/') != std::string::npos ||
        source.find("<" + name + ">") == std::string_view::npos)
      continue;
    notes += "\nnote: <";
    notes += name;
    notes +=
        "> is not among the standard headers ptxrt gives NVRTC, which are those with a "
        "device form:";
    for (const detail::NamedText& header : detail::standard_headers()) {
      notes += ' ';
      notes += header.name;
    }
    notes +=
        ". Host-only headers (<vector>, <string>, <iostream>) cannot be compiled for the "
        "device; the toolkit's own (cuda/std/..., cooperative_groups.h) are on the include "
        "path.\n";
  }
  return notes;
}

std::string builtin_header_clash_notes(std::string_view log, const std::vector<Define>& defines) {
  constexpr std::string_view marker = "__nv_nvrtc_builtin_header.h(";
  std::vector<std::string> clashing;
  for (std::size_t at = log.find(marker); at != std::string_view::npos;
       at = log.find(marker, at + 1)) {
    // The diagnostic's line, then the header's line it quotes.
    const std::size_t diagnostic_end = log.find('\n', at);
    if (diagnostic_end == std::string_view::npos) break;
    const std::size_t quoted_end = log.find('\n', diagnostic_end + 1);
    const std::string_view quoted = log.substr(diagnostic_end + 1, quoted_end - diagnostic_end - 1);
    for (const Define& define : defines)
      if (names_word(quoted, define.name) &&
          std::find(clashing.begin(), clashing.end(), define.name) == clashing.end())
        clashing.push_back(define.name);
  }
  if (clashing.empty()) return {};
  std::string names;
  for (const std::string& name : clashing) names += (names.empty() ? "" : ", ") + name;
  return "\nnote: the define(s) " + names +
         " name an identifier of NVRTC's builtin header, which NVRTC reads after the -D "
         "options and before the source: rename the define (a tunable: in the space and in the "
         "kernel).\n";
}

}  // namespace ptxrt::detail
