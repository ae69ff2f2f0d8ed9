// The problem file's form of a KernelProblem (docs/tuning.md, "A problem file") read, from a
// file or a kernel file's manifest lines; kernel_problem_to_json.cpp writes it.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "ptxrt/tune/kernel_problem.hpp"
#include "support/bounded_json.hpp"
#include "support/regular_file.hpp"

namespace ptxrt {

namespace fs = std::filesystem;
// Ordered: the order of sizes, tunables and defines is the key's, the enumeration's and the
// defines' (a define may read those before it).
using json = nlohmann::ordered_json;

namespace {

// A problem file is a page of JSON; one that embeds its kernel's source is a few pages more.
constexpr detail::ReadLimits problem_file_limits{.max_bytes = std::uint64_t{16} << 20};

// A refusal by the reader itself, whose message names the origin and the field already: build()
// passes it on as it is.
class FieldError : public Error {
 public:
  using Error::Error;
};

class Reader {
 public:
  Reader(std::string origin, fs::path base, ProgramsByName programs_by_name = {})
      : origin_(std::move(origin)),
        base_(std::move(base)),
        programs_by_name_(std::move(programs_by_name)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw FieldError(ErrorKind::invalid_argument,
                     origin_ + ": " + detail::printable(path, 200) + ": " + what);
  }

  // Runs a builder step; its own message (which names the field) gets the origin in front.
  template <typename Step>
  void build(Step step) const {
    try {
      step();
    } catch (const FieldError&) {
      throw;
    } catch (const Error& error) {
      throw FieldError(error.kind(), origin_ + ": " + error.what());
    }
  }

  void only(const json& object, const std::string& path,
            std::initializer_list<std::string_view> known) const {
    for (const auto& [key, value] : object.items()) {
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      std::string list;
      for (std::string_view field : known) list += (list.empty() ? "" : ", ") + std::string(field);
      fail(path.empty() ? key : path + "." + key, "unknown field (known here: " + list + ")");
    }
  }

  [[noreturn]] void expected(const std::string& path, std::string_view what,
                             const json& value) const {
    fail(path, "expected " + std::string(what) + ", got " + detail::describe_json(value));
  }
  const json& object(const json& value, const std::string& path) const {
    if (!value.is_object()) expected(path, "an object {...}", value);
    return value;
  }
  const json& list(const json& value, const std::string& path) const {
    if (!value.is_array()) expected(path, "a list [...]", value);
    return value;
  }
  std::string text(const json& value, const std::string& path) const {
    if (!value.is_string()) expected(path, "a string", value);
    return value.get<std::string>();
  }
  // An expression: a string, or an integer written as a number.
  std::string expression(const json& value, const std::string& path) const {
    if (value.is_number_integer()) return value.dump();
    if (!value.is_string()) expected(path, "an expression (a string or an integer)", value);
    return value.get<std::string>();
  }
  Expression parsed_expression(const json& value, const std::string& path) const {
    const std::string written = expression(value, path);
    try {
      return Expression::parse(written);
    } catch (const Error& error) {
      fail(path, error.what());
    }
  }
  std::vector<std::string> names(const json& value, const std::string& path) const {
    std::vector<std::string> listed;
    for (std::size_t i = 0; i < list(value, path).size(); ++i)
      listed.push_back(text(value[i], path + "[" + std::to_string(i) + "]"));
    return listed;
  }
  std::vector<std::string> expressions(const json& value, const std::string& path) const {
    std::vector<std::string> texts;
    if (!value.is_array()) {
      texts.push_back(expression(value, path));
      return texts;
    }
    if (value.empty() || value.size() > 3) expected(path, "1 to 3 dimensions", value);
    for (std::size_t d = 0; d < value.size(); ++d)
      texts.push_back(expression(value[d], path + "[" + std::to_string(d) + "]"));
    return texts;
  }
  // A whole number that fits 64 bits: nlohmann would wrap 2^63 and above to negative ones.
  std::int64_t integer(const json& value, const std::string& path) const {
    if (!value.is_number_integer() ||
        (value.is_number_unsigned() && !std::in_range<std::int64_t>(value.get<std::uint64_t>())))
      expected(path, "an integer from -2^63 to 2^63-1", value);
    return value.get<std::int64_t>();
  }
  // A tunable's value: an integer, or true/false as 1/0 (Kernel Tuner's boolean parameters).
  std::int64_t tunable_value(const json& value, const std::string& path) const {
    if (value.is_boolean()) return value.get<bool>() ? 1 : 0;
    if (!value.is_number_integer()) expected(path, "an integer, true or false", value);
    return integer(value, path);
  }
  double number(const json& value, const std::string& path) const {
    if (!value.is_number()) expected(path, "a number", value);
    return value.get<double>();
  }
  ElementType type(const json& value, const std::string& path) const {
    const std::string name = text(value, path);
    try {
      return parse_element_type(name);
    } catch (const Error& error) {
      fail(path, error.what());
    }
  }
  fs::path file(const json& value, const std::string& path) const {
    const fs::path given = text(value, path);
    return given.is_absolute() ? given : base_ / given;
  }

