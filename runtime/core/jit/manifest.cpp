#include "ptxrt/core/manifest.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>

#include "ptxrt/core/error.hpp"

namespace ptxrt {
namespace {

constexpr std::string_view marker = "// ptxrt:";

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

// Splits off the first whitespace-delimited word of `text`.
std::string_view next_word(std::string_view& text) {
  text = trim(text);
  std::size_t end = 0;
  while (end < text.size() && !is_space(text[end])) ++end;
  std::string_view word = text.substr(0, end);
  text = trim(text.substr(end));
  return word;
}

std::string join(const std::vector<std::string>& values) {
  std::string joined;
  for (const std::string& value : values) {
    if (!joined.empty()) joined += ", ";
    joined += value;
  }
  return joined;
}

class LineParser {
 public:
  LineParser(std::string_view file, int line) : file_(file), line_(line) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(ErrorKind::invalid_argument,
                std::string(file_) + ":" + std::to_string(line_) + ": " + what);
  }

  std::string identifier(std::string_view word, std::string_view role) const {
    if (!is_identifier(word))
      fail(std::string(role) + " '" + std::string(word) + "' is not a C identifier");
    return std::string(word);
  }

  // "{4, 8, 16} [default 8]" after "define NAME in".
  ManifestDefine define(std::string_view rest) const {
    ManifestDefine declared;
    declared.line = line_;
    declared.name = identifier(next_word(rest), "define name");
    if (next_word(rest) != "in") fail("expected 'in {values}' after " + declared.name);
    if (rest.empty() || rest.front() != '{') fail("expected '{' to open the values of " + declared.name);
    std::size_t close = rest.find('}');
    if (close == std::string_view::npos) fail("missing '}' after the values of " + declared.name);
    declared.values = values(rest.substr(1, close - 1), declared.name);
    rest = trim(rest.substr(close + 1));
    if (!rest.empty()) {
      if (next_word(rest) != "default") fail("expected 'default VALUE' or nothing after '}'");
      std::string value(next_word(rest));
      if (value.empty() || !rest.empty()) fail("expected exactly one value after 'default'");
      if (std::find(declared.values.begin(), declared.values.end(), value) == declared.values.end())
        fail("default " + value + " of " + declared.name + " is not one of " + join(declared.values));
      declared.default_value = std::move(value);
    }
    return declared;
  }

  // "NAME [NAME...]": each a define declared above, with integer values (the tuner enumerates and
  // constrains them as numbers).
  void tune(std::string_view rest, Manifest& manifest) const {
    if (trim(rest).empty()) fail("expected the names of declared defines after 'tune'");
    while (!rest.empty()) {
      const std::string name = identifier(next_word(rest), "tunable name");
      auto found = std::find_if(manifest.defines.begin(), manifest.defines.end(),
                                [&](const ManifestDefine& declared) { return declared.name == name; });
      if (found == manifest.defines.end())
        fail("tune " + name + ": no 'define " + name + "' line above");
      for (const std::string& value : found->values) {
        std::int64_t number = 0;
        auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
        if (error != std::errc() || end != value.data() + value.size())
          fail("tune " + name + ": value '" + value + "' is not an integer");
      }
      found->tunable = true;
    }
  }

  // An expression over defines declared above; its syntax errors keep their column.
  Expression constraint(std::string_view rest, const Manifest& manifest) const {
    if (trim(rest).empty()) fail("expected an expression after 'constraint'");
    Expression expression = [&] {
      try {
        return Expression::parse(trim(rest));
      } catch (const Error& error) {
        fail(error.what());
      }
    }();
    for (const std::string& name : expression.names())
      if (manifest.find_define(name) == nullptr)
        fail("constraint '" + expression.text() + "' names " + name +
             ", which no 'define' line above declares");
    return expression;
  }

  ManifestEntry entry(std::string_view rest) const {
    ManifestEntry entry;
    entry.line = line_;
    entry.name = identifier(next_word(rest), "entry name");
    entry.description = std::string(rest);
    return entry;
  }

 private:
  std::vector<std::string> values(std::string_view list, const std::string& name) const {
    std::vector<std::string> parsed;
    while (true) {
      std::size_t comma = list.find(',');
      std::string_view value = trim(list.substr(0, comma));
      if (value.empty()) fail("empty value in the set of " + name);
      if (std::any_of(value.begin(), value.end(), is_space))
        fail("value '" + std::string(value) + "' of " + name + " contains a space (missing comma?)");
      if (std::find(parsed.begin(), parsed.end(), value) != parsed.end())
        fail("value " + std::string(value) + " of " + name + " is listed twice");
      parsed.emplace_back(value);
      if (comma == std::string_view::npos) return parsed;
      list.remove_prefix(comma + 1);
    }
  }

