// Aggregates, check kernels and data made from other data: their builders, their validation and
// the pure functions a session verifies with (tune/problem_checks.hpp).
#include "tune/problem_checks.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "support/quoted.hpp"

namespace ptxrt {

namespace detail {

namespace {

constexpr std::string_view aggregate_names[] = {"sum", "min", "max", "count"};
constexpr std::string_view reference_prefix = "reference.";

std::string index_field(std::string_view list, std::size_t index) {
  return std::string(list) + "[" + std::to_string(index) + "]";
}

const ProblemArgument* find_argument(const KernelProblem& problem, std::string_view name) {
  for (const ProblemArgument& argument : problem.arguments())
    if (argument.name == name) return &argument;
  return nullptr;
}

class ChecksValidator {
 public:
  ChecksValidator(const KernelProblem& problem, const NameCheck& check_names)
      : problem_(problem), check_names_(check_names), origin_(problem.origin()) {}

  [[noreturn]] void invalid(const std::string& field, const std::string& what) const {
    throw Error(ErrorKind::invalid_argument, origin_ + ": " + field + ": " + what);
  }

  void geometry(const LaunchGeometry& geometry, const std::string& prefix) const {
    for (std::size_t d = 0; d < 3; ++d) {
      check_names_(geometry.block[d], prefix + index_field("block", d), NameScope::with_config);
      check_names_(geometry.grid[d], prefix + index_field("grid", d), NameScope::with_config);
    }
    check_names_(geometry.shared_bytes, prefix + "shared_memory", NameScope::with_config);
  }

  const ProblemArgument& buffer_named(const std::string& name, const std::string& field) const {
    const ProblemArgument* argument = find_argument(problem_, name);
    if (argument == nullptr || argument->kind != ProblemArgument::Kind::buffer)
      invalid(field, detail::quoted(name) + " is not a buffer argument");
    return *argument;
  }

  void init(const DataInit& init, const std::string& field, const std::string& own_name,
            bool of_symbol) const {
    switch (init.kind) {
      case DataInit::Kind::derived:
        buffer_named(init.source, field + ".source");
        return;
      case DataInit::Kind::offsets:
        if (!init.total) invalid(field, "offsets need a \"total\"");
        check_names_(*init.total, field + ".total", NameScope::fixed);
        return;
      case DataInit::Kind::kernel: {
        if (of_symbol) invalid(field + ".init", "a symbol's data cannot come from a kernel");
        const GeneratorKernel& generator = init.kernel;
        if (generator.entry.empty()) invalid(field + ".init.kernel", "no kernel named");
        geometry(generator.geometry, field + ".init.");
        for (std::size_t i = 0; i < generator.arguments.size(); ++i)
          if (find_argument(problem_, generator.arguments[i]) == nullptr)
            invalid(index_field(field + ".init.arguments", i),
                    detail::quoted(generator.arguments[i]) + " is not an argument");
        if (!generator.arguments.empty() &&
            std::find(generator.arguments.begin(), generator.arguments.end(), own_name) ==
                generator.arguments.end())
          invalid(field + ".init.arguments",
                  "the kernel must be given the buffer it makes, " + detail::quoted(own_name));
        return;
      }
      default:
        return;
    }
  }

  void tolerance(std::optional<double> value, const std::string& field) const {
    if (value && (!(*value >= 0.0) || !std::isfinite(*value)))
      invalid(field, "must be a finite number, 0 or more, got " + number_text(*value));
  }

  void aggregate(const OutputAggregate& check, const std::string& field, bool has_reference) const {
    const ProblemArgument* output = find_argument(problem_, check.output);
    if (output == nullptr || !output->is_output())
      invalid(field + ".output", detail::quoted(check.output) + " is not an output argument");
    if (check.length) check_names_(*check.length, field + ".length", NameScope::with_config);
    if (check.expected) check_names_(*check.expected, field + ".expected", NameScope::with_config);
    if (check.expected && check.expected_number)
      invalid(field + ".expected", "give an expression or a number, not both");
    if (!check.expected && !check.expected_number && !has_reference)
      invalid(field,
              "needs \"expected\", or a reference (verify.reference, config or files) "
              "whose output it aggregates too");
    tolerance(check.atol, field + ".atol");
    tolerance(check.rtol, field + ".rtol");
  }