  // A kernel of the problem's file launched with its own geometry and arguments by name: a
  // generator's or a check's {"kernel", "block", "grid", "shared_memory", "arguments"}.
  template <typename Launched>
  Launched launched_kernel(const json& spec, const std::string& path) const {
    object(spec, path);
    only(spec, path, {"kernel", "block", "grid", "shared_memory", "arguments"});
    if (!spec.contains("kernel")) fail(path, "needs \"kernel\": its entry");
    Launched launched;
    launched.entry = text(spec["kernel"], path + ".kernel");
    launched.geometry = geometry(spec, path + ".");
    if (spec.contains("arguments"))
      launched.arguments = names(spec["arguments"], path + ".arguments");
    return launched;
  }

  DataInit init(const json& spec, const std::string& path) const {
    if (spec.contains("init") && spec["init"].is_object())
      return DataInit::generated(launched_kernel<GeneratorKernel>(spec["init"], path + ".init"));
    const std::string kind = spec.contains("init") ? text(spec["init"], path + ".init") : "zeros";
    const auto get = [&](const char* key, double fallback) {
      return spec.contains(key) ? number(spec[key], path + "." + key) : fallback;
    };
    const std::uint64_t seed =
        spec.contains("seed") ? static_cast<std::uint64_t>(integer(spec["seed"], path + ".seed")) : 0;
    if (kind == "zeros") return DataInit::zeros();
    if (kind == "constant") return DataInit::constant(get("fill", 0.0));
    if (kind == "iota") return DataInit::iota(get("start", 0.0), get("step", 1.0));
    if (kind == "uniform") return DataInit::uniform(get("low", 0.0), get("high", 1.0), seed);
    if (kind == "normal") return DataInit::normal(get("mean", 0.0), get("deviation", 1.0), seed);
    if (kind == "file") {
      if (!spec.contains("file")) fail(path, "init \"file\" needs \"file\": \"PATH\"");
      return DataInit::from_file(file(spec["file"], path + ".file"));
    }
    if (kind == "derived") {
      if (!spec.contains("source"))
        fail(path, "init \"derived\" needs \"source\": a buffer argument");
      DataInit derived =
          DataInit::derived(text(spec["source"], path + ".source"), get("noise", 0.0), seed);
      if (spec.contains("absolute")) {
        if (!spec["absolute"].is_boolean())
          expected(path + ".absolute", "true or false", spec["absolute"]);
        derived.absolute = spec["absolute"].get<bool>();
      }
      return derived;
    }
    if (kind == "offsets") {
      if (!spec.contains("total")) fail(path, "init \"offsets\" needs \"total\": an expression");
      DataInit offsets = DataInit::offsets("0", seed);
      offsets.total = parsed_expression(spec["total"], path + ".total");
      return offsets;
    }
    fail(path + ".init",
         detail::quoted(kind) +
             " is not one of zeros, constant, iota, uniform, normal, file, derived, "
             "offsets, or a kernel {\"kernel\": ...}");
  }

