// The problem file's form of a KernelProblem (docs/tuning.md, "A problem file"): reading it,
// from a file or a kernel file's manifest lines, and writing it.
#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ptxrt/builtin_kernels.hpp"
#include "ptxrt/kernel_problem.hpp"

namespace ptxrt {

namespace fs = std::filesystem;
// Ordered: the order of sizes, tunables and defines is the key's, the enumeration's and the
// defines' (a define may read those before it).
using json = nlohmann::ordered_json;

namespace {

// Where a byte offset of `text` is, 1-based: what nlohmann's parse_error.byte points at.
std::pair<std::size_t, std::size_t> line_and_column(std::string_view text, std::size_t byte) {
  const std::size_t offset = std::min(byte == 0 ? 0 : byte - 1, text.size());
  const std::string_view before = text.substr(0, offset);
  const std::size_t line = static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n')) + 1;
  const std::size_t newline = before.rfind('\n');
  return {line, offset - (newline == std::string_view::npos ? 0 : newline + 1) + 1};
}

// nlohmann's message without its own "[json.exception...] parse error at line L, column C: ".
std::string parse_problem(const json::parse_error& error) {
  const std::string text = error.what();
  const std::size_t column = text.find("column ");
  const std::size_t colon = column == std::string::npos ? column : text.find(": ", column);
  return colon == std::string::npos ? text : text.substr(colon + 2);
}

class Reader {
 public:
  Reader(std::string origin, fs::path base) : origin_(std::move(origin)), base_(std::move(base)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw Error(ErrorKind::invalid_argument, origin_ + ": " + path + ": " + what);
  }

  // Runs a builder step; its own message (which names the field) gets the origin in front.
  template <typename Step>
  void build(Step step) const {
    try {
      step();
    } catch (const Error& error) {
      throw Error(error.kind(), origin_ + ": " + error.what());
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

  const json& object(const json& value, const std::string& path) const {
    if (!value.is_object()) fail(path, "expected an object {...}, got " + value.dump());
    return value;
  }
  const json& list(const json& value, const std::string& path) const {
    if (!value.is_array()) fail(path, "expected a list [...], got " + value.dump());
    return value;
  }
  std::string text(const json& value, const std::string& path) const {
    if (!value.is_string()) fail(path, "expected a string, got " + value.dump());
    return value.get<std::string>();
  }
  // An expression: a string, or an integer written as a number.
  std::string expression(const json& value, const std::string& path) const {
    if (value.is_number_integer()) return value.dump();
    if (!value.is_string()) fail(path, "expected an expression (a string or an integer), got " + value.dump());
    return value.get<std::string>();
  }
  std::vector<std::string> expressions(const json& value, const std::string& path) const {
    std::vector<std::string> texts;
    if (!value.is_array()) {
      texts.push_back(expression(value, path));
      return texts;
    }
    if (value.empty() || value.size() > 3) fail(path, "expected 1 to 3 dimensions, got " + value.dump());
    for (std::size_t d = 0; d < value.size(); ++d)
      texts.push_back(expression(value[d], path + "[" + std::to_string(d) + "]"));
    return texts;
  }
  std::int64_t integer(const json& value, const std::string& path) const {
    if (!value.is_number_integer()) fail(path, "expected an integer, got " + value.dump());
    return value.get<std::int64_t>();
  }
  double number(const json& value, const std::string& path) const {
    if (!value.is_number()) fail(path, "expected a number, got " + value.dump());
    return value.get<double>();
  }
  bool boolean(const json& value, const std::string& path) const {
    if (!value.is_boolean()) fail(path, "expected true or false, got " + value.dump());
    return value.get<bool>();
  }
  ElementType type(const json& value, const std::string& path) const {
    try {
      return parse_element_type(text(value, path));
    } catch (const Error& error) {
      fail(path, error.what());
    }
  }
  fs::path file(const json& value, const std::string& path) const {
    const fs::path given = text(value, path);
    return given.is_absolute() ? given : base_ / given;
  }

  DataInit init(const json& spec, const std::string& path) const {
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
    fail(path + ".init", "'" + kind + "' is not one of zeros, constant, iota, uniform, normal, file");
  }

  ArgumentRole role(const json& spec, const std::string& path) const {
    if (!spec.contains("role")) return ArgumentRole::input;
    const std::string name = text(spec["role"], path + ".role");
    if (name == "input") return ArgumentRole::input;
    if (name == "output") return ArgumentRole::output;
    if (name == "input_output") return ArgumentRole::input_output;
    fail(path + ".role", "'" + name + "' is not one of input, output, input_output");
  }

  void argument(KernelProblem& problem, const json& spec, const std::string& path) const {
    object(spec, path);
    only(spec, path, {"name", "type", "count", "value", "init", "role", "fill", "start", "step",
                      "low", "high", "mean", "deviation", "seed", "file"});
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
      build([&] { problem.scalar(name, element, expression(spec["value"], path + ".value")); });
    }
  }

  void symbol(KernelProblem& problem, const json& spec, const std::string& path) const {
    object(spec, path);
    only(spec, path, {"name", "from", "type", "count", "init", "fill", "start", "step", "low",
                      "high", "mean", "deviation", "seed", "file"});
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
        if (values.contains("default")) fallback = integer(values["default"], path + ".default");
      }
      std::vector<std::int64_t> numbers;
      for (std::size_t i = 0; i < list(*listed, path).size(); ++i)
        numbers.push_back(integer((*listed)[i], path + "[" + std::to_string(i) + "]"));
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
    if (!divided) return;
    const std::vector<std::string> extents = expressions(spec["problem_size"], "problem_size");
    std::vector<std::vector<std::string>> divisors;
    for (const char* axis : {"grid_div_x", "grid_div_y", "grid_div_z"}) {
      if (divisors.size() == extents.size()) break;
      divisors.emplace_back();
      // As Kernel Tuner: without a divisor list, an extent is divided by the block's dimension.
      if (!spec.contains(axis)) {
        divisors.back().push_back(problem.geometry().block[divisors.size() - 1].text());
        continue;
      }
      for (std::size_t i = 0; i < list(spec[axis], axis).size(); ++i)
        divisors.back().push_back(expression(spec[axis][i], std::string(axis) + "[" + std::to_string(i) + "]"));
    }
    build([&] { problem.grid_divide(extents, divisors); });
  }