  void check_kernel(const CheckKernel& check, bool has_reference) const {
    if (check.entry.empty()) invalid("verify.check.kernel", "no kernel named");
    geometry(check.geometry, "verify.check.");
    for (std::size_t i = 0; i < check.arguments.size(); ++i) {
      const std::string& name = check.arguments[i];
      const std::string field = index_field("verify.check.arguments", i);
      if (!name.starts_with(reference_prefix)) {
        if (find_argument(problem_, name) == nullptr)
          invalid(field, detail::quoted(name) + " is not an argument, nor reference.OUTPUT");
        continue;
      }
      const ProblemArgument* output = find_argument(problem_, name.substr(reference_prefix.size()));
      if (output == nullptr || !output->is_output())
        invalid(field, detail::quoted(name) + " names no output argument after \"reference.\"");
      if (!has_reference)
        invalid(field,
                detail::quoted(name) + " needs a reference (verify.reference, config or files)");
    }
  }

  void run() const {
    const std::vector<ProblemArgument>& arguments = problem_.arguments();
    for (std::size_t i = 0; i < arguments.size(); ++i)
      if (arguments[i].kind == ProblemArgument::Kind::buffer)
        init(arguments[i].init, index_field("arguments", i), arguments[i].name, false);
    const std::vector<ProblemSymbol>& symbols = problem_.symbols();
    for (std::size_t i = 0; i < symbols.size(); ++i)
      if (symbols[i].from_argument.empty())
        init(symbols[i].init, index_field("symbols", i), symbols[i].name, true);
    making_order(problem_);
    const ProblemVerification& verification = problem_.verification();
    const bool has_reference = verification.kind != ProblemVerification::Kind::none;
    for (std::size_t i = 0; i < verification.aggregates.size(); ++i)
      aggregate(verification.aggregates[i], index_field("verify.aggregates", i), has_reference);
    if (verification.check) check_kernel(*verification.check, has_reference);
  }