  ArgumentRole role(const json& spec, const std::string& path) const {
    if (!spec.contains("role")) return ArgumentRole::input;
    const std::string name = text(spec["role"], path + ".role");
    if (name == "input") return ArgumentRole::input;
    if (name == "output") return ArgumentRole::output;
    if (name == "input_output") return ArgumentRole::input_output;
    fail(path + ".role", detail::quoted(name) + " is not one of input, output, input_output");
  }

  void argument(KernelProblem& problem, const json& spec, const std::string& path) const {
    object(spec, path);
    only(spec, path,
         {"name", "type", "count", "value", "init", "role", "fill", "start", "step", "low", "high",
          "mean", "deviation", "seed", "file", "source", "noise", "absolute", "total"});
    if (!spec.contains("name") || !spec.contains("type"))
      fail(path, "an argument needs \"name\" and \"type\"");
    const std::string name = text(spec["name"], path + ".name");
    const ElementType element = type(spec["type"], path + ".type");
    if (spec.contains("count") == spec.contains("value") || (spec.contains("value") && spec.contains("init")))
      fail(path, "expected \"count\" (a buffer, with \"init\" and \"role\") or \"value\" (a scalar)");
    if (spec.contains("count")) {
      const std::string count = expression(spec["count"], path + ".count");
      const DataInit start = init(spec, path);
      const ArgumentRole written = role(spec, path);
      build([&] { problem.buffer(name, element, count, start, written); });
    } else if (spec["value"].is_number() && !spec["value"].is_number_integer()) {
      build([&] { problem.scalar(name, element, spec["value"].get<double>()); });
    } else {
      const std::string value = expression(spec["value"], path + ".value");
      build([&] { problem.scalar(name, element, value); });
    }
  }

  void symbol(KernelProblem& problem, const json& spec, const std::string& path) const {
    object(spec, path);
    only(spec, path,
         {"name", "from", "type", "count", "init", "fill", "start", "step", "low", "high", "mean",
          "deviation", "seed", "file", "source", "noise", "absolute", "total"});
    if (!spec.contains("name")) fail(path, "a symbol needs \"name\"");
    const std::string name = text(spec["name"], path + ".name");
    if (spec.contains("from")) {
      problem.symbol(name, text(spec["from"], path + ".from"));
      return;
    }
    if (!spec.contains("type") || !spec.contains("count"))
      fail(path, "a symbol needs \"from\": an argument, or \"type\" and \"count\" of its own");
    const ElementType element = type(spec["type"], path + ".type");
    const std::string count = expression(spec["count"], path + ".count");
    const DataInit start = init(spec, path);
    build([&] { problem.symbol(name, element, count, start); });
  }

  void tunables(KernelProblem& problem, const json& spec) const {
    object(spec, "tune");
    // Named copies, not structured bindings: lambdas below capture them (clang before 16 refuses
    // to capture a binding).
    for (const auto& item : spec.items()) {
      const std::string name = item.key();
      const json& values = item.value();
      const std::string path = "tune." + name;
      std::optional<std::int64_t> fallback;
      const json* listed = &values;
      if (values.is_object()) {
        only(values, path, {"values", "default"});
        if (!values.contains("values")) fail(path, "expected {\"values\": [...], \"default\": V}");
        listed = &values["values"];
        if (values.contains("default"))
          fallback = tunable_value(values["default"], path + ".default");
      }
      std::vector<std::int64_t> numbers;
      for (std::size_t i = 0; i < list(*listed, path).size(); ++i)
        numbers.push_back(tunable_value((*listed)[i], path + "[" + std::to_string(i) + "]"));
      build([&] { problem.tune(name, numbers, fallback); });
    }
  }

  LaunchGeometry geometry(const json& spec, const std::string& path) const {
    LaunchGeometry geometry;
    build([&] {
      geometry = LaunchGeometry::of(
          spec.contains("block") ? expressions(spec["block"], path + "block") : std::vector<std::string>{},
          spec.contains("grid") ? expressions(spec["grid"], path + "grid") : std::vector<std::string>{},
          spec.contains("shared_memory") ? expression(spec["shared_memory"], path + "shared_memory")
                                         : "0");
    });
    return geometry;
  }

