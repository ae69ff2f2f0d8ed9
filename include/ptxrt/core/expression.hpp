// A small integer expression over named constants: the language of a tuning space's constraints
// ("// ptxrt: constraint TM * TN <= 128 && (BK % 8 == 0 || STAGES > 2)").
//
// Grammar, with C's precedence and left associativity: || && (== !=) (< <= > >=) (+ -) (* / %),
// unary - and !, parentheses, decimal integer literals, identifiers, and the two-argument
// functions ceil_div(n, d) (n / d rounded up; d must be positive), min(a, b) and max(a, b). Values are 64-bit signed
// integers; comparisons and logic give 0 or 1; && and || evaluate their right side only when it
// decides the result, so "B != 0 && A / B > 2" is safe. Parsing and evaluation never crash on any
// input: malformed text, overflow, division by zero and unknown names are Error
// (invalid_argument) naming the expression and the column or name at fault.
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