  void verification(KernelProblem& problem, const json& spec, const Program& own) const {
    object(spec, "verify");
    only(spec, "verify", {"reference", "config", "files", "atol", "rtol"});
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
        for (const auto& [name, value] : object(reference["defines"], "verify.reference.defines").items()) {
          const std::string path = "verify.reference.defines." + name;
          const std::string text = expression(value, path);
          try {
            kernel.defines.emplace_back(name, Expression::parse(text));
          } catch (const Error& error) {
            fail(path, error.what());
          }
        }
      if (reference.contains("arguments"))
        for (std::size_t i = 0; i < list(reference["arguments"], "verify.reference.arguments").size(); ++i)
          kernel.arguments.push_back(
              text(reference["arguments"][i], "verify.reference.arguments[" + std::to_string(i) + "]"));
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
    const ProblemVerification& defaults = problem.verification();
    build([&] {
      problem.tolerance(spec.contains("atol") ? number(spec["atol"], "verify.atol") : defaults.atol,
                        spec.contains("rtol") ? number(spec["rtol"], "verify.rtol") : defaults.rtol);
    });
  }

  void rate(KernelProblem& problem, const json& document) const {
    const int ways = document.contains("flops") + document.contains("bytes") + document.contains("rate");
    if (ways > 1) fail("rate", "give one of \"flops\", \"bytes\" or \"rate\"");
    if (document.contains("flops")) build([&] { problem.flops(expression(document["flops"], "flops")); });
    if (document.contains("bytes")) build([&] { problem.bytes(expression(document["bytes"], "bytes")); });
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

  // The program: the one given, else the document's "source" (a path), "source_text" or
  // "builtin" (what to_json writes).
  Program program(const json& document, std::optional<Program> given) const {
    if (given) return std::move(*given);
    if (document.contains("builtin")) return Program::builtin(text(document["builtin"], "builtin"));
    if (document.contains("source")) return Program::from_file(file(document["source"], "source"));
    if (document.contains("source_text")) {
      Program program = Program::from_string(
          text(document["source_text"], "source_text"),
          document.contains("source_name") ? text(document["source_name"], "source_name") : "kernel.cu",
          document.contains("source_directory") ? text(document["source_directory"], "source_directory")
                                                : std::string());
      if (document.contains("headers"))
        for (const auto& [name, content] : object(document["headers"], "headers").items())
          program.add_header(name, text(content, "headers." + name));
      return program;
    }
    fail("source", "no kernel file: give one beside the problem, or \"source\": \"PATH\"");
  }

  KernelProblem read(const json& document, std::optional<Program> given, bool manifest_space) const {
    object(document, "(the document)");
    only(document, "", {"name", "kernel", "sizes", "tune", "constraints", "defines",
                        "compile_options", "block", "grid", "problem_size", "grid_div_x",
                        "grid_div_y", "grid_div_z", "shared_memory", "arguments", "symbols",
                        "verify", "flops", "bytes", "rate", "source", "source_text", "source_name",
                        "source_directory", "headers", "builtin"});
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
    if (manifest_space && !document.contains("tune")) from_manifest_lines(problem);
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
    return problem;
  }

  // The manifest's tune lines as tunables, its constraints, and its other defaults as defines.
  void from_manifest_lines(KernelProblem& problem) const {
    const Manifest& manifest = problem.program().manifest();
    for (const ManifestDefine& declared : manifest.defines) {
      const auto integer_of = [](const std::string& text) { return std::stoll(text); };
      if (declared.tunable) {
        std::vector<std::int64_t> values;
        for (const std::string& value : declared.values) values.push_back(integer_of(value));
        std::optional<std::int64_t> fallback;
        if (declared.default_value) fallback = integer_of(*declared.default_value);
        build([&] { problem.tune(declared.name, values, fallback); });
      }
    }
    for (const ManifestConstraint& constraint : manifest.constraints)
      problem.constraint(constraint.expression.text());
  }

 private:
  std::string origin_;
  fs::path base_;
};

json parse_document(std::string_view text, const std::string& origin,
                    const std::vector<ManifestProblemLine>* lines = nullptr) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& error) {
    auto [line, column] = line_and_column(text, error.byte);
    std::string where = origin + ":" + std::to_string(line) + ":" + std::to_string(column);
    if (lines != nullptr && line <= lines->size())
      where = origin + ":" + std::to_string((*lines)[line - 1].line) + ": problem line, column " +
              std::to_string(column);
    throw Error(ErrorKind::invalid_argument, where + ": not valid JSON: " + parse_problem(error));
  }
}

json expression_json(const Expression& expression) { return expression.text(); }

json geometry_json(const LaunchGeometry& geometry) {
  json block = json::array(), grid = json::array();
  for (const Expression& e : geometry.block) block.push_back(expression_json(e));
  for (const Expression& e : geometry.grid) grid.push_back(expression_json(e));
  return {{"block", block}, {"grid", grid}, {"shared_memory", expression_json(geometry.shared_bytes)}};
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
      spec.update({{"init", "uniform"}, {"low", init.low}, {"high", init.high}, {"seed", init.seed}});
      return;
    case DataInit::Kind::normal:
      spec.update({{"init", "normal"}, {"mean", init.mean}, {"deviation", init.deviation},
                   {"seed", init.seed}});
      return;
    case DataInit::Kind::file:
      spec.update({{"init", "file"}, {"file", fs::absolute(init.file).string()}});
      return;
  }
}