  void grid(KernelProblem& problem, const json& spec) const {
    const bool divided = spec.contains("problem_size");
    if (spec.contains("grid") && divided)
      fail("grid", "give either \"grid\" or \"problem_size\" with \"grid_div_x\"/y/z, not both");
    const std::vector<std::string> extents =
        divided ? expressions(spec["problem_size"], "problem_size") : std::vector<std::string>{};
    constexpr const char* axes[] = {"grid_div_x", "grid_div_y", "grid_div_z"};
    for (std::size_t d = extents.size(); d < 3; ++d)
      if (spec.contains(axes[d]))
        fail(axes[d], divided
                          ? "divides extent " + std::to_string(d) + ", but \"problem_size\" has " +
                                std::to_string(extents.size()) + " extent(s)"
                          : std::string("applies with \"problem_size\", not with \"grid\""));
    if (!divided) return;
    std::vector<std::vector<std::string>> divisors(extents.size());
    for (std::size_t d = 0; d < extents.size(); ++d) {
      // As Kernel Tuner: without a divisor list, an extent is divided by the block's dimension.
      if (!spec.contains(axes[d])) {
        divisors[d].push_back(problem.geometry().block[d].text());
        continue;
      }
      for (std::size_t i = 0; i < list(spec[axes[d]], axes[d]).size(); ++i)
        divisors[d].push_back(
            expression(spec[axes[d]][i], std::string(axes[d]) + "[" + std::to_string(i) + "]"));
    }
    build([&] { problem.grid_divide(extents, divisors); });
  }

  void verification(KernelProblem& problem, const json& spec, const Program& own) const {
    object(spec, "verify");
    only(spec, "verify",
         {"reference", "config", "files", "atol", "rtol", "rtol_of", "aggregates", "check"});
    const int ways = spec.contains("reference") + spec.contains("config") + spec.contains("files");
    if (ways > 1) fail("verify", "give one of \"reference\", \"config\" or \"files\"");
    if (spec.contains("reference")) {
      const json& reference = object(spec["reference"], "verify.reference");
      only(reference, "verify.reference",
           {"kernel", "file", "block", "grid", "shared_memory", "defines", "arguments"});
      if (!reference.contains("kernel")) fail("verify.reference", "needs \"kernel\": its entry");
      ReferenceKernel kernel;
      kernel.entry = text(reference["kernel"], "verify.reference.kernel");
      if (reference.contains("file")) {
        const fs::path path = file(reference["file"], "verify.reference.file");
        build([&] { kernel.program = path == own.directory() / own.name() ? own : Program::from_file(path); });
      }
      kernel.geometry = geometry(reference, "verify.reference.");
      if (reference.contains("defines"))
        for (const auto& [name, value] :
             object(reference["defines"], "verify.reference.defines").items())
          kernel.defines.emplace_back(name,
                                      parsed_expression(value, "verify.reference.defines." + name));
      if (reference.contains("arguments"))
        kernel.arguments = names(reference["arguments"], "verify.reference.arguments");
      problem.verify_with_kernel(std::move(kernel));
    } else if (spec.contains("config")) {
      std::vector<Define> defines;
      for (const auto& [name, value] : object(spec["config"], "verify.config").items())
        defines.push_back({name, std::to_string(integer(value, "verify.config." + name))});
      problem.verify_with_config(TuningConfig(std::move(defines)));
    } else if (spec.contains("files")) {
      std::vector<std::pair<std::string, fs::path>> files;
      for (const auto& [output, path] : object(spec["files"], "verify.files").items())
        files.emplace_back(output, file(path, "verify.files." + output));
      problem.verify_with_files(std::move(files));
    }
    if (spec.contains("aggregates"))
      for (std::size_t i = 0; i < list(spec["aggregates"], "verify.aggregates").size(); ++i)
        problem.aggregate(
            aggregate(spec["aggregates"][i], "verify.aggregates[" + std::to_string(i) + "]"));
    if (spec.contains("check"))
      problem.check_with_kernel(launched_kernel<CheckKernel>(spec["check"], "verify.check"));
    const ProblemVerification& defaults = problem.verification();
    ProblemVerification::RelativeTo relative_to = defaults.relative_to;
    if (spec.contains("rtol_of")) {
      const std::string of = text(spec["rtol_of"], "verify.rtol_of");
      if (of != "element" && of != "largest")
        fail("verify.rtol_of", "expected \"element\" or \"largest\", got " + detail::quoted(of));
      relative_to = of == "largest" ? ProblemVerification::RelativeTo::largest
                                    : ProblemVerification::RelativeTo::element;
    }
    build([&] {
      problem.tolerance(spec.contains("atol") ? number(spec["atol"], "verify.atol") : defaults.atol,
                        spec.contains("rtol") ? number(spec["rtol"], "verify.rtol") : defaults.rtol,
                        relative_to);
    });
  }

