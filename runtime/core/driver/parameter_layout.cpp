#include "ptxrt/core/parameter_layout.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>

#include "driver/elf_file.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/fatbin.hpp"

namespace ptxrt {
namespace {

using detail::AttributeId;
using detail::malformed_cubin;
using detail::read_le;

// ---- CUBIN ----------------------------------------------------------------------------------

struct ParameterRecord {
  std::uint16_t ordinal = 0;
  ParameterInfo info;
};

// EIATTR_KPARAM_INFO: u32 index, u16 ordinal, u16 offset, then a word whose top 14 bits are the
// size. EIATTR_KPARAM_INFO_V2 has the size as a u16 there instead, so it holds 16 KiB and more.
ParameterRecord parameter_record(const detail::ElfAttribute& attribute) {
  const std::string_view what =
      attribute.id == AttributeId::kparam_info ? "EIATTR_KPARAM_INFO" : "EIATTR_KPARAM_INFO_V2";
  ParameterRecord record;
  record.ordinal = read_le<std::uint16_t>(attribute.payload, 4, what);
  record.info.offset = read_le<std::uint16_t>(attribute.payload, 6, what);
  record.info.bytes = attribute.id == AttributeId::kparam_info
                          ? (read_le<std::uint32_t>(attribute.payload, 8, what) >> 18) & 0x3fff
                          : read_le<std::uint16_t>(attribute.payload, 8, what);
  return record;
}

// ptxas writes one record per parameter, last parameter first: sorted by ordinal they must be
// 0, 1, ... n-1, each after the one before.
std::vector<ParameterInfo> in_order(std::vector<ParameterRecord> records, std::string_view kernel) {
  std::sort(records.begin(), records.end(), [](const ParameterRecord& a, const ParameterRecord& b) {
    return a.ordinal < b.ordinal;
  });
  std::vector<ParameterInfo> parameters;
  for (const ParameterRecord& record : records) {
    const std::size_t ordinal = parameters.size();
    if (record.ordinal != ordinal)
      malformed_cubin("kernel '" + std::string(kernel) + "' records parameter " +
                      std::to_string(record.ordinal) + " where parameter " +
                      std::to_string(ordinal) + " belongs");
    if (ordinal > 0 && record.info.offset < parameters.back().offset + parameters.back().bytes)
      malformed_cubin("kernel '" + std::string(kernel) + "' parameter " + std::to_string(ordinal) +
                      " at offset " + std::to_string(record.info.offset) + " overlaps parameter " +
                      std::to_string(ordinal - 1));
    parameters.push_back(record.info);
  }
  return parameters;
}

std::vector<EntryParameters> read_cubin_layouts(std::string_view cubin) {
  const detail::ElfFile elf(cubin);
  std::vector<EntryParameters> entries;
  for (const detail::ElfEntry& entry : elf.entries()) {
    std::vector<ParameterRecord> records;
    const std::string info_name = ".nv.info." + std::string(entry.name);
    if (const detail::ElfSection* info = elf.find(info_name))
      for (const detail::ElfAttribute& attribute : detail::read_attributes(*info))
        if (attribute.id == AttributeId::kparam_info || attribute.id == AttributeId::kparam_info_v2)
          records.push_back(parameter_record(attribute));
    entries.push_back({std::string(entry.name), in_order(std::move(records), entry.name)});
  }
  return entries;
}

// ---- PTX ------------------------------------------------------------------------------------

[[noreturn]] void malformed_ptx(const std::string& what) {
  throw Error(ErrorKind::invalid_argument, "malformed PTX: " + what);
}

// PTX text as tokens: a directive (".param"), a name or number ("_Z3fooPf_param_0", "16"), or one
// punctuation character. Whitespace, comments and quoted strings (.file names) are skipped.
class PtxTokens {
 public:
  explicit PtxTokens(std::string_view text) : text_(text) {}

