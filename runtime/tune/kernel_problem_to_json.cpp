// The problem file's form of a KernelProblem written (docs/tuning.md, "A problem file"):
// to_json, which from_json reads back the same.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "jit/include_scanner.hpp"
#include "ptxrt/tune/kernel_problem.hpp"

namespace ptxrt {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace {

json expression_json(const Expression& expression) { return expression.text(); }

json geometry_json(const LaunchGeometry& geometry) {
  json block = json::array(), grid = json::array();
  for (const Expression& e : geometry.block) block.push_back(expression_json(e));
  for (const Expression& e : geometry.grid) grid.push_back(expression_json(e));
  return {
      {"block", block}, {"grid", grid}, {"shared_memory", expression_json(geometry.shared_bytes)}};
}

// A generator's or a check's kernel: its entry, geometry and arguments.
template <typename Launched>
json launched_json(const Launched& launched) {
  json spec = geometry_json(launched.geometry);
  spec["kernel"] = launched.entry;
  spec["arguments"] = launched.arguments;
  return spec;
}

json aggregate_json(const OutputAggregate& check) {
  json spec{{"output", check.output}, {"aggregate", to_string(check.aggregate)}};
  if (check.length) spec["length"] = check.length->text();
  if (check.expected) spec["expected"] = check.expected->text();
  if (check.expected_number) spec["expected"] = *check.expected_number;
  if (check.atol) spec["atol"] = *check.atol;
  if (check.rtol) spec["rtol"] = *check.rtol;
  return spec;
}

void init_json(json& spec, const DataInit& init) {
  switch (init.kind) {
    case DataInit::Kind::zeros:
      spec["init"] = "zeros";
      return;
    case DataInit::Kind::constant:
      spec.update({{"init", "constant"}, {"fill", init.value}});
      return;
    case DataInit::Kind::iota:
      spec.update({{"init", "iota"}, {"start", init.value}, {"step", init.step}});
      return;
    case DataInit::Kind::uniform:
      spec.update(
          {{"init", "uniform"}, {"low", init.low}, {"high", init.high}, {"seed", init.seed}});
      return;
    case DataInit::Kind::normal:
      spec.update({{"init", "normal"},
                   {"mean", init.mean},
                   {"deviation", init.deviation},
                   {"seed", init.seed}});
      return;
    case DataInit::Kind::file:
      spec.update({{"init", "file"}, {"file", fs::absolute(init.file).string()}});
      return;
    case DataInit::Kind::derived:
      spec.update({{"init", "derived"},
                   {"source", init.source},
                   {"noise", init.noise},
                   {"absolute", init.absolute},
                   {"seed", init.seed}});
      return;
    case DataInit::Kind::offsets:
      spec.update({{"init", "offsets"}, {"total", init.total->text()}, {"seed", init.seed}});
      return;
    case DataInit::Kind::kernel:
      spec["init"] = launched_json(init.kernel);
      return;
  }
}

constexpr const char* role_names[] = {"input", "output", "input_output"};

// How to find the program again: its file when it is one unchanged, a builtin by name, or its
// text with its headers.
void program_json(json& document, const Program& program, const ProgramsByName& programs_by_name) {
  std::string stem = program.name();
  if (stem.ends_with(".cu")) stem.resize(stem.size() - 3);
  if (programs_by_name) {
    const std::optional<Program> named = programs_by_name(stem);
    if (named && named->identity() == program.identity()) {
      document["builtin"] = stem;
      return;
    }
  }
  const fs::path file = program.directory() / program.name();
  if (program.headers().empty() && detail::read_source_if_readable(file) == program.source()) {
    document["source"] = fs::absolute(file).string();
    return;
  }
  document["source_text"] = program.source();
  document["source_name"] = program.name();
  document["source_directory"] = program.directory().string();
  json headers = json::object();
  for (const auto& [name, text] : program.headers()) headers[name] = text;
  document["headers"] = headers;
}

}  // namespace

std::string KernelProblem::to_json(const ProgramsByName& programs_by_name) const {
  if (!is_declarative())
    throw Error(ErrorKind::invalid_argument,
                name_ +
                    ": a problem with C++ callbacks (a reference, launcher, peer or "
                    "constraint) has no JSON form");
  json document{{"name", name_}, {"kernel", entry_}};
  program_json(document, program_, programs_by_name);
  json sizes = json::object();
  for (const auto& [name, fallback] : sizes_) sizes[name] = fallback ? json(*fallback) : json();
  document["sizes"] = sizes;
  json tune = json::object();
  for (const TuningParameter& tunable : tunables_) {
    tune[tunable.name] = {{"values", tunable.values}};
    if (tunable.default_value) tune[tunable.name]["default"] = *tunable.default_value;
  }
  document["tune"] = tune;
  json constraints = json::array();
  for (const Expression& constraint : constraints_) constraints.push_back(constraint.text());
  document["constraints"] = constraints;
  json defines = json::object();
  for (const auto& [name, value] : defines_) defines[name] = value.text();
  document["defines"] = defines;
  document["compile_options"] = compile_options_;
  document.update(geometry_json(geometry_));
  json arguments = json::array();
  for (const ProblemArgument& argument : arguments_) {
    json spec{{"name", argument.name}, {"type", to_string(argument.type)}};
    if (argument.kind == ProblemArgument::Kind::buffer) {
      spec["count"] = argument.count->text();
      spec["role"] = role_names[static_cast<int>(argument.role)];
      init_json(spec, argument.init);
    } else {
      spec["value"] = argument.value ? json(argument.value->text()) : json(*argument.number);
    }
    arguments.push_back(spec);
  }
  document["arguments"] = arguments;
  json symbols = json::array();
  for (const ProblemSymbol& symbol : symbols_) {
    json spec{{"name", symbol.name}};
    if (!symbol.from_argument.empty()) {
      spec["from"] = symbol.from_argument;
    } else {
      spec.update({{"type", to_string(symbol.type)}, {"count", symbol.count->text()}});
      init_json(spec, symbol.init);
    }
    symbols.push_back(spec);
  }
  document["symbols"] = symbols;
  json verify{{"atol", verification_.atol}, {"rtol", verification_.rtol}};
  if (verification_.relative_to == ProblemVerification::RelativeTo::largest)
    verify["rtol_of"] = "largest";
  if (verification_.kind == ProblemVerification::Kind::reference_kernel) {
    const ReferenceKernel& kernel = verification_.kernel;
    json reference = geometry_json(kernel.geometry);
    reference["kernel"] = kernel.entry;
    if (kernel.program)
      reference["file"] =
          fs::absolute(kernel.program->directory() / kernel.program->name()).string();
    json reference_defines = json::object();
    for (const auto& [name, value] : kernel.defines) reference_defines[name] = value.text();
    reference["defines"] = reference_defines;
    reference["arguments"] = kernel.arguments;
    verify["reference"] = reference;
  } else if (verification_.kind == ProblemVerification::Kind::reference_config) {
    json config = json::object();
    for (const Define& define : verification_.config.defines())
      config[define.name] = std::stoll(define.value);
    verify["config"] = config;
  } else if (verification_.kind == ProblemVerification::Kind::files) {
    json files = json::object();
    for (const auto& [output, path] : verification_.files)
      files[output] = fs::absolute(path).string();
    verify["files"] = files;
  }
  if (!verification_.aggregates.empty()) {
    json aggregates = json::array();
    for (const OutputAggregate& check : verification_.aggregates)
      aggregates.push_back(aggregate_json(check));
    verify["aggregates"] = aggregates;
  }
  if (verification_.check) verify["check"] = launched_json(*verification_.check);
  if (verification_.kind != ProblemVerification::Kind::none || !verification_.aggregates.empty() ||
      verification_.check)
    document["verify"] = verify;
  if (!rate_.unit.empty())
    document["rate"] = {
        {"work", rate_.work.text()}, {"unit", rate_.unit}, {"scale", rate_.unit_scale}};
  for (const ProblemMetric& metric : metrics_)
    document["metrics"][metric.name] = {{"work", metric.work.text()},
                                        {"per", to_string(metric.per)},
                                        {"scale", metric.scale},
                                        {"maximize", metric.maximize}};
  return document.dump(1, ' ', false, json::error_handler_t::replace);
}

}  // namespace ptxrt