  OutputAggregate aggregate(const json& spec, const std::string& path) const {
    object(spec, path);
    only(spec, path, {"output", "aggregate", "length", "expected", "atol", "rtol"});
    if (!spec.contains("output") || !spec.contains("aggregate"))
      fail(path, "needs \"output\" and \"aggregate\" (sum, min, max or count)");
    OutputAggregate check{.output = text(spec["output"], path + ".output")};
    const std::string name = text(spec["aggregate"], path + ".aggregate");
    constexpr Aggregate aggregates[] = {Aggregate::sum, Aggregate::min, Aggregate::max,
                                        Aggregate::count};
    const auto known = std::find_if(std::begin(aggregates), std::end(aggregates),
                                    [&](Aggregate a) { return to_string(a) == name; });
    if (known == std::end(aggregates))
      fail(path + ".aggregate", detail::quoted(name) + " is not one of sum, min, max, count");
    check.aggregate = *known;
    if (spec.contains("length")) check.length = parsed_expression(spec["length"], path + ".length");
    if (spec.contains("expected") && spec["expected"].is_number_float())
      check.expected_number = spec["expected"].get<double>();
    else if (spec.contains("expected"))
      check.expected = parsed_expression(spec["expected"], path + ".expected");
    if (spec.contains("atol")) check.atol = number(spec["atol"], path + ".atol");
    if (spec.contains("rtol")) check.rtol = number(spec["rtol"], path + ".rtol");
    return check;
  }

  void rate(KernelProblem& problem, const json& document) const {
    const int ways = document.contains("flops") + document.contains("bytes") + document.contains("rate");
    if (ways > 1) fail("rate", "give one of \"flops\", \"bytes\" or \"rate\"");
    if (document.contains("flops")) {
      const std::string work = expression(document["flops"], "flops");
      build([&] { problem.flops(work); });
    }
    if (document.contains("bytes")) {
      const std::string work = expression(document["bytes"], "bytes");
      build([&] { problem.bytes(work); });
    }
    if (document.contains("rate")) {
      const json& spec = object(document["rate"], "rate");
      only(spec, "rate", {"work", "unit", "scale"});
      if (!spec.contains("work") || !spec.contains("unit"))
        fail("rate", "expected {\"work\": EXPRESSION, \"unit\": \"Gpixel/s\", \"scale\": 1e9}");
      build([&] {
        problem.rate(expression(spec["work"], "rate.work"), text(spec["unit"], "rate.unit"),
                     spec.contains("scale") ? number(spec["scale"], "rate.scale") : 1e9);
      });
    }
  }

