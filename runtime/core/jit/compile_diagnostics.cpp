#include "jit/compile_diagnostics.hpp"

#include <algorithm>
#include <charconv>
#include <vector>

namespace ptxrt::detail {
namespace {

struct Diagnostic {
  std::string file;
  int line = 0;
};

// "kernel.cu(12): error: ..." → {"kernel.cu", 12}; nothing for other log lines.
std::optional<Diagnostic> parse_diagnostic(std::string_view text) {
  std::size_t close = text.find("): ");
  if (close == std::string_view::npos) return std::nullopt;
  std::size_t open = text.rfind('(', close);
  if (open == std::string_view::npos || open == 0) return std::nullopt;
  int line = 0;
  auto [end, error] = std::from_chars(text.data() + open + 1, text.data() + close, line);
  if (error != std::errc() || end != text.data() + close || line <= 0) return std::nullopt;
  return Diagnostic{std::string(text.substr(0, open)), line};
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    std::size_t newline = text.find('\n');
    lines.push_back(text.substr(0, newline));
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
  }
  return lines;
}

bool is_caret_line(std::string_view line) {
  return line.find('^') != std::string_view::npos &&
         line.find_first_not_of(" \t^") == std::string_view::npos;
}

// NVRTC echoes the offending line indented by two spaces, then a caret line; the caret's column
// is kept (tabs included) so that it lines up under the numbered context line.
std::string context_block(std::string_view file_text, int line, int context_lines,
                          std::string_view caret) {
  std::vector<std::string_view> lines = split_lines(file_text);
  const int first = std::max(1, line - context_lines);
  const int last = std::min(static_cast<int>(lines.size()), line + context_lines);
  const std::size_t width = std::to_string(std::max(last, line)).size();
  std::string block;
  for (int number = first; number <= last; ++number) {
    std::string label = std::to_string(number);
    block += number == line ? "  > " : "    ";
    block += std::string(width - label.size(), ' ') + label + " | ";
    block += lines[static_cast<std::size_t>(number - 1)];
    block += '\n';
    if (number == line && !caret.empty())
      block += "    " + std::string(width, ' ') + " | " + std::string(caret) + "\n";
  }
  return block;
}

}  // namespace

std::string annotate_compile_log(std::string_view log, const SourceLookup& lookup,
                                 int context_lines) {
  std::vector<std::string_view> lines = split_lines(log);
  std::string annotated;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    annotated += lines[i];
    annotated += '\n';
    std::optional<Diagnostic> diagnostic = parse_diagnostic(lines[i]);
    std::optional<std::string> text = diagnostic ? lookup(diagnostic->file) : std::nullopt;
    if (!text) continue;
    std::string_view caret;
    if (i + 2 < lines.size() && is_caret_line(lines[i + 2])) {
      caret = lines[i + 2].substr(std::min<std::size_t>(2, lines[i + 2].size()));
      i += 2;  // the echo and caret are replaced by the context block
    }
    annotated += context_block(*text, diagnostic->line, context_lines, caret);
  }
  return annotated;
}

}  // namespace ptxrt::detail
