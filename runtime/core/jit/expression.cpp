#include "ptxrt/core/expression.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <limits>

#include "ptxrt/core/error.hpp"
#include "support/quoted.hpp"

namespace ptxrt {

struct Expression::Node {
  enum class Kind { literal, name, unary, binary, call };
  Kind kind = Kind::literal;
  std::int64_t value = 0;
  std::string name;  // the identifier, the operator's spelling, or the function's name
  std::unique_ptr<const Node> left;   // a call's first argument
  std::unique_ptr<const Node> right;  // a call's second argument
};

namespace {

using Node = Expression::Node;
using NodePointer = std::unique_ptr<const Node>;

constexpr int max_depth = 64;
// Evaluation and destruction recurse along the tree, and a chain "1+1+...+1" is as deep as it is
// long: bounding the size bounds the stack.
constexpr int max_nodes = 1024;

// The functions a launch geometry needs: each takes two arguments. ceil_div(n, d) is the grid
// that covers n items d at a time (Kernel Tuner's grid_div).
constexpr std::array<std::string_view, 3> functions{"ceil_div", "min", "max"};

// Binary operators by precedence level, loosest first; within a level, longer spellings first so
// that "<=" is not read as "<".
constexpr std::array<std::array<std::string_view, 4>, 6> levels{{
    {"||"},
    {"&&"},
    {"==", "!="},
    {"<=", ">=", "<", ">"},
    {"+", "-"},
    {"*", "/", "%"},
}};

[[noreturn]] void fail(std::string_view text, const std::string& what) {
  throw Error(ErrorKind::invalid_argument, "expression " + detail::quoted(text) + ": " + what);
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  NodePointer parse() {
    NodePointer root = binary(0, 0);
    skip_space();
    if (position_ < text_.size())
      fail_here("unexpected " + detail::quoted(text_.substr(position_, 1)));
    return root;
  }

  std::vector<std::string> names;

 private:
  [[noreturn]] void fail_here(const std::string& what) const {
    fail(text_, what + " at column " + std::to_string(position_ + 1));
  }

  void skip_space() {
    while (position_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[position_])))
      ++position_;
  }

  bool accept(std::string_view spelling) {
    skip_space();
    if (text_.substr(position_, spelling.size()) != spelling) return false;
    position_ += spelling.size();
    return true;
  }

  std::string_view peek_operator(int level) {
    skip_space();
    for (std::string_view spelling : levels[static_cast<std::size_t>(level)])
      if (!spelling.empty() && text_.substr(position_, spelling.size()) == spelling)
        return spelling;
    return {};
  }

  NodePointer binary(int level, int depth) {
    if (level == static_cast<int>(levels.size())) return unary(depth);
    NodePointer left = binary(level + 1, depth);
    for (std::string_view op = peek_operator(level); !op.empty(); op = peek_operator(level)) {
      position_ += op.size();
      auto node = make_node();
      node->kind = Node::Kind::binary;
      node->name = std::string(op);
      node->left = std::move(left);
      node->right = binary(level + 1, depth);
      left = std::move(node);
    }
    return left;
  }

  NodePointer unary(int depth) {
    if (depth >= max_depth)
      fail_here("nesting deeper than " + std::to_string(max_depth) + " levels");
    skip_space();
    for (std::string_view op : {"-", "!"}) {
      if (text_.substr(position_, 1) == op && text_.substr(position_, 2) != "!=") {
        ++position_;
        auto node = make_node();
        node->kind = Node::Kind::unary;
        node->name = std::string(op);
        node->left = unary(depth + 1);
        return node;
      }
    }
    if (accept("(")) {
      NodePointer inner = binary(0, depth + 1);
      if (!accept(")")) fail_here("expected ')'");
      return inner;
    }
    return operand(depth);
  }

  // "NAME(a, b)" after the '(': one of `functions`, with two arguments.
  NodePointer call(std::unique_ptr<Node> node, int depth) {
    if (std::find(functions.begin(), functions.end(), node->name) == functions.end())
      fail_here("unknown function " + detail::quoted(node->name) + " (known: ceil_div, min, max)");
    node->kind = Node::Kind::call;
    node->left = binary(0, depth + 1);
    if (!accept(",")) fail_here("expected ',' between the two arguments of " + node->name);
    node->right = binary(0, depth + 1);
    if (!accept(")")) fail_here("expected ')' after the two arguments of " + node->name);
    return node;
  }