  void metrics(KernelProblem& problem, const json& document) const {
    constexpr ProblemMetric::Per pers[] = {ProblemMetric::Per::time_s, ProblemMetric::Per::time_ms,
                                           ProblemMetric::Per::energy_j,
                                           ProblemMetric::Per::power_w};
    for (const auto& [name, spec] : object(document, "metrics").items()) {
      const std::string path = "metrics." + name;
      object(spec, path);
      only(spec, path, {"work", "per", "scale", "maximize"});
      if (!spec.contains("work"))
        fail(path, "expected {\"work\": EXPRESSION, \"per\": \"time_s\", \"scale\": 1e9}");
      ProblemMetric metric{.name = name, .work = parsed_expression(spec["work"], path + ".work")};
      if (spec.contains("per")) {
        const std::string per = text(spec["per"], path + ".per");
        const auto* known =
            std::find_if(std::begin(pers), std::end(pers),
                         [&](ProblemMetric::Per each) { return to_string(each) == per; });
        if (known == std::end(pers))
          fail(path + ".per",
               detail::quoted(per) + " is not one of time_s, time_ms, energy_j, power_w");
        metric.per = *known;
      }
      if (spec.contains("scale")) metric.scale = number(spec["scale"], path + ".scale");
      if (spec.contains("maximize")) {
        if (!spec["maximize"].is_boolean())
          expected(path + ".maximize", "true or false", spec["maximize"]);
        metric.maximize = spec["maximize"].get<bool>();
      }
      build([&] { problem.metric(metric); });
    }
  }

  // The program: the one given (with the document's "headers" added: a kernel file named on
  // the command line may include headers the problem file supplies), else the document's
  // "source" (a path), "source_text" or "builtin" (what to_json writes).
  Program program(const json& document, std::optional<Program> given) const {
    if (given) {
      add_headers(*given, document);
      return std::move(*given);
    }
    if (document.contains("builtin")) {
      const std::string name = text(document["builtin"], "builtin");
      std::optional<Program> named = programs_by_name_ ? programs_by_name_(name) : std::nullopt;
      if (!named) fail("builtin", "no program named " + detail::quoted(name) + " is known here");
      return *std::move(named);
    }
    if (document.contains("source")) return Program::from_file(file(document["source"], "source"));
    if (document.contains("source_text")) {
      Program program = Program::from_string(
          text(document["source_text"], "source_text"),
          document.contains("source_name") ? text(document["source_name"], "source_name") : "kernel.cu",
          document.contains("source_directory") ? text(document["source_directory"], "source_directory")
                                                : std::string());
      add_headers(program, document);
      return program;
    }
    fail("source", "no kernel file: give one beside the problem, or \"source\": \"PATH\"");
  }

  void add_headers(Program& program, const json& document) const {
    if (!document.contains("headers")) return;
    for (const auto& [name, content] : object(document["headers"], "headers").items())
      program.add_header(name, text(content, "headers." + name));
  }

  KernelProblem read(const json& document, std::optional<Program> given, bool manifest_space) const {
    object(document, "(the document)");
    only(document, "", {"name", "kernel", "sizes", "tune", "constraints", "defines",
                        "compile_options", "block", "grid", "problem_size", "grid_div_x",
                        "grid_div_y", "grid_div_z", "shared_memory", "arguments", "symbols",
                        "verify", "flops", "bytes", "rate", "metrics", "source", "source_text",
                        "source_name", "source_directory", "headers", "builtin"});
    if (!document.contains("kernel")) fail("kernel", "missing: name the entry point to tune");
    KernelProblem problem(program(document, std::move(given)), text(document["kernel"], "kernel"));
    if (document.contains("name")) problem.name(text(document["name"], "name"));
    if (document.contains("sizes")) {
      const json& sizes = document["sizes"];
      if (sizes.is_object()) {
        for (const auto& [name, value] : sizes.items())
          problem.size(name, value.is_null() ? std::nullopt
                                             : std::optional<std::int64_t>(integer(value, "sizes." + name)));
      } else {
        for (std::size_t i = 0; i < list(sizes, "sizes").size(); ++i)
          problem.size(text(sizes[i], "sizes[" + std::to_string(i) + "]"));
      }
    }
    if (document.contains("defines"))
      for (const auto& item : object(document["defines"], "defines").items()) {
        const std::string name = item.key();
        const json& value = item.value();
        build([&] { problem.define(name, expression(value, "defines." + name)); });
      }
    if (document.contains("tune")) tunables(problem, document["tune"]);
    if (manifest_space && !document.contains("tune")) build([&] { problem.tune_from_manifest(); });
    if (document.contains("constraints"))
      for (std::size_t i = 0; i < list(document["constraints"], "constraints").size(); ++i)
        build([&] {
          problem.constraint(expression(document["constraints"][i], "constraints[" + std::to_string(i) + "]"));
        });
    if (document.contains("compile_options"))
      for (std::size_t i = 0; i < list(document["compile_options"], "compile_options").size(); ++i)
        problem.compile_option(text(document["compile_options"][i], "compile_options[" + std::to_string(i) + "]"));
    if (!document.contains("block")) fail("block", "missing: the block dimensions, as expressions");
    if (!document.contains("grid") && !document.contains("problem_size"))
      fail("grid", "missing: \"grid\" expressions, or \"problem_size\" with \"grid_div_x\"/y/z");
    const LaunchGeometry launch = geometry(document, "");
    build([&] {
      problem.block(launch.block[0].text(), launch.block[1].text(), launch.block[2].text());
      problem.grid(launch.grid[0].text(), launch.grid[1].text(), launch.grid[2].text());
      problem.shared_memory(launch.shared_bytes.text());
    });
    grid(problem, document);
    if (!document.contains("arguments")) fail("arguments", "missing: the kernel's arguments in order");
    for (std::size_t i = 0; i < list(document["arguments"], "arguments").size(); ++i)
      argument(problem, document["arguments"][i], "arguments[" + std::to_string(i) + "]");
    if (document.contains("symbols"))
      for (std::size_t i = 0; i < list(document["symbols"], "symbols").size(); ++i)
        symbol(problem, document["symbols"][i], "symbols[" + std::to_string(i) + "]");
    if (document.contains("verify")) verification(problem, document["verify"], problem.program());
    rate(problem, document);
    if (document.contains("metrics")) metrics(problem, document["metrics"]);
    return problem;
  }

