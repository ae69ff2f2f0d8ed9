#include "jit/include_scanner.hpp"

#include <set>

#include "ptxrt/core/error.hpp"

namespace ptxrt::detail {
namespace {

struct IncludeDirective {
  std::string name;
  bool quoted = false;
};

// The #include directives of `text`, in order; "#  include" and leading blanks allowed.
std::vector<IncludeDirective> include_directives(std::string_view text) {
  std::vector<IncludeDirective> directives;
  auto skip_blanks = [](std::string_view& line) {
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  };
  while (!text.empty()) {
    std::size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    skip_blanks(line);
    if (!line.starts_with('#')) continue;
    line.remove_prefix(1);
    skip_blanks(line);
    if (!line.starts_with("include")) continue;
    line.remove_prefix(7);
    skip_blanks(line);
    if (line.empty() || (line.front() != '"' && line.front() != '<')) continue;
    const char close = line.front() == '"' ? '"' : '>';
    std::size_t end = line.find(close, 1);
    if (end == std::string_view::npos) continue;
    directives.push_back({std::string(line.substr(1, end - 1)), close == '"'});
  }
  return directives;
}

class Scanner {
 public:
  Scanner(const NamedHeaderLookup& named, const std::vector<std::filesystem::path>& search_paths)
      : named_(named), search_paths_(search_paths) {}

  void scan(std::string_view text, const std::filesystem::path& directory) {
    for (const IncludeDirective& directive : include_directives(text)) {
      if (std::optional<std::string_view> content = named_(directive.name)) {
        if (seen_.insert("named:" + directive.name).second) {
          found_.push_back({directive.name, std::string(*content)});
          scan(*content, {});
        }
        continue;
      }
      std::optional<std::filesystem::path> path = locate(directive, directory);
      if (!path) continue;
      std::error_code error;
      std::filesystem::path canonical = std::filesystem::weakly_canonical(*path, error);
      if (!seen_.insert("file:" + (error ? *path : canonical).string()).second) continue;
      std::optional<std::string> content = read_source_if_readable(*path);
      if (!content) continue;
      found_.push_back({directive.name, *content});
      scan(*content, path->parent_path());
    }
  }

  std::vector<IncludedFile> take() { return std::move(found_); }

 private:
  std::optional<std::filesystem::path> locate(const IncludeDirective& directive,
                                              const std::filesystem::path& directory) const {
    std::error_code error;
    if (directive.quoted && !directory.empty() &&
        std::filesystem::is_regular_file(directory / directive.name, error))
      return directory / directive.name;
    for (const std::filesystem::path& folder : search_paths_)
      if (std::filesystem::is_regular_file(folder / directive.name, error))
        return folder / directive.name;
    return std::nullopt;
  }

  const NamedHeaderLookup& named_;
  const std::vector<std::filesystem::path>& search_paths_;
  std::set<std::string> seen_;
  std::vector<IncludedFile> found_;
};

}  // namespace

std::vector<IncludedFile> find_included_files(std::string_view source,
                                              const std::filesystem::path& directory,
                                              const NamedHeaderLookup& named_headers,
                                              const std::vector<std::filesystem::path>& search_paths) {
  Scanner scanner(named_headers, search_paths);
  scanner.scan(source, directory);
  return scanner.take();
}

std::optional<std::string> read_source_if_readable(const std::filesystem::path& path) {
  try {
    return read_regular_file_if_exists(path, "header", source_limits);
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace ptxrt::detail