  std::string_view file_;
  int line_;
};

}  // namespace

bool is_identifier(std::string_view text) {
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text.front()))) return false;
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

const ManifestDefine* Manifest::find_define(std::string_view name) const {
  auto found = std::find_if(defines.begin(), defines.end(),
                            [&](const ManifestDefine& declared) { return declared.name == name; });
  return found == defines.end() ? nullptr : &*found;
}

const ManifestEntry* Manifest::find_entry(std::string_view name) const {
  auto found = std::find_if(entries.begin(), entries.end(),
                            [&](const ManifestEntry& entry) { return entry.name == name; });
  return found == entries.end() ? nullptr : &*found;
}

Manifest parse_manifest(std::string_view source, std::string_view file) {
  Manifest manifest;
  manifest.file = std::string(file);
  int line_number = 0;
  while (!source.empty()) {
    ++line_number;
    std::size_t newline = source.find('\n');
    std::string_view line = trim(source.substr(0, newline));
    source.remove_prefix(newline == std::string_view::npos ? source.size() : newline + 1);
    if (!line.starts_with(marker)) continue;
    std::string_view rest = line.substr(marker.size());
    LineParser parser(file, line_number);
    std::string_view directive = next_word(rest);
    if (directive == "define") {
      ManifestDefine declared = parser.define(rest);
      if (manifest.find_define(declared.name))
        parser.fail(declared.name + " is declared twice");
      manifest.defines.push_back(std::move(declared));
    } else if (directive == "entry") {
      ManifestEntry entry = parser.entry(rest);
      if (manifest.find_entry(entry.name)) parser.fail("entry " + entry.name + " is declared twice");
      manifest.entries.push_back(std::move(entry));
    } else if (directive == "tune") {
      parser.tune(rest, manifest);
    } else if (directive == "constraint") {
      manifest.constraints.push_back({parser.constraint(rest, manifest), line_number});
    } else if (directive == "problem") {
      manifest.problem.push_back({std::string(rest), line_number});
    } else {
      parser.fail("unknown directive '" + std::string(directive) +
                  "' (expected 'define NAME in {...}', 'entry NAME ...', 'tune NAME ...', "
                  "'constraint EXPRESSION' or 'problem JSON')");
    }
  }
  return manifest;
}

void validate_defines(const Manifest& manifest, std::vector<Define>& defines) {
  for (std::size_t i = 0; i < defines.size(); ++i) {
    const Define& define = defines[i];
    if (!is_identifier(define.name))
      throw Error(ErrorKind::invalid_argument,
                  "define name '" + define.name + "' is not a C identifier");
    for (std::size_t j = 0; j < i; ++j)
      if (defines[j].name == define.name)
        throw Error(ErrorKind::invalid_argument, define.name + " is defined twice (" +
                                                     defines[j].value + " and " + define.value +
                                                     ") for " + manifest.file);
    const ManifestDefine* declared = manifest.find_define(define.name);
    if (declared && std::find(declared->values.begin(), declared->values.end(), define.value) ==
                        declared->values.end())
      throw Error(ErrorKind::invalid_argument, define.name + "=" + define.value +
                                                   " is not valid for " + manifest.file +
                                                   ": expected one of " + join(declared->values));
  }
  for (const ManifestDefine& declared : manifest.defines) {
    bool given = std::any_of(defines.begin(), defines.end(),
                             [&](const Define& define) { return define.name == declared.name; });
    if (given) continue;
    if (!declared.default_value)
      throw Error(ErrorKind::invalid_argument, declared.name + " is required by " + manifest.file +
                                                   " (one of " + join(declared.values) + ")");
    defines.push_back({declared.name, *declared.default_value});
  }
}

Define parse_define(std::string_view text) {
  std::size_t equals = text.find('=');
  Define define{std::string(text.substr(0, equals)),
                equals == std::string_view::npos ? std::string() : std::string(text.substr(equals + 1))};
  if (!is_identifier(define.name))
    throw Error(ErrorKind::invalid_argument,
                "define '" + std::string(text) + "': name '" + define.name +
                    "' is not a C identifier (letters, digits and '_', not starting with a digit)");
  return define;
}

}  // namespace ptxrt