 private:
  std::string origin_;
  fs::path base_;
  ProgramsByName programs_by_name_;
};

json parse_document(std::string_view text, const std::string& origin,
                    const std::vector<ManifestProblemLine>* lines = nullptr) {
  detail::JsonFault fault;
  if (std::optional<json> document = detail::try_parse_json<json>(text, fault))
    return *std::move(document);
  std::string where =
      origin + ":" + std::to_string(fault.line) + ":" + std::to_string(fault.column);
  if (lines != nullptr && fault.line <= lines->size())
    where = origin + ":" + std::to_string((*lines)[fault.line - 1].line) +
            ": problem line, column " + std::to_string(fault.column);
  throw Error(ErrorKind::invalid_argument, where + ": " + fault.problem);
}

}  // namespace

KernelProblem KernelProblem::from_json(std::string_view text, std::optional<Program> program,
                                       std::string_view origin, const fs::path& base_directory,
                                       const ProgramsByName& programs_by_name) {
  const Reader reader(std::string(origin), base_directory, programs_by_name);
  KernelProblem problem = reader.read(parse_document(text, std::string(origin)), std::move(program), false);
  problem.origin_ = std::string(origin);
  problem.validate();
  return problem;
}

KernelProblem KernelProblem::from_file(const fs::path& problem_file, const fs::path& kernel_file) {
  const std::string text =
      detail::read_regular_file(problem_file, "problem file", problem_file_limits);
  const std::string origin = detail::printable(problem_file.filename().string());
  const Reader reader(origin, problem_file.parent_path());
  std::optional<Program> program;
  if (!kernel_file.empty()) program = Program::from_file(kernel_file);
  KernelProblem problem = reader.read(parse_document(text, origin), std::move(program), false);
  problem.origin_ = origin;
  problem.validate();
  return problem;
}

KernelProblem KernelProblem::from_manifest(Program program) {
  const Manifest& manifest = program.manifest();
  if (manifest.problem.empty())
    throw Error(ErrorKind::not_found, program.name() +
                                          " has no \"// ptxrt: problem\" lines: give a problem "
                                          "file (--problem P.json)");
  std::string text;
  for (const ManifestProblemLine& line : manifest.problem) text += line.text + "\n";
  const std::string origin = program.name();
  const Reader reader(origin, program.directory());
  const json document = parse_document(text, origin, &manifest.problem);
  KernelProblem problem = reader.read(document, std::move(program), true);
  problem.origin_ = origin;
  problem.validate();
  return problem;
}

}  // namespace ptxrt