 private:
  const KernelProblem& problem_;
  const NameCheck& check_names_;
  std::string origin_;
};

}  // namespace

std::optional<std::string> unresolved_name(const Error& error) {
  constexpr std::string_view marker = "Input name expression was: \"";
  const std::string_view message = error.what();
  const std::size_t at = message.find(marker);
  if (error.kind() != ErrorKind::compile || at == std::string_view::npos) return std::nullopt;
  const std::size_t start = at + marker.size();
  const std::size_t end = message.find('"', start);
  std::string name(message.substr(start, end - start));
  name.erase(0, name.find_first_not_of(' '));
  return name;
}

namespace {

// `visit` called with a value of the C++ type that holds elements of `type`, so that a loop over
// elements switches on the type once.
template <typename Visit>
decltype(auto) with_element_type(ElementType type, Visit&& visit) {
  switch (type) {
    case ElementType::int8:
      return visit(std::int8_t{});
    case ElementType::int16:
      return visit(std::int16_t{});
    case ElementType::int32:
      return visit(std::int32_t{});
    case ElementType::int64:
      return visit(std::int64_t{});
    case ElementType::uint8:
      return visit(std::uint8_t{});
    case ElementType::uint16:
      return visit(std::uint16_t{});
    case ElementType::uint32:
      return visit(std::uint32_t{});
    case ElementType::uint64:
      return visit(std::uint64_t{});
    case ElementType::float32:
      return visit(float{});
    case ElementType::float64:
      return visit(double{});
  }
  throw Error(ErrorKind::invalid_argument, "unknown element type");
}

template <typename Element>
double element_at(const std::byte* elements, std::size_t index) {
  Element value;
  std::memcpy(&value, elements + index * sizeof(Element), sizeof value);
  return static_cast<double>(value);
}

}  // namespace

double element_value(ElementType type, const std::byte* at) {
  return with_element_type(type,
                           [&]<typename Element>(Element) { return element_at<Element>(at, 0); });
}

double largest_magnitude(ElementType type, std::span<const std::byte> elements) {
  return with_element_type(type, [&]<typename Element>(Element) {
    const std::size_t count = elements.size() / sizeof(Element);
    double largest = 0.0;
    for (std::size_t i = 0; i < count; ++i)
      largest = std::max(largest, std::abs(element_at<Element>(elements.data(), i)));
    return largest;
  });
}

ElementComparison compare_elements(ElementType type, std::span<const std::byte> expected,
                                   std::span<const std::byte> actual, double atol, double rtol,
                                   std::optional<double> scale) {
  return with_element_type(type, [&]<typename Element>(Element) {
    const std::size_t count = std::min(expected.size(), actual.size()) / sizeof(Element);
    ElementComparison result;
    for (std::size_t i = 0; i < count; ++i) {
      const double want = element_at<Element>(expected.data(), i);
      const double got = element_at<Element>(actual.data(), i);
      const double error = std::abs(got - want);
      const double allowance = atol + rtol * (scale ? *scale : std::abs(want));
      if (std::isnan(error)) {
        result.max_error = result.worst_share = INFINITY;
      } else {
        result.max_error = std::max(result.max_error, error);
        if (allowance > 0.0)
          result.worst_share = std::max(result.worst_share, error / allowance);
        else if (error > 0.0)
          result.worst_share = INFINITY;
      }
      if (!result.first_fault && !(error <= allowance)) {
        result.first_fault = i;
        result.fault_actual = got;
        result.fault_expected = want;
      }
    }
    return result;
  });
}

std::optional<std::string> element_fault(const std::string& output, ElementType type,
                                         const ElementComparison& comparison, double atol,
                                         double rtol, std::optional<double> scale,
                                         const std::string& reference_name) {
  if (!comparison.first_fault) return std::nullopt;
  const auto value_text = [type](double value) {
    if (type != ElementType::float32) return number_text(value);
    char text[24];  // the shortest form of a float takes at most 15 characters
    return std::string(text,
                       std::to_chars(text, text + sizeof text, static_cast<float>(value)).ptr);
  };
  return output + "[" + std::to_string(*comparison.first_fault) +
         "] = " + value_text(comparison.fault_actual) + ", expected " +
         value_text(comparison.fault_expected) + " (" + reference_name + "): outside atol " +
         number_text(atol) + " + rtol " + number_text(rtol) +
         (scale ? " x the largest |expected| " + value_text(*scale) : " x |expected|");
}

double aggregate_of(Aggregate aggregate, ElementType type, std::span<const std::byte> elements,
                    std::uint64_t length) {
  const std::size_t size = element_bytes(type);
  length = std::min<std::uint64_t>(length, elements.size() / size);
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  double result = aggregate == Aggregate::sum || aggregate == Aggregate::count ? 0.0 : nan;
  for (std::uint64_t i = 0; i < length; ++i) {
    const double value = element_value(type, elements.data() + i * size);
    switch (aggregate) {
      case Aggregate::sum:
        result += value;
        break;
      case Aggregate::count:
        result += value != 0.0 ? 1.0 : 0.0;
        break;
      case Aggregate::min:
      case Aggregate::max:
        if (std::isnan(value)) return nan;
        if (i == 0 || (aggregate == Aggregate::min ? value < result : value > result))
          result = value;
        break;
    }
  }
  return result;
}

std::optional<std::string> aggregate_fault(const OutputAggregate& check, std::uint64_t length,
                                           double actual, double expected, double atol, double rtol,
                                           const std::string& reference_name) {
  if (std::abs(actual - expected) <= atol + rtol * std::abs(expected)) return std::nullopt;
  return std::string(to_string(check.aggregate)) + " of " + check.output +
         "[0:" + std::to_string(length) + "] = " + number_text(actual) + ", expected " +
         number_text(expected) + " (" + reference_name + "): outside atol " + number_text(atol) +
         " + rtol " + number_text(rtol) + " x |expected|";
}

void validate_checks_and_sources(const KernelProblem& problem, const NameCheck& check_names) {
  ChecksValidator(problem, check_names).run();
}

std::vector<std::size_t> data_sources(const KernelProblem& problem, const DataInit& init,
                                      std::size_t own_position) {
  const std::vector<ProblemArgument>& arguments = problem.arguments();
  std::vector<std::string> names;
  if (init.kind == DataInit::Kind::derived) names.push_back(init.source);
  if (init.kind == DataInit::Kind::kernel) names = init.kernel.arguments;
  std::vector<std::size_t> sources;
  for (const std::string& name : names)
    for (std::size_t i = 0; i < arguments.size(); ++i)
      if (arguments[i].name == name && arguments[i].kind == ProblemArgument::Kind::buffer &&
          i != own_position)
        sources.push_back(i);
  return sources;
}

std::vector<std::size_t> making_order(const KernelProblem& problem) {
  // Kahn's algorithm, not a recursion: a hostile file's chain of a million derivations must not
  // exhaust the stack.
  const std::vector<ProblemArgument>& arguments = problem.arguments();
  std::vector<std::vector<std::size_t>> sources(arguments.size()), dependents(arguments.size());
  std::vector<std::size_t> pending(arguments.size(), 0), order;
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    if (arguments[i].kind != ProblemArgument::Kind::buffer) continue;
    sources[i] = data_sources(problem, arguments[i].init, i);
    pending[i] = sources[i].size();
    for (std::size_t source : sources[i]) dependents[source].push_back(i);
    if (pending[i] == 0) order.push_back(i);
  }
  for (std::size_t next = 0; next < order.size(); ++next)
    for (std::size_t dependent : dependents[order[next]])
      if (--pending[dependent] == 0) order.push_back(dependent);
  const auto waiting =
      std::find_if(pending.begin(), pending.end(), [](std::size_t count) { return count > 0; });
  if (waiting == pending.end()) return order;
  // Every buffer left waits for another left: following them from the first comes back round.
  std::vector<std::size_t> path{static_cast<std::size_t>(waiting - pending.begin())};
  std::vector<bool> on_path(arguments.size(), false);
  on_path[path.back()] = true;
  for (;;) {
    const std::vector<std::size_t>& from = sources[path.back()];
    const std::size_t source =
        *std::find_if(from.begin(), from.end(), [&](std::size_t s) { return pending[s] > 0; });
    path.push_back(source);
    if (on_path[source]) break;
    on_path[source] = true;
  }
  const auto first = std::find(path.begin(), path.end(), path.back());
  std::string cycle;
  for (auto step = first; step != path.end(); ++step)
    cycle += (cycle.empty() ? "" : " -> ") + arguments[*step].name;
  throw Error(ErrorKind::invalid_argument, problem.origin() + ": " +
                                               index_field("arguments", *first) +
                                               ".init: its data is made from itself: " + cycle);
}

}  // namespace detail

std::string_view to_string(Aggregate aggregate) {
  return detail::aggregate_names[static_cast<std::size_t>(aggregate)];
}

bool ProblemVerification::compares_elements_of(std::string_view output) const {
  if (std::any_of(aggregates.begin(), aggregates.end(),
                  [&](const OutputAggregate& aggregate) { return aggregate.output == output; }))
    return false;
  return !check || std::find(check->arguments.begin(), check->arguments.end(), output) ==
                       check->arguments.end();
}

KernelProblem& KernelProblem::aggregate(OutputAggregate check) {
  verification_.aggregates.push_back(std::move(check));
  return *this;
}

KernelProblem& KernelProblem::check_with_kernel(CheckKernel check) {
  verification_.check = std::move(check);
  return *this;
}

}  // namespace ptxrt