  // Empty at the end of the text.
  std::string_view next() {
    skip_space_comments_and_strings();
    if (at_ >= text_.size()) return {};
    const std::size_t start = at_;
    if (text_[at_] == '.') ++at_;
    while (at_ < text_.size() && is_word_character(text_[at_])) ++at_;
    if (at_ == start) ++at_;  // punctuation
    return text_.substr(start, at_ - start);
  }

  // An identifier, as opposed to a directive, a number or punctuation.
  static bool is_name(std::string_view token) {
    return !token.empty() && is_word_character(token.front()) &&
           !(token.front() >= '0' && token.front() <= '9');
  }

 private:
  static bool is_word_character(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$' || c == '%';
  }

  void skip_space_comments_and_strings() {
    while (at_ < text_.size()) {
      const std::string_view rest = text_.substr(at_);
      if (rest.front() == ' ' || rest.front() == '\t' || rest.front() == '\r' ||
          rest.front() == '\n') {
        ++at_;
      } else if (rest.starts_with("//")) {
        at_ = std::min(text_.size(), text_.find('\n', at_));
      } else if (rest.starts_with("/*")) {
        const std::size_t end = text_.find("*/", at_ + 2);
        at_ = end == std::string_view::npos ? text_.size() : end + 2;
      } else if (rest.front() == '"') {
        const std::size_t end = text_.find('"', at_ + 1);
        at_ = end == std::string_view::npos ? text_.size() : end + 1;
      } else {
        return;
      }
    }
  }

