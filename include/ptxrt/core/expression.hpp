// A small integer expression over named constants: the language of a tuning space's constraints
// ("// ptxrt: constraint TM * TN <= 128 && (BK % 8 == 0 || STAGES > 2)"), of launch geometry and
// of sizes. It reads C's forms and the Python forms of Kernel Tuner's restrictions alike
// ("use_padding == 0 or block_size_x % 32 != 0", "0 < tile <= 8").
//
// Grammar, loosest first, each binary level left-associative:
//   || or          && and          not (Python's: "not A == B" is !(A == B))
//   == !=          < <= > >=       + -          * / // %
//   unary - + !    ** (right-associative and tighter than a unary sign on its left, as in
//                  Python: "-2 ** 2" is -4, "2 ** 3 ** 2" is 512)
// with parentheses, decimal integer literals, True/False (and true/false) as 1/0, identifiers,
// and the two-argument functions ceil_div(n, d) (n / d rounded up; d must be positive),
// min(a, b) and max(a, b).
// - Comparisons chain as in Python within their level: "0 < x <= 8" is "0 < x && x <= 8" and
//   "a == b == c" is "a == b && b == c", each operand evaluated once. == and != bind looser than
//   < <= > >= as in C, so "a < b == c < d" compares two truths.
// - / and % are C's (they round towards zero, as the kernel's own arithmetic does on the same
//   defines): -7 / 2 is -3 and -7 % 2 is -1. // is Python's floor division: -7 // 2 is -4.
//   For non-negative operands, the case of tuning parameters, all of them agree with Python.
// - ** needs an exponent of 0 or more (Python would give a fraction).
// - Values are 64-bit signed integers; comparisons and logic give 0 or 1; && and || (and/or)
//   evaluate their right side only when it decides the result, so "B != 0 && A / B > 2" is safe.
// Parsing and evaluation never crash on any input: malformed text, overflow (of + - * ** and
// unary -), division by zero and unknown names are Error (invalid_argument) naming the expression
// as written and the column or name at fault.
//
// An Expression is an immutable value: copy it and evaluate it from any number of threads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ptxrt/export.hpp"

namespace ptxrt {

class PTXRT_API Expression {
 public:
  // Parses `text`; nesting deeper than 64 levels is an error, so that no input exhausts the stack.
  static Expression parse(std::string_view text);

  // The value of a name, or nothing when the name is unknown.
  using Lookup = std::function<std::optional<std::int64_t>(std::string_view name)>;
  std::int64_t evaluate(const Lookup& lookup) const;

  const std::string& text() const noexcept { return text_; }
  // The identifiers the expression reads, each once, in order of first appearance (function
  // names are not among them).
  const std::vector<std::string>& names() const noexcept { return names_; }

  struct Node;  // the parsed tree (internal)

 private:
  Expression(std::string text, std::shared_ptr<const Node> root, std::vector<std::string> names)
      : text_(std::move(text)), root_(std::move(root)), names_(std::move(names)) {}
  std::string text_;
  std::shared_ptr<const Node> root_;
  std::vector<std::string> names_;
};

}  // namespace ptxrt
