#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <random>
#include <string>

#include "ptxrt/core/error.hpp"
#include "ptxrt/core/expression.hpp"
#include "ptxrt/core/manifest.hpp"

namespace {

std::int64_t evaluate(const std::string& text,
                      const std::map<std::string, std::int64_t>& values = {}) {
  return ptxrt::Expression::parse(text).evaluate(
      [&](std::string_view name) -> std::optional<std::int64_t> {
        auto found = values.find(std::string(name));
        if (found == values.end()) return std::nullopt;
        return found->second;
      });
}

std::string parse_error(const std::string& text) {
  try {
    ptxrt::Expression::parse(text);
  } catch (const ptxrt::Error& error) {
    CHECK(error.kind() == ptxrt::ErrorKind::invalid_argument);
    return error.what();
  }
  return "no error";
}

std::string evaluation_error(const std::string& text,
                             const std::map<std::string, std::int64_t>& values = {}) {
  try {
    evaluate(text, values);
  } catch (const ptxrt::Error& error) {
    CHECK(error.kind() == ptxrt::ErrorKind::invalid_argument);
    return error.what();
  }
  return "no error";
}

std::string manifest_error(const std::string& source) {
  try {
    ptxrt::parse_manifest(source, "k.cu");
  } catch (const ptxrt::Error& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("expressions follow C precedence and left associativity") {
  CHECK(evaluate("1 + 2 * 3") == 7);
  CHECK(evaluate("(1 + 2) * 3") == 9);
  CHECK(evaluate("10 - 4 - 3") == 3);
  CHECK(evaluate("100 / 10 / 5") == 2);
  CHECK(evaluate("17 % 5 * 2") == 4);
  CHECK(evaluate("-3 + 5") == 2);
  CHECK(evaluate("!0 + !7") == 1);
  CHECK(evaluate("1 < 2 == 1") == 1);
  CHECK(evaluate("2 <= 2 && 3 >= 4 || 5 != 5") == 0);
  CHECK(evaluate("1 || 0 && 0") == 1);
  CHECK(evaluate("-7 / 2") == -3);
  CHECK(evaluate("-7 % 2") == -1);
}

TEST_CASE("expressions read names through the lookup and list each name once") {
  const ptxrt::Expression expression = ptxrt::Expression::parse("TM * TN <= 128 && TM >= BK");
  CHECK(expression.names() == std::vector<std::string>{"TM", "TN", "BK"});
  CHECK(evaluate("TM * TN <= 128 && TM >= BK", {{"TM", 8}, {"TN", 16}, {"BK", 8}}) == 1);
  CHECK(evaluate("TM * TN <= 128 && TM >= BK", {{"TM", 16}, {"TN", 16}, {"BK", 8}}) == 0);
}

TEST_CASE("ceil_div, min and max take two arguments and are not names") {
  CHECK(evaluate("ceil_div(W, BX * TX)", {{"W", 1000}, {"BX", 32}, {"TX", 2}}) == 16);
  CHECK(evaluate("ceil_div(1024, 64)") == 16);
  CHECK(evaluate("ceil_div(-5, 2)") == -2);
  CHECK(evaluate("min(3, 7) + max(3, 7) * 2") == 17);
  CHECK(evaluate("min(max(A, 1), 8)", {{"A", 12}}) == 8);
  CHECK(ptxrt::Expression::parse("ceil_div(n, B)").names() == std::vector<std::string>{"n", "B"});
  CHECK(parse_error("ceil(4, 2)") ==
        "expression 'ceil(4, 2)': unknown function 'ceil' (known: ceil_div, min, max) at column 6");
  CHECK(parse_error("min(4)") ==
        "expression 'min(4)': expected ',' between the two arguments of min at column 6");
  CHECK(parse_error("max(4, 2, 1)") ==
        "expression 'max(4, 2, 1)': expected ')' after the two arguments of max at column 9");
  CHECK(evaluation_error("ceil_div(4, 0)") ==
        "expression 'ceil_div(4, 0)': ceil_div(4, 0) needs a positive divisor");
}

TEST_CASE("&& and || skip their right side when the left decides") {
  CHECK(evaluate("B != 0 && A / B > 2", {{"A", 9}, {"B", 0}}) == 0);
  CHECK(evaluate("B == 0 || A % B == 1", {{"A", 9}, {"B", 0}}) == 1);
  CHECK(evaluate("0 && UNKNOWN") == 0);
}

TEST_CASE("malformed expressions are errors naming the column") {
  CHECK(parse_error("") == "expression '': expected a value at column 1");
  CHECK(parse_error("A +") == "expression 'A +': expected a value at column 4");
  CHECK(parse_error("(A") == "expression '(A': expected ')' at column 3");
  CHECK(parse_error("A B") == "expression 'A B': unexpected 'B' at column 3");
  CHECK(parse_error("A = 4") == "expression 'A = 4': unexpected '=' (a comparison is '==') at column 3");
  CHECK(parse_error("4x") == "expression '4x': malformed number at column 1");
  CHECK(parse_error("99999999999999999999") ==
        "expression '99999999999999999999': integer literal out of 64-bit range at column 1");
  CHECK(parse_error("A $ 2") == "expression 'A $ 2': unexpected '$' at column 3");
  CHECK(parse_error(std::string(100, '(') + "1" + std::string(100, ')'))
            .find("nesting deeper than 64") != std::string::npos);
  std::string chain = "1";
  for (int i = 0; i < 2000; ++i) chain += "+1";
  CHECK(parse_error(chain).find("more than 1024 operators and operands") != std::string::npos);
}

TEST_CASE("evaluation errors name the operation: unknown name, division by zero, overflow") {
  CHECK(evaluation_error("A + 1") == "expression 'A + 1': unknown name 'A'");
  CHECK(evaluation_error("4 / (2 - 2)") == "expression '4 / (2 - 2)': 4 / 0 divides by zero");
  CHECK(evaluation_error("4 % 0") == "expression '4 % 0': 4 % 0 divides by zero");
  CHECK(evaluation_error("9223372036854775807 + 1") ==
        "expression '9223372036854775807 + 1': 9223372036854775807 + 1 overflows 64 bits");
  CHECK(evaluation_error("A * A", {{"A", std::int64_t{1} << 40}}) ==
        "expression 'A * A': 1099511627776 * 1099511627776 overflows 64 bits");
  CHECK(evaluation_error("-A", {{"A", INT64_MIN}}).find("overflows 64 bits") != std::string::npos);
  CHECK(evaluation_error("A / -1", {{"A", INT64_MIN}}).find("overflows 64 bits") !=
        std::string::npos);
}

TEST_CASE("Kernel Tuner's restrictions read as written: and, or, not, True, False") {
  const std::map<std::string, std::int64_t> padded{{"use_padding", 1}, {"block_size_x", 48}};
  CHECK(evaluate("use_padding==0 or (block_size_x % 32 != 0)", padded) == 1);
  CHECK(evaluate("use_padding==0 or (block_size_x % 32 != 0)",
                 {{"use_padding", 1}, {"block_size_x", 64}}) == 0);
  CHECK(evaluate("use_padding == True and block_size_x > 32", padded) == 1);
  CHECK(evaluate("use_padding == False", padded) == 0);
  CHECK(evaluate("True + True") == 2);
  CHECK(evaluate("true && !false") == 1);
  // `not` binds looser than a comparison (Python), `!` tighter (C).
  CHECK(evaluate("not 2 == 3") == 1);
  CHECK(evaluate("!2 == 3") == 0);
  CHECK(evaluate("not not 5") == 1);
  CHECK(evaluate("not 1 or 1") == 1);
  CHECK(evaluate("1 or 0 and 0") == 1);
  CHECK(evaluate("(1 or 0) and 0") == 0);
  // and/or skip their right side as && and || do.
  CHECK(evaluate("B != 0 and A // B > 2", {{"A", 9}, {"B", 0}}) == 0);
  // Words only as whole words: names that begin with them are names.
  CHECK(evaluate("order or notes", {{"order", 0}, {"notes", 0}}) == 0);
  CHECK(ptxrt::Expression::parse("android and Truth").names() ==
        std::vector<std::string>{"android", "Truth"});
  CHECK(ptxrt::Expression::parse("x == True or not y").names() ==
        std::vector<std::string>{"x", "y"});
}

TEST_CASE("// is Python's floor division; / and % stay C's, rounding towards zero") {
  CHECK(evaluate("7 // 2") == 3);
  CHECK(evaluate("-7 // 2") == -4);
  CHECK(evaluate("7 // -2") == -4);
  CHECK(evaluate("-7 // -2") == 3);
  CHECK(evaluate("-8 // 2") == -4);
  CHECK(evaluate("-7 / 2") == -3);
  CHECK(evaluate("-7 % 2") == -1);
  CHECK(evaluate("W // BX // 2", {{"W", 100}, {"BX", 8}}) == 6);
  CHECK(evaluate("1 + 9 // 4 * 2") == 5);
  CHECK(evaluation_error("5 // (1 - 1)") == "expression '5 // (1 - 1)': 5 // 0 divides by zero");
  CHECK(evaluation_error("A // -1", {{"A", INT64_MIN}}) ==
        "expression 'A // -1': -9223372036854775808 // -1 overflows 64 bits");
}

TEST_CASE("** is a power: right-associative, tighter than a sign on its left, overflow checked") {
  CHECK(evaluate("2 ** 10") == 1024);
  CHECK(evaluate("2 ** 3 ** 2") == 512);
  CHECK(evaluate("-2 ** 2") == -4);
  CHECK(evaluate("(-2) ** 3") == -8);
  CHECK(evaluate("2 * 3 ** 2") == 18);
  CHECK(evaluate("0 ** 0 + 7 ** 0 + 1 ** 999999999999") == 3);
  CHECK(evaluate("(-1) ** 9223372036854775807") == -1);
  CHECK(evaluate("2 ** 62") == std::int64_t{1} << 62);
  CHECK(evaluate("(-2) ** 63") == INT64_MIN);
  CHECK(evaluate("block_size_x == 2 ** log2_x", {{"block_size_x", 64}, {"log2_x", 6}}) == 1);
  CHECK(evaluation_error("2 ** 63") == "expression '2 ** 63': 2 ** 63 overflows 64 bits");
  CHECK(evaluation_error("3 ** 1000000") ==
        "expression '3 ** 1000000': 3 ** 1000000 overflows 64 bits");
  CHECK(evaluation_error("2 ** -1") ==
        "expression '2 ** -1': 2 ** -1 is a fraction: the exponent must not be negative");
  CHECK(parse_error("2 ** ") == "expression '2 ** ': expected a value at column 6");
}

TEST_CASE("comparisons chain as Python's do, within C's two comparison levels") {
  const auto x = [](std::int64_t value) {
    return std::map<std::string, std::int64_t>{{"x", value}};
  };
  CHECK(evaluate("0 < x <= 8", x(8)) == 1);
  CHECK(evaluate("0 < x <= 8", x(9)) == 0);
  CHECK(evaluate("0 < x <= 8", x(0)) == 0);
  CHECK(evaluate("1 <= 2 < 3 < 4 >= 4") == 1);
  CHECK(evaluate("1 < 3 > 2") == 1);
  CHECK(evaluate("2 == 2 == 2") == 1);
  CHECK(evaluate("1 == 1 != 2") == 1);
  CHECK(evaluate("3 == 3 == 1") == 0);
  // == and != compare truths of the tighter < <= > >=, as in C.
  CHECK(evaluate("1 < 2 == 3 < 4") == 1);
  CHECK(evaluate("1 < 2 == 1") == 1);
  // Each operand once, stopping at the first comparison that fails.
  CHECK(evaluate("0 < B < A / B", {{"A", 9}, {"B", 0}}) == 0);
  CHECK(evaluate("0 < B < A / B", {{"A", 9}, {"B", 2}}) == 1);
  CHECK(evaluate("x < y < UNKNOWN", {{"x", 3}, {"y", 2}}) == 0);
}

TEST_CASE("an error quotes the text as written and points at the word at fault") {
  CHECK(parse_error("use_padding==0 xor (block_size_x % 32 != 0)") ==
        "expression 'use_padding==0 xor (block_size_x % 32 != 0)': unexpected 'xor' at "
        "column 16");
  CHECK(parse_error("block_size_x = 32") ==
        "expression 'block_size_x = 32': unexpected '=' (a comparison is '==') at column 14");
  CHECK(parse_error("x and or y") ==
        "expression 'x and or y': expected a value, got 'or' at column 7");
  CHECK(parse_error("x == not y") ==
        "expression 'x == not y': expected a value, got 'not' at column 6");
  CHECK(parse_error("x and") == "expression 'x and': expected a value at column 6");
  CHECK(parse_error("2 *** 3") == "expression '2 *** 3': expected a value, got '*' at column 5");
  CHECK(parse_error(std::string(100, '-') + "1").find("nesting deeper than 64") !=
        std::string::npos);
  std::string powers = "2";
  for (int i = 0; i < 100; ++i) powers += " ** 2";
  CHECK(parse_error(powers).find("nesting deeper than 64") != std::string::npos);
  std::string nots;
  for (int i = 0; i < 100; ++i) nots += "not ";
  CHECK(parse_error(nots + "1").find("nesting deeper than 64") != std::string::npos);
}

TEST_CASE("random text never crashes the parser: it parses or throws Error") {
  const std::string alphabet = "AB01 +-*/%()<>=!&|_x9andotTrueF";
  std::mt19937 generator(7);
  std::uniform_int_distribution<std::size_t> letter(0, alphabet.size() - 1);
  std::uniform_int_distribution<int> length(0, 40);
  int parsed = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string text;
    for (int i = length(generator); i > 0; --i) text += alphabet[letter(generator)];
    try {
      const ptxrt::Expression expression = ptxrt::Expression::parse(text);
      ++parsed;
      try {
        expression.evaluate([](std::string_view) { return std::optional<std::int64_t>(3); });
      } catch (const ptxrt::Error&) {
      }
    } catch (const ptxrt::Error&) {
    }
  }
  CHECK(parsed > 0);
}

TEST_CASE("a manifest marks tunable defines and keeps its constraints") {
  const ptxrt::Manifest manifest = ptxrt::parse_manifest(
      "// ptxrt: define TM in {4, 8} default 8\n"
      "// ptxrt: define TN in {4, 8}\n"
      "// ptxrt: define NAME in {a, b} default a\n"
      "// ptxrt: tune TM TN\n"
      "// ptxrt: constraint TM * TN <= 32\n",
      "k.cu");
  CHECK(manifest.find_define("TM")->tunable);
  CHECK(manifest.find_define("TN")->tunable);
  CHECK_FALSE(manifest.find_define("NAME")->tunable);
  REQUIRE(manifest.constraints.size() == 1);
  CHECK(manifest.constraints[0].expression.text() == "TM * TN <= 32");
  CHECK(manifest.constraints[0].line == 5);
}

TEST_CASE("tune and constraint lines are checked against the defines above them") {
  CHECK(manifest_error("// ptxrt: tune TM\n") == "k.cu:1: tune TM: no 'define TM' line above");
  CHECK(manifest_error("// ptxrt: define T in {a, b}\n// ptxrt: tune T\n") ==
        "k.cu:2: tune T: value 'a' is not an integer");
  CHECK(manifest_error("// ptxrt: tune\n") ==
        "k.cu:1: expected the names of declared defines after 'tune'");
  CHECK(manifest_error("// ptxrt: define T in {1}\n// ptxrt: constraint T < U\n") ==
        "k.cu:2: constraint 'T < U' names U, which no 'define' line above declares");
  CHECK(manifest_error("// ptxrt: define T in {1}\n// ptxrt: constraint T <\n") ==
        "k.cu:2: expression 'T <': expected a value at column 4");
  CHECK(manifest_error("// ptxrt: constraint\n") ==
        "k.cu:1: expected an expression after 'constraint'");
}