  NodePointer operand(int depth) {
    skip_space();
    if (position_ == text_.size()) fail_here("expected a value");
    const char first = text_[position_];
    auto node = make_node();
    if (std::isdigit(static_cast<unsigned char>(first))) {
      const char* begin = text_.data() + position_;
      const char* end = text_.data() + text_.size();
      auto [stop, error] = std::from_chars(begin, end, node->value);
      if (error == std::errc::result_out_of_range) fail_here("integer literal out of 64-bit range");
      if (stop != end && (std::isalnum(static_cast<unsigned char>(*stop)) || *stop == '_'))
        fail_here("malformed number");
      position_ += static_cast<std::size_t>(stop - begin);
      return node;
    }
    if (std::isalpha(static_cast<unsigned char>(first)) || first == '_') {
      std::size_t end = position_;
      while (end < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_'))
        ++end;
      node->name = std::string(text_.substr(position_, end - position_));
      position_ = end;
      if (accept("(")) return call(std::move(node), depth);
      node->kind = Node::Kind::name;
      if (std::find(names.begin(), names.end(), node->name) == names.end())
        names.push_back(node->name);
      return node;
    }
    fail_here("expected a value, got " + detail::quoted(text_.substr(position_, 1)));
  }

  std::unique_ptr<Node> make_node() {
    if (++nodes_ > max_nodes)
      fail_here("more than " + std::to_string(max_nodes) + " operators and operands");
    return std::make_unique<Node>();
  }

  std::string_view text_;
  std::size_t position_ = 0;
  int nodes_ = 0;
};

class Evaluator {
 public:
  Evaluator(std::string_view text, const Expression::Lookup& lookup)
      : text_(text), lookup_(lookup) {}

  std::int64_t value(const Node& node) const {
    switch (node.kind) {
      case Node::Kind::literal:
        return node.value;
      case Node::Kind::name: {
        std::optional<std::int64_t> found = lookup_(node.name);
        if (!found) fail(text_, "unknown name " + detail::quoted(node.name));
        return *found;
      }
      case Node::Kind::unary: {
        const std::int64_t operand = value(*node.left);
        if (node.name == "!") return operand == 0 ? 1 : 0;
        if (operand == std::numeric_limits<std::int64_t>::min()) overflow("-", 0, operand);
        return -operand;
      }
      case Node::Kind::binary:
        return binary(node);
      case Node::Kind::call:
        return call(node);
    }
    return 0;
  }

 private:
  [[noreturn]] void overflow(std::string_view op, std::int64_t a, std::int64_t b) const {
    fail(text_, std::to_string(a) + " " + std::string(op) + " " + std::to_string(b) +
                    " overflows 64 bits");
  }

  std::int64_t call(const Node& node) const {
    const std::int64_t a = value(*node.left);
    const std::int64_t b = value(*node.right);
    if (node.name == "min") return std::min(a, b);
    if (node.name == "max") return std::max(a, b);
    if (b <= 0) fail(text_, "ceil_div(" + std::to_string(a) + ", " + std::to_string(b) +
                                ") needs a positive divisor");
    // Rounds towards +infinity for either sign of a, without overflowing a + b - 1.
    return a / b + (a % b > 0 ? 1 : 0);
  }

  std::int64_t binary(const Node& node) const {
    const std::string& op = node.name;
    const std::int64_t a = value(*node.left);
    if (op == "&&") return a != 0 && value(*node.right) != 0 ? 1 : 0;
    if (op == "||") return a != 0 || value(*node.right) != 0 ? 1 : 0;
    const std::int64_t b = value(*node.right);
    std::int64_t result = 0;
    if (op == "+" && __builtin_add_overflow(a, b, &result)) overflow(op, a, b);
    if (op == "-" && __builtin_sub_overflow(a, b, &result)) overflow(op, a, b);
    if (op == "*" && __builtin_mul_overflow(a, b, &result)) overflow(op, a, b);
    if (op == "+" || op == "-" || op == "*") return result;
    if (op == "/" || op == "%") {
      if (b == 0) fail(text_, std::to_string(a) + " " + op + " 0 divides by zero");
      if (a == std::numeric_limits<std::int64_t>::min() && b == -1) overflow(op, a, b);
      return op == "/" ? a / b : a % b;
    }
    if (op == "==") return a == b;
    if (op == "!=") return a != b;
    if (op == "<") return a < b;
    if (op == "<=") return a <= b;
    if (op == ">") return a > b;
    return a >= b;
  }

  std::string_view text_;
  const Expression::Lookup& lookup_;
};

}  // namespace

Expression Expression::parse(std::string_view text) {
  Parser parser(text);
  std::shared_ptr<const Node> root = parser.parse();
  return Expression(std::string(text), std::move(root), std::move(parser.names));
}

std::int64_t Expression::evaluate(const Lookup& lookup) const {
  return Evaluator(text_, lookup).value(*root_);
}

}  // namespace ptxrt