constexpr const char* role_names[] = {"input", "output", "input_output"};

// How to find the program again: its file when it is one unchanged, a builtin by name, or its
// text with its headers.
void program_json(json& document, const Program& program) {
  std::string stem = program.name();
  if (stem.ends_with(".cu")) stem.resize(stem.size() - 3);
  const std::vector<std::string> builtins = builtin_kernel_names();
  if (std::find(builtins.begin(), builtins.end(), stem) != builtins.end() &&
      Program::builtin(stem).identity() == program.identity()) {
    document["builtin"] = stem;
    return;
  }
  const fs::path file = program.directory() / program.name();
  std::ifstream in(file, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  if (in && program.headers().empty() && content.str() == program.source()) {
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

KernelProblem KernelProblem::from_json(std::string_view text, std::optional<Program> program,
                                       std::string_view origin, const fs::path& base_directory) {
  const Reader reader(std::string(origin), base_directory);
  KernelProblem problem = reader.read(parse_document(text, std::string(origin)), std::move(program), false);
  problem.origin_ = std::string(origin);
  problem.validate();
  return problem;
}

KernelProblem KernelProblem::from_file(const fs::path& problem_file, const fs::path& kernel_file) {
  std::ifstream in(problem_file, std::ios::binary);
  if (!in) throw Error(ErrorKind::io, "cannot read the problem file " + problem_file.string());
  std::stringstream text;
  text << in.rdbuf();
  const std::string origin = problem_file.filename().string();
  const Reader reader(origin, problem_file.parent_path());
  std::optional<Program> program;
  if (!kernel_file.empty()) program = Program::from_file(kernel_file);
  KernelProblem problem =
      reader.read(parse_document(text.str(), origin), std::move(program), false);
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

std::string KernelProblem::to_json() const {
  if (!is_declarative())
    throw Error(ErrorKind::invalid_argument,
                name_ + ": a problem with a reference callback has no JSON form");
  json document{{"name", name_}, {"kernel", entry_}};
  program_json(document, program_);
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
  if (verification_.kind == ProblemVerification::Kind::reference_kernel) {
    const ReferenceKernel& kernel = verification_.kernel;
    json reference = geometry_json(kernel.geometry);
    reference["kernel"] = kernel.entry;
    if (kernel.program) reference["file"] = fs::absolute(kernel.program->directory() / kernel.program->name()).string();
    json reference_defines = json::object();
    for (const auto& [name, value] : kernel.defines) reference_defines[name] = value.text();
    reference["defines"] = reference_defines;
    reference["arguments"] = kernel.arguments;
    verify["reference"] = reference;
  } else if (verification_.kind == ProblemVerification::Kind::reference_config) {
    json config = json::object();
    for (const Define& define : verification_.config.defines()) config[define.name] = std::stoll(define.value);
    verify["config"] = config;
  } else if (verification_.kind == ProblemVerification::Kind::files) {
    json files = json::object();
    for (const auto& [output, path] : verification_.files) files[output] = fs::absolute(path).string();
    verify["files"] = files;
  }
  if (verification_.kind != ProblemVerification::Kind::none) document["verify"] = verify;
  if (!rate_.unit.empty())
    document["rate"] = {{"work", rate_.work.text()}, {"unit", rate_.unit}, {"scale", rate_.unit_scale}};
  return document.dump(1, ' ', false, json::error_handler_t::replace);
}

}  // namespace ptxrt
