#include "ptxrt/tune/kernel_problem.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "jit/hash.hpp"
#include "ptxrt/core/manifest.hpp"
#include "support/quoted.hpp"
#include "tune/problem_checks.hpp"
#include "tune/problem_fields.hpp"

namespace ptxrt {

namespace {

using detail::argument_field;
using detail::join_names;
using detail::number_text;
using detail::symbol_field;

Expression parse_field(std::string_view text, std::string_view field) {
  try {
    return Expression::parse(text);
  } catch (const Error& error) {
    throw Error(ErrorKind::invalid_argument, std::string(field) + ": " + error.what());
  }
}

std::string geometry_text(const LaunchGeometry& geometry) {
  std::string text;
  for (const Expression& expression : geometry.block) text += expression.text() + ";";
  for (const Expression& expression : geometry.grid) text += expression.text() + ";";
  return text + geometry.shared_bytes.text();
}

}  // namespace

LaunchGeometry LaunchGeometry::of(const std::vector<std::string>& block,
                                  const std::vector<std::string>& grid,
                                  std::string_view shared_bytes) {
  if (block.size() > 3 || grid.size() > 3)
    throw Error(ErrorKind::invalid_argument, "a launch has at most 3 block and 3 grid dimensions");
  LaunchGeometry geometry;
  for (std::size_t d = 0; d < block.size(); ++d)
    geometry.block[d] = parse_field(block[d], "block[" + std::to_string(d) + "]");
  for (std::size_t d = 0; d < grid.size(); ++d)
    geometry.grid[d] = parse_field(grid[d], "grid[" + std::to_string(d) + "]");
  geometry.shared_bytes = parse_field(shared_bytes, "shared_memory");
  return geometry;
}

KernelProblem::KernelProblem(Program program, std::string entry)
    : name_(entry), program_(std::move(program)), entry_(std::move(entry)) {
  if (entry_.empty())
    throw Error(ErrorKind::invalid_argument, program_.name() + ": the problem names no kernel");
}

KernelProblem& KernelProblem::name(std::string name) {
  name_ = std::move(name);
  return *this;
}

KernelProblem& KernelProblem::size(std::string name, std::optional<std::int64_t> default_value) {
  sizes_.emplace_back(std::move(name), default_value);
  return *this;
}

KernelProblem& KernelProblem::tune(std::string name, std::vector<std::int64_t> values,
                                   std::optional<std::int64_t> default_value) {
  // TuningSpace checks the name, the values and the default, with its own messages.
  TuningSpace().add_parameter(name, values, default_value);
  tunables_.push_back({std::move(name), std::move(values), default_value});
  return *this;
}

KernelProblem& KernelProblem::constraint(std::string_view expression) {
  constraints_.push_back(
      parse_field(expression, "constraints[" + std::to_string(constraints_.size()) + "]"));
  return *this;
}

KernelProblem& KernelProblem::define(std::string name, std::string_view expression) {
  Expression value = parse_field(expression, "defines." + detail::printable(name));
  defines_.emplace_back(std::move(name), std::move(value));
  return *this;
}

KernelProblem& KernelProblem::compile_option(std::string option) {
  compile_options_.push_back(std::move(option));
  return *this;
}

KernelProblem& KernelProblem::block(std::string_view x, std::string_view y, std::string_view z) {
  geometry_.block = {parse_field(x, "block[0]"), parse_field(y, "block[1]"),
                     parse_field(z, "block[2]")};
  return *this;
}

KernelProblem& KernelProblem::grid(std::string_view x, std::string_view y, std::string_view z) {
  geometry_.grid = {parse_field(x, "grid[0]"), parse_field(y, "grid[1]"),
                    parse_field(z, "grid[2]")};
  grid_divide_parts_.clear();
  return *this;
}

KernelProblem& KernelProblem::grid_divide(const std::vector<std::string>& extents,
                                          const std::vector<std::vector<std::string>>& divisors) {
  if (extents.size() > 3 || divisors.size() > extents.size())
    throw Error(ErrorKind::invalid_argument,
                "grid_div: at most 3 problem extents, and no more divisor lists than extents");
  // Each part on its own first, so that an error quotes the text and the field the user wrote.
  std::vector<std::pair<std::string, Expression>> parts;
  const auto add_part = [&](const std::string& text, const std::string& field) {
    parts.emplace_back(field, parse_field(text, field));
  };
  for (std::size_t d = 0; d < extents.size(); ++d) {
    add_part(extents[d], "problem_size[" + std::to_string(d) + "]");
    std::string divisor;
    if (d < divisors.size())
      for (std::size_t i = 0; i < divisors[d].size(); ++i) {
        add_part(divisors[d][i],
                 std::string("grid_div_") + "xyz"[d] + "[" + std::to_string(i) + "]");
        divisor += (divisor.empty() ? "(" : ") * (") + divisors[d][i];
      }
    const std::string text =
        divisor.empty() ? extents[d] : "ceil_div(" + extents[d] + ", " + divisor + "))";
    geometry_.grid[d] = parse_field(text, std::string("grid_div_") + "xyz"[d]);
  }
  grid_divide_parts_ = std::move(parts);
  return *this;
}

KernelProblem& KernelProblem::shared_memory(std::string_view bytes) {
  geometry_.shared_bytes = parse_field(bytes, "shared_memory");
  return *this;
}

KernelProblem& KernelProblem::buffer(std::string name, ElementType type, std::string_view count,
                                     DataInit init, ArgumentRole role) {
  ProblemArgument argument;
  argument.count = parse_field(count, argument_field(arguments_.size()) + ".count");
  argument.name = std::move(name);
  argument.type = type;
  argument.init = std::move(init);
  argument.role = role;
  arguments_.push_back(std::move(argument));
  return *this;
}

KernelProblem& KernelProblem::scalar(std::string name, ElementType type, std::string_view value) {
  ProblemArgument argument;
  argument.kind = ProblemArgument::Kind::scalar;
  argument.value = parse_field(value, argument_field(arguments_.size()) + ".value");
  argument.name = std::move(name);
  argument.type = type;
  arguments_.push_back(std::move(argument));
  return *this;
}

KernelProblem& KernelProblem::scalar(std::string name, ElementType type, double number) {
  ProblemArgument argument;
  argument.kind = ProblemArgument::Kind::scalar;
  argument.name = std::move(name);
  argument.type = type;
  argument.number = number;
  arguments_.push_back(std::move(argument));
  return *this;
}

KernelProblem& KernelProblem::symbol(std::string name, std::string from_argument) {
  symbols_.push_back({std::move(name), std::move(from_argument), {}, std::nullopt, {}});
  return *this;
}

KernelProblem& KernelProblem::symbol(std::string name, ElementType type, std::string_view count,
                                     DataInit init) {
  Expression parsed = parse_field(count, symbol_field(symbols_.size()) + ".count");
  symbols_.push_back({std::move(name), {}, type, std::move(parsed), std::move(init)});
  return *this;
}

KernelProblem& KernelProblem::verify_with_kernel(ReferenceKernel reference) {
  verification_.kind = ProblemVerification::Kind::reference_kernel;
  verification_.kernel = std::move(reference);
  return *this;
}

KernelProblem& KernelProblem::verify_with_config(TuningConfig config) {
  verification_.kind = ProblemVerification::Kind::reference_config;
  verification_.config = std::move(config);
  return *this;
}

KernelProblem& KernelProblem::verify_with_files(
    std::vector<std::pair<std::string, std::filesystem::path>> files) {
  verification_.kind = ProblemVerification::Kind::files;
  verification_.files = std::move(files);
  return *this;
}

KernelProblem& KernelProblem::verify_with(ReferenceCallback callback) {
  verification_.kind = ProblemVerification::Kind::callback;
  verification_.callback = std::move(callback);
  return *this;
}

KernelProblem& KernelProblem::verify_on_device(DeviceReferenceCallback callback) {
  verification_.kind = ProblemVerification::Kind::device_callback;
  verification_.device_callback = std::move(callback);
  return *this;
}

KernelProblem& KernelProblem::constraint(std::string description, ProblemConstraint check) {
  checks_.emplace_back(std::move(description), std::move(check));
  return *this;
}

KernelProblem& KernelProblem::launch_with(ProblemLauncher launcher) {
  launcher_ = std::move(launcher);
  return *this;
}

KernelProblem& KernelProblem::peer(ProblemPeer peer) {
  peer_ = std::move(peer);
  return *this;
}

KernelProblem& KernelProblem::try_first(ProblemFirstConfigs suggest) {
  first_configs_ = std::move(suggest);
  return *this;
}

KernelProblem& KernelProblem::key_by_source() {
  key_by_source_ = true;
  return *this;
}

bool KernelProblem::is_declarative() const noexcept {
  return verification_.kind != ProblemVerification::Kind::callback &&
         verification_.kind != ProblemVerification::Kind::device_callback && checks_.empty() &&
         !launcher_ && !peer_;
}

KernelProblem& KernelProblem::tolerance(double atol, double rtol,
                                        ProblemVerification::RelativeTo relative_to) {
  for (const auto& [field, value] :
       {std::pair{"verify.atol", atol}, std::pair{"verify.rtol", rtol}})
    if (!(value >= 0.0) || !std::isfinite(value))
      throw Error(
          ErrorKind::invalid_argument,
          std::string(field) + ": must be a finite number, 0 or more, got " + number_text(value));
  verification_.atol = atol;
  verification_.rtol = rtol;
  verification_.relative_to = relative_to;
  return *this;
}

KernelProblem& KernelProblem::flops(std::string_view work) {
  return set_rate("flops", work, "GFLOP/s", 1e9);
}
KernelProblem& KernelProblem::bytes(std::string_view work) {
  return set_rate("bytes", work, "GB/s", 1e9);
}
KernelProblem& KernelProblem::rate(std::string_view work, std::string unit, double unit_scale) {
  if (!(unit_scale > 0.0) || !std::isfinite(unit_scale))
    throw Error(ErrorKind::invalid_argument,
                "rate.scale: must be a finite number above 0, got " + number_text(unit_scale));
  return set_rate("rate.work", work, std::move(unit), unit_scale);
}

std::string_view to_string(ProblemMetric::Per per) {
  switch (per) {
    case ProblemMetric::Per::time_s:
      return "time_s";
    case ProblemMetric::Per::time_ms:
      return "time_ms";
    case ProblemMetric::Per::energy_j:
      return "energy_j";
    case ProblemMetric::Per::power_w:
      return "power_w";
  }
  return "unknown";
}

KernelProblem& KernelProblem::metric(ProblemMetric metric) {
  const std::string field = "metrics." + metric.name;
  const bool taken = std::any_of(metrics_.begin(), metrics_.end(), [&](const ProblemMetric& other) {
    return other.name == metric.name;
  });
  if (metric.name.empty() || taken || metric.name == "time" || metric.name == "energy" ||
      metric.name == "power")
    throw Error(ErrorKind::invalid_argument,
                field +
                    ": a metric needs a name of its own (not time, energy or power, which a "
                    "tune measures itself)");
  if (!(metric.scale > 0.0) || !std::isfinite(metric.scale))
    throw Error(
        ErrorKind::invalid_argument,
        field + ".scale: must be a finite number above 0, got " + number_text(metric.scale));
  metrics_.push_back(std::move(metric));
  return *this;
}

KernelProblem& KernelProblem::tune_from_manifest() {
  const Manifest& manifest = program_.manifest();
  for (const ManifestDefine& declared : manifest.defines) {
    if (!declared.tunable) continue;
    std::vector<std::int64_t> values;
    for (const std::string& value : declared.values) values.push_back(std::stoll(value));
    std::optional<std::int64_t> fallback;
    if (declared.default_value) fallback = std::stoll(*declared.default_value);
    tune(declared.name, std::move(values), fallback);
  }
  for (const ManifestConstraint& constraint : manifest.constraints)
    this->constraint(constraint.expression.text());
  return *this;
}

KernelProblem& KernelProblem::set_rate(std::string field, std::string_view work, std::string unit,
                                       double unit_scale) {
  rate_ = {parse_field(work, field), std::move(unit), unit_scale};
  rate_field_ = std::move(field);
  return *this;
}

std::string KernelProblem::origin() const {
  return origin_.empty() ? program_.name() + " (" + name_ + ")" : origin_;
}

TuningConfig KernelProblem::default_config() const {
  TuningSpace space;
  for (const TuningParameter& tunable : tunables_)
    space.add_parameter(tunable.name, tunable.values, tunable.default_value);
  return space.default_config();
}

ProblemSizes KernelProblem::complete_sizes(const ProblemSizes& given) const {
  ProblemSizes sizes;
  std::vector<std::string> declared;
  for (const auto& [name, fallback] : sizes_) declared.push_back(name);
  for (const auto& [name, value] : given)
    if (std::find(declared.begin(), declared.end(), name) == declared.end())
      throw Error(ErrorKind::invalid_argument,
                  name_ + " has no size " + name + " (its sizes: " + join_names(declared) + ")");
  for (const auto& [name, fallback] : sizes_) {
    const auto found = given.find(name);
    if (found != given.end())
      sizes.emplace(name, found->second);
    else if (fallback)
      sizes.emplace(name, *fallback);
    else
      throw Error(ErrorKind::invalid_argument,
                  "size " + name + " of " + name_ +
                      " is not given and has no default (its sizes: " + join_names(declared) +
                      "; on the command line: --size " + name + "=N)");
  }
  return sizes;
}

std::vector<std::int64_t> KernelProblem::size_values(const ProblemSizes& sizes) const {
  const ProblemSizes complete = complete_sizes(sizes);
  std::vector<std::int64_t> values;
  for (const auto& [name, fallback] : sizes_) values.push_back(complete.at(name));
  return values;
}

std::int64_t KernelProblem::evaluate(const Expression& expression, const ProblemSizes& sizes,
                                     const TuningConfig& config, std::string_view field) const {
  // Defines read sizes and the defines before them; a depth bound keeps a cycle from recursing.
  std::function<std::optional<std::int64_t>(std::string_view, int)> lookup =
      [&](std::string_view name, int depth) -> std::optional<std::int64_t> {
    if (std::optional<std::int64_t> value = config.find(name)) return value;
    if (const auto found = sizes.find(name); found != sizes.end()) return found->second;
    if (depth > 0)
      for (const auto& [define, value] : defines_)
        if (define == name)
          return value.evaluate([&](std::string_view inner) { return lookup(inner, depth - 1); });
    return std::nullopt;
  };
  try {
    return expression.evaluate(
        [&](std::string_view name) { return lookup(name, static_cast<int>(defines_.size())); });
  } catch (const Error& error) {
    throw Error(ErrorKind::invalid_argument,
                name_ + ": " + std::string(field) + " at " + format_problem_sizes(sizes) +
                    (config.defines().empty() ? "" : " " + config.describe()) + ": " +
                    error.what());
  }
}

TuningSpace KernelProblem::space_at(const ProblemSizes& sizes) const {
  TuningSpace space;
  for (const TuningParameter& tunable : tunables_)
    space.add_parameter(tunable.name, tunable.values, tunable.default_value);
  for (const auto& [name, value] : sizes) space.add_fixed_value(name, value);
  for (const auto& [define, value] : defines_)
    space.add_fixed_value(define, evaluate(value, sizes, {}, "defines." + define));
  for (const Expression& constraint : constraints_) space.add_constraint(constraint);
  for (const std::pair<std::string, ProblemConstraint>& named_check : checks_)
    space.add_constraint(named_check.first,
                         [check = named_check.second, sizes](const TuningConfig& config) {
                           return check(config, sizes);
                         });
  return space;
}

CompileOptions KernelProblem::compile_options_at(const ProblemSizes& sizes) const {
  CompileOptions options;
  for (const auto& [define, value] : defines_)
    options.defines.push_back(
        {define, std::to_string(evaluate(value, sizes, {}, "defines." + define))});
  options.extra_options = compile_options_;
  options.name_expressions.push_back(entry_);
  for (const ProblemSymbol& symbol : symbols_)
    options.name_expressions.push_back("&" + symbol.name);
  if (verification_.check) options.name_expressions.push_back(verification_.check->entry);
  return options;
}

TuningConfig KernelProblem::fallback_config(const ProblemSizes& sizes) const {
  const TuningSpace space = space_at(sizes);
  TuningConfig config = space.default_config();
  if (space.admits(config)) return config;
  const SpaceEnumeration enumeration = space.enumerate();
  if (enumeration.allowed.empty())
    throw Error(
        ErrorKind::invalid_argument,
        name_ + ": the constraints allow no config at " + format_problem_sizes(sizes) +
            (enumeration.pruned.empty() ? ""
                                        : " (" + enumeration.pruned.front().config.describe() +
                                              ": " + enumeration.pruned.front().reason + ")"));
  return enumeration.allowed.front();
}

KernelProblem::ReferenceBuild KernelProblem::reference_build_at(const ProblemSizes& sizes) const {
  const ReferenceKernel& reference = verification_.kernel;
  const TuningConfig fallback = fallback_config(sizes);
  std::vector<Define> given;
  for (const auto& [name, value] : reference.defines)
    given.push_back({name, std::to_string(evaluate(value, sizes, fallback,
                                                   "verify.reference.defines." + name))});
  const auto overridden = [&](const Define& define) {
    return std::any_of(given.begin(), given.end(),
                       [&](const Define& mine) { return mine.name == define.name; });
  };
  std::vector<Define> values = fallback.defines();
  std::erase_if(values, overridden);
  values.insert(values.end(), given.begin(), given.end());
  CompileOptions options = compile_options_at(sizes);
  std::erase_if(options.defines, overridden);
  options.defines.insert(options.defines.end(), values.begin(), values.end());
  options.name_expressions = {reference.entry};
  if (!reference.program)
    for (const ProblemSymbol& symbol : symbols_)
      options.name_expressions.push_back("&" + symbol.name);
  return {std::move(options), TuningConfig(std::move(values))};
}

LaunchConfig KernelProblem::launch_at(const TuningConfig& config, const ProblemSizes& sizes) const {
  return launch_at(geometry_, config, sizes);
}

LaunchConfig KernelProblem::launch_at(const LaunchGeometry& geometry, const TuningConfig& config,
                                      const ProblemSizes& sizes, std::string_view prefix) const {
  const auto dimension = [&](const Expression& expression, const std::string& name) {
    const std::string field = std::string(prefix) + name;
    const std::int64_t value = evaluate(expression, sizes, config, field);
    if (value < 1 || value > std::numeric_limits<unsigned>::max())
      throw Error(ErrorKind::invalid_argument,
                  name_ + ": " + field + " " + detail::quoted(expression.text()) + " is " +
                      std::to_string(value) + " at " + format_problem_sizes(sizes) + " " +
                      config.describe() + ": a launch dimension must be from 1 to 2^32-1");
    return static_cast<unsigned>(value);
  };
  LaunchConfig launch;
  const LaunchGeometry& g = geometry;
  launch.block = Dim3(dimension(g.block[0], "block[0]"), dimension(g.block[1], "block[1]"),
                      dimension(g.block[2], "block[2]"));
  launch.grid = Dim3(dimension(g.grid[0], "grid[0]"), dimension(g.grid[1], "grid[1]"),
                     dimension(g.grid[2], "grid[2]"));
  const std::int64_t shared =
      evaluate(g.shared_bytes, sizes, config, std::string(prefix) + "shared_memory");
  if (shared < 0)
    throw Error(ErrorKind::invalid_argument, name_ + ": " + std::string(prefix) + "shared_memory " +
                                                 detail::quoted(g.shared_bytes.text()) +
                                                 " is negative at " + config.describe());
  launch.dynamic_shared_bytes = static_cast<std::size_t>(shared);
  return launch;
}

std::vector<std::size_t> KernelProblem::argument_bytes() const {
  std::vector<std::size_t> bytes;
  for (const ProblemArgument& argument : arguments_)
    bytes.push_back(argument.kind == ProblemArgument::Kind::buffer ? sizeof(CUdeviceptr)
                                                                   : element_bytes(argument.type));
  return bytes;
}

std::string KernelProblem::key_hash() const {
  if (key_by_source_) return source_hash(program_);
  Sha256 hash;
  hash.update_field("ptxrt kernel problem 1")
      .update_field(source_hash(program_))
      .update_field(entry_);
  for (const auto& [define, value] : defines_) hash.update_field(define).update_field(value.text());
  for (const std::string& option : compile_options_) hash.update_field(option);
  hash.update_field(geometry_text(geometry_));
  for (const ProblemArgument& argument : arguments_) {
    hash.update_field(argument.name).update_field(to_string(argument.type));
    hash.update_field(argument.count ? argument.count->text() : "");
    hash.update_field(argument.value ? argument.value->text() : "");
    hash.update_field(argument.number ? std::to_string(*argument.number) : "");
  }
  for (const ProblemSymbol& symbol : symbols_)
    hash.update_field(symbol.name)
        .update_field(symbol.from_argument)
        .update_field(symbol.count ? symbol.count->text() : "");
  return hash.hex_digest();
}

}  // namespace ptxrt
