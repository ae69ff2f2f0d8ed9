#include "ptxrt/core/expression.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "ptxrt/core/error.hpp"
#include "support/quoted.hpp"

namespace ptxrt {

struct Expression::Node {
  enum class Kind { literal, name, unary, binary, chain, call };
  Kind kind = Kind::literal;
  std::int64_t value = 0;
  std::string name;  // the identifier, the operator's C spelling, or the function's name
  std::unique_ptr<const Node> left;   // a call's first argument
  std::unique_ptr<const Node> right;  // a call's second argument
  // A comparison chain ("0 < x <= 8"): operands[i] comparisons[i] operands[i + 1], for each i.
  std::vector<std::unique_ptr<const Node>> operands;
  std::vector<std::string> comparisons;
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

// An operator as written, and the operator it is: Python's words stand for C's symbols.
struct Spelling {
  std::string_view written;
  std::string_view meaning;
};

// Binary operators by precedence level, loosest first; within a level, longer spellings first so
// that "<=" is not read as "<" nor "//" as "/".
struct Level {
  std::array<Spelling, 4> operators;
  bool chains;  // a run of them is one comparison chain, as Python reads it
};
constexpr std::array<Level, 6> levels{{
    {{{{"||", "||"}, {"or", "||"}}}, false},
    {{{{"&&", "&&"}, {"and", "&&"}}}, false},
    {{{{"==", "=="}, {"!=", "!="}}}, true},
    {{{{"<=", "<="}, {">=", ">="}, {"<", "<"}, {">", ">"}}}, true},
    {{{{"+", "+"}, {"-", "-"}}}, false},
    {{{{"//", "//"}, {"*", "*"}, {"/", "/"}, {"%", "%"}}}, false},
}};
// Python's `not` binds looser than the comparisons and tighter than `and`: "not A == B" is
// "!(A == B)", where C's "!A == B" is "(!A) == B".
constexpr std::size_t negation_level = 2;

constexpr std::array<std::string_view, 3> keywords{"and", "or", "not"};
// Python's and C++'s spellings of the truth values.
constexpr std::array<std::pair<std::string_view, std::int64_t>, 4> truth_values{
    {{"True", 1}, {"False", 0}, {"true", 1}, {"false", 0}}};

bool is_word_character(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

[[noreturn]] void fail(std::string_view text, const std::string& what) {
  throw Error(ErrorKind::invalid_argument, "expression " + detail::quoted(text) + ": " + what);
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  NodePointer parse() {
    NodePointer root = binary(0, 0);
    skip_space();
    if (position_ < text_.size()) {
      const std::string_view unexpected = token();
      fail_here("unexpected " + detail::quoted(unexpected) +
                (unexpected == "=" ? " (a comparison is '==')" : ""));
    }
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

  // The word at the position, else its one character: what is read, and what a message quotes.
  std::string_view token() const {
    std::size_t end = position_;
    while (end < text_.size() && is_word_character(text_[end])) ++end;
    return text_.substr(position_, std::max<std::size_t>(end - position_, 1));
  }

  bool accept(std::string_view spelling) {
    skip_space();
    if (text_.substr(position_, spelling.size()) != spelling) return false;
    position_ += spelling.size();
    return true;
  }

  // A word only as a whole word: "or" does not begin "order".
  bool accept_word(std::string_view word) {
    skip_space();
    if (token() != word) return false;
    position_ += word.size();
    return true;
  }

  std::optional<Spelling> accept_operator(std::size_t level) {
    for (const Spelling& spelling : levels[level].operators) {
      if (spelling.written.empty()) continue;
      if (is_word_character(spelling.written.front()) ? accept_word(spelling.written)
                                                      : accept(spelling.written))
        return spelling;
    }
    return std::nullopt;
  }

  void enter(int depth) const {
    if (depth >= max_depth)
      fail_here("nesting deeper than " + std::to_string(max_depth) + " levels");
  }

  NodePointer binary(std::size_t level, int depth) {
    if (level == levels.size()) return unary(depth);
    if (level == negation_level && accept_word("not")) {
      enter(depth);
      return unary_node("!", binary(level, depth + 1));
    }
    NodePointer left = binary(level + 1, depth);
    std::optional<Spelling> op = accept_operator(level);
    if (op && levels[level].chains) return chain(std::move(left), *op, level, depth);
    for (; op; op = accept_operator(level)) {
      auto node = make_node();
      node->kind = Node::Kind::binary;
      node->name = std::string(op->meaning);
      node->left = std::move(left);
      node->right = binary(level + 1, depth);
      left = std::move(node);
    }
    return left;
  }

  // "A < B <= C" holds when each comparison does, as in Python; a single comparison is a binary
  // node.
  NodePointer chain(NodePointer first, Spelling op, std::size_t level, int depth) {
    auto node = make_node();
    node->kind = Node::Kind::chain;
    node->operands.push_back(std::move(first));
    for (std::optional<Spelling> next = op; next; next = accept_operator(level)) {
      node->comparisons.emplace_back(next->meaning);
      node->operands.push_back(binary(level + 1, depth));
    }
    if (node->comparisons.size() > 1) return node;
    node->kind = Node::Kind::binary;
    node->name = node->comparisons.front();
    node->left = std::move(node->operands[0]);
    node->right = std::move(node->operands[1]);
    node->operands.clear();
    node->comparisons.clear();
    return node;
  }

  NodePointer unary_node(std::string_view op, NodePointer operand) {
    auto node = make_node();
    node->kind = Node::Kind::unary;
    node->name = std::string(op);
    node->left = std::move(operand);
    return node;
  }

  // Unary - + ! bind looser than **, as in Python: "-2 ** 2" is -4.
  NodePointer unary(int depth) {
    enter(depth);
    skip_space();
    for (std::string_view op : {"-", "+", "!"}) {
      if (text_.substr(position_, 1) == op && text_.substr(position_, 2) != "!=") {
        ++position_;
        NodePointer operand = unary(depth + 1);
        return op == "+" ? std::move(operand) : unary_node(op, std::move(operand));
      }
    }
    return power(depth);
  }

  // "A ** B" groups from the right ("2 ** 3 ** 2" is 2 ** 9), and B may be negated.
  NodePointer power(int depth) {
    NodePointer base = primary(depth);
    if (!accept("**")) return base;
    auto node = make_node();
    node->kind = Node::Kind::binary;
    node->name = "**";
    node->left = std::move(base);
    node->right = unary(depth + 1);
    return node;
  }

  NodePointer primary(int depth) {
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
    if (std::isdigit(static_cast<unsigned char>(first))) return number();
    const std::string_view word = token();
    if (!std::isalpha(static_cast<unsigned char>(first)) && first != '_')
      fail_here("expected a value, got " + detail::quoted(word));
    if (std::find(keywords.begin(), keywords.end(), word) != keywords.end())
      fail_here("expected a value, got " + detail::quoted(word));
    auto node = make_node();
    position_ += word.size();
    for (const auto& [spelling, value] : truth_values)
      if (word == spelling) {
        node->value = value;
        return node;
      }
    node->name = std::string(word);
    if (accept("(")) return call(std::move(node), depth);
    node->kind = Node::Kind::name;
    if (std::find(names.begin(), names.end(), node->name) == names.end())
      names.push_back(node->name);
    return node;
  }

  NodePointer number() {
    auto node = make_node();
    const char* begin = text_.data() + position_;
    const char* end = text_.data() + text_.size();
    auto [stop, error] = std::from_chars(begin, end, node->value);
    if (error == std::errc::result_out_of_range) fail_here("integer literal out of 64-bit range");
    if (stop != end && is_word_character(*stop)) fail_here("malformed number");
    position_ += static_cast<std::size_t>(stop - begin);
    return node;
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

bool compare(std::string_view op, std::int64_t a, std::int64_t b) {
  if (op == "==") return a == b;
  if (op == "!=") return a != b;
  if (op == "<") return a < b;
  if (op == "<=") return a <= b;
  if (op == ">") return a > b;
  return a >= b;
}

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
      case Node::Kind::chain:
        return chain(node);
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
    if (b <= 0)
      fail(text_, "ceil_div(" + std::to_string(a) + ", " + std::to_string(b) +
                      ") needs a positive divisor");
    // Rounds towards +infinity for either sign of a, without overflowing a + b - 1.
    return a / b + (a % b > 0 ? 1 : 0);
  }

  // Each operand once, left to right, stopping at the first comparison that fails, as Python
  // does: "0 < B < A / B" never divides by zero.
  std::int64_t chain(const Node& node) const {
    std::int64_t left = value(*node.operands.front());
    for (std::size_t i = 0; i < node.comparisons.size(); ++i) {
      const std::int64_t right = value(*node.operands[i + 1]);
      if (!compare(node.comparisons[i], left, right)) return 0;
      left = right;
    }
    return 1;
  }

  std::int64_t power(std::int64_t base, std::int64_t exponent) const {
    if (exponent < 0)
      fail(text_, std::to_string(base) + " ** " + std::to_string(exponent) +
                      " is a fraction: the exponent must not be negative");
    std::int64_t result = 1;
    std::int64_t factor = base;
    // Squaring: once |factor| >= 2 squares past 64 bits with a bit still to use, so does the
    // result.
    for (std::int64_t left = exponent; left > 0; left >>= 1) {
      if ((left & 1) != 0 && __builtin_mul_overflow(result, factor, &result))
        overflow("**", base, exponent);
      if (left > 1 && __builtin_mul_overflow(factor, factor, &factor))
        overflow("**", base, exponent);
    }
    return result;
  }

  std::int64_t divide(const std::string& op, std::int64_t a, std::int64_t b) const {
    if (b == 0) fail(text_, std::to_string(a) + " " + op + " 0 divides by zero");
    if (a == std::numeric_limits<std::int64_t>::min() && b == -1) overflow(op, a, b);
    if (op == "/") return a / b;
    if (op == "%") return a % b;
    // Python's floor division: towards -infinity where C's truncates towards zero.
    return a / b - ((a % b != 0 && (a < 0) != (b < 0)) ? 1 : 0);
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
    if (op == "**") return power(a, b);
    if (op == "/" || op == "%" || op == "//") return divide(op, a, b);
    return compare(op, a, b) ? 1 : 0;
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