  std::string_view text_;
  std::size_t at_ = 0;
};

// The bytes of a fundamental PTX type (".u64" → 8); 0 for anything else.
std::size_t type_bytes(std::string_view type) {
  if (type.size() < 3 || type[0] != '.') return 0;
  const char kind = type[1];
  if (kind != 'b' && kind != 'u' && kind != 's' && kind != 'f') return 0;
  std::string_view bits = type.substr(2);
  if (type.starts_with(".bf")) bits = type.substr(3);
  unsigned value = 0;
  auto [end, error] = std::from_chars(bits.data(), bits.data() + bits.size(), value);
  if (error != std::errc() || end != bits.data() + bits.size()) return 0;
  const bool known = (value == 8 && kind != 'f') || value == 16 || value == 32 || value == 64 ||
                     (value == 128 && kind == 'b');
  return known ? value / 8 : 0;
}

// CUDA's limit on a kernel's parameters (since 12.1; 4 KiB before): no parameter, array length
// or alignment is larger, which also keeps the offset arithmetic far from overflow.
constexpr std::size_t kMaxParameterBytes = 32764;

std::size_t parse_count(std::string_view token, const std::string& where) {
  std::size_t value = 0;
  auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (error != std::errc() || end != token.data() + token.size() || value == 0)
    malformed_ptx(where + ": expected a positive number, found '" + std::string(token) + "'");
  if (value > kMaxParameterBytes)
    malformed_ptx(where + ": " + std::to_string(value) + " is over the " +
                  std::to_string(kMaxParameterBytes) + " bytes of parameters a kernel can take");
  return value;
}

struct PtxParameter {
  std::size_t bytes = 0;
  std::size_t alignment = 0;
};

// One declaration of an .entry's list, after its ".param": [.align N] [.vN] .type
// [.ptr [.space] [.align N]] name[[count]]. An .align after .ptr is the pointee's, not the
// parameter's. Leaves `tokens` after the "," or ")" that ends it, which `last` reports.
PtxParameter parse_parameter(PtxTokens& tokens, const std::string& where, bool& last) {
  PtxParameter parameter;
  std::size_t element = 0;
  std::size_t lanes = 1;
  std::size_t count = 1;
  bool pointer = false;
  bool named = false;
  for (std::string_view token = tokens.next();; token = tokens.next()) {
    if (token.empty()) malformed_ptx(where + " is not closed with ')'");
    if (token == "," || token == ")") {
      last = token == ")";
      break;
    }
    if (token == ".align") {
      const std::size_t alignment = parse_count(tokens.next(), where);
      if ((alignment & (alignment - 1)) != 0)
        malformed_ptx(where + ": .align " + std::to_string(alignment) + " is not a power of two");
      if (!pointer) parameter.alignment = alignment;
    } else if (token == ".ptr") {
      pointer = true;
    } else if (pointer && (token == ".global" || token == ".const" || token == ".local" ||
                           token == ".shared")) {
      continue;
    } else if (token == ".v2" || token == ".v4") {
      lanes = token == ".v2" ? 2 : 4;
    } else if (token == "[") {
      count = parse_count(tokens.next(), where);
      if (tokens.next() != "]") malformed_ptx(where + ": an array size is not closed with ']'");
    } else if (token.front() == '.') {
      element = type_bytes(token);
      if (element == 0)
        malformed_ptx(where + " has type " + std::string(token) +
                      ", which ptxrt cannot lay out (expected .b8 ... .b64, .u, .s or .f)");
    } else if (PtxTokens::is_name(token)) {
      named = true;
    } else {
      malformed_ptx(where + ": unexpected '" + std::string(token) + "'");
    }
  }
  if (element == 0 || !named) malformed_ptx(where + " lacks a type or a name");
  parameter.bytes = element * lanes * count;
  if (parameter.bytes > kMaxParameterBytes)
    malformed_ptx(where + " is " + std::to_string(parameter.bytes) + " bytes, over the " +
                  std::to_string(kMaxParameterBytes) + " bytes of parameters a kernel can take");
  if (parameter.alignment == 0) parameter.alignment = element * lanes;
  return parameter;
}

// After ".entry name": the parameter list, when there is one.
std::vector<ParameterInfo> parse_entry_parameters(PtxTokens& tokens, std::string_view entry) {
  std::vector<ParameterInfo> parameters;
  PtxTokens lookahead = tokens;
  if (lookahead.next() != "(") return parameters;
  tokens = lookahead;
  std::size_t end = 0;
  for (bool last = false; !last;) {
    const std::string where =
        ".entry '" + std::string(entry) + "' parameter " + std::to_string(parameters.size());
    const std::string_view first = tokens.next();
    if (first == ")" && parameters.empty()) break;  // "()"
    if (first != ".param")
      malformed_ptx(where + " starts with '" + std::string(first) + "', not .param");
    const PtxParameter parameter = parse_parameter(tokens, where, last);
    const std::size_t offset =
        (end + parameter.alignment - 1) / parameter.alignment * parameter.alignment;
    parameters.push_back({offset, parameter.bytes});
    end = offset + parameter.bytes;
    if (end > kMaxParameterBytes)
      malformed_ptx(where + " ends at byte " + std::to_string(end) + ", over the " +
                    std::to_string(kMaxParameterBytes) + " bytes of parameters a kernel can take");
  }
  return parameters;
}

std::vector<EntryParameters> read_ptx_layouts(std::string_view ptx) {
  std::vector<EntryParameters> entries;
  PtxTokens tokens(ptx);
  for (std::string_view token = tokens.next(); !token.empty(); token = tokens.next()) {
    if (token != ".entry") continue;
    const std::string_view name = tokens.next();
    if (!PtxTokens::is_name(name))
      malformed_ptx(".entry without a name (found '" + std::string(name) + "')");
    entries.push_back({std::string(name), parse_entry_parameters(tokens, name)});
  }
  return entries;
}

}  // namespace

std::optional<std::vector<EntryParameters>> read_parameter_layouts(std::string_view image) {
  if (detail::looks_like_elf(image)) return read_cubin_layouts(image);
  // Any CUBIN entry has the layout: it is fixed by the parameter types, whatever the architecture.
  if (is_fatbin(image)) {
    for (const FatbinEntry& entry : read_fatbin(image))
      if (entry.format == ImageFormat::cubin && !entry.compressed)
        return read_cubin_layouts(entry.payload);
    return std::nullopt;
  }
  return read_ptx_layouts(image);
}

}  // namespace ptxrt
