#include "ptxrt/core/program.hpp"

#include <cuda.h>
#include <nvrtc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

#include "driver/toolkit_check.hpp"
#include "jit/compile_diagnostics.hpp"
#include "jit/compile_notes.hpp"
#include "jit/elapsed.hpp"
#include "jit/hash.hpp"
#include "jit/include_scanner.hpp"
#include "jit/isolated_link.hpp"
#include "jit/link.hpp"
#include "jit/nvrtc_check.hpp"
#include "jit/option_words.hpp"
#include "jit/precompiled_headers.hpp"
#include "jit/std_headers.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/log.hpp"

namespace ptxrt {
namespace {

// How long an isolated link may take without CompileOptions::timeout: linking intact inputs takes
// seconds; a minute is a hang.
constexpr std::chrono::milliseconds isolated_link_limit{60'000};

// Owns an nvrtcProgram.
class NvrtcProgram {
 public:
  NvrtcProgram(const SourceFile& source, const std::vector<const char*>& header_texts,
               const std::vector<const char*>& header_names) {
    check(nvrtcCreateProgram(&handle_, source.text.c_str(), source.name.c_str(),
                             static_cast<int>(header_texts.size()), header_texts.data(),
                             header_names.data()),
          "nvrtcCreateProgram", "creating the NVRTC program for " + source.name);
  }
  NvrtcProgram(const NvrtcProgram&) = delete;
  NvrtcProgram& operator=(const NvrtcProgram&) = delete;
  ~NvrtcProgram() { nvrtcDestroyProgram(&handle_); }

  nvrtcProgram get() const { return handle_; }

  std::string log() const {
    std::size_t size = 0;
    check(nvrtcGetProgramLogSize(handle_, &size), "nvrtcGetProgramLogSize");
    std::string log(size, '\0');
    check(nvrtcGetProgramLog(handle_, log.data()), "nvrtcGetProgramLog");
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    return log;
  }

 private:
  nvrtcProgram handle_ = nullptr;
};

// The program's own headers first: they win over the standard-header shims of the same name.
std::optional<std::string_view> named_header(const Program& program, std::string_view name) {
  if (auto found = program.headers().find(name); found != program.headers().end())
    return found->second;
  for (const detail::NamedText& header : detail::standard_headers())
    if (header.name == name) return header.text;
  return std::nullopt;
}

// Where NVRTC looks for an include, before the toolkit: the kernel's folder, the include paths,
// then the -I folders among the extra options. The include scan reads the same list, so the cache
// key holds the header that NVRTC finds.
std::vector<std::filesystem::path> search_paths(const SourceFile& source,
                                                const CompileOptions& options) {
  std::vector<std::filesystem::path> paths;
  if (!source.directory.empty()) paths.push_back(source.directory);
  paths.insert(paths.end(), options.include_paths.begin(), options.include_paths.end());
  const std::vector<std::filesystem::path> extra =
      detail::split_extra_options(options.extra_options).include_paths;
  paths.insert(paths.end(), extra.begin(), extra.end());
  return paths;
}

void check_architecture(const Program& program, const std::string& arch, ImageFormat format) {
  if (format == ImageFormat::cubin && !arch.starts_with("sm_"))
    throw Error(ErrorKind::invalid_argument,
                "a CUBIN needs a real architecture (sm_XY), not " + arch + ", for " +
                    program.name() + ": ask for PTX, or for sm_" + arch.substr(arch.find('_') + 1));
  if (format == ImageFormat::fatbin)
    throw Error(ErrorKind::invalid_argument,
                "the fatbin target of " + program.name() + " lists " + arch +
                    ": each entry must be sm_XY (a CUBIN) or compute_XY (PTX)");
}

void check_target(const Program& program, const CompileOptions& options) {
  const Target& target = options.target;
  if (target.arch.empty())
    throw Error(ErrorKind::invalid_argument,
                "no target architecture given for " + program.name() +
                    ": set CompileOptions::target (select_target() picks one for a device)");
  if (target.format != ImageFormat::fatbin)
    return check_architecture(program, target.arch, target.format);
  for (const std::string& arch : target_architectures(target.arch))
    if (!arch.starts_with("sm_") && !arch.starts_with("compute_"))
      check_architecture(program, arch, ImageFormat::fatbin);
}

bool wants_resource_usage(const CompileOptions& options) {
  return options.resource_usage.value_or(options.target.format == ImageFormat::cubin);
}

// How one translation unit is compiled: to the target's format, or as relocatable device code
// (a CUBIN, or LTO-IR with lto) for the linker.
struct UnitTarget {
  std::string arch;
  ImageFormat format;
  bool relocatable;
};

// Every NVRTC option, in order: arch, defines, the search paths, the toolkit's include folders,
// the caller's other extras.
std::vector<std::string> nvrtc_options(const SourceFile& source, const CompileOptions& options,
                                       const std::vector<Define>& defines, const UnitTarget& unit) {
  std::vector<std::string> arguments{"-arch=" + unit.arch};
  if (unit.relocatable) arguments.push_back("-rdc=true");
  if (unit.format == ImageFormat::ltoir) arguments.push_back("-dlto");
  for (const Define& define : defines)
    arguments.push_back("-D" + define.name + (define.value.empty() ? "" : "=" + define.value));
  for (const std::filesystem::path& folder : search_paths(source, options))
    arguments.push_back("-I" + folder.string());
  for (const std::filesystem::path& folder : toolkit_include_paths())
    arguments.push_back("-I" + folder.string());
  for (std::string& option : detail::split_extra_options(options.extra_options).others)
    arguments.push_back(std::move(option));
  // Two words: one NVRTC 13.0 build seen on an H100 machine ignores the "-Xptxas=-v" spelling.
  if (unit.format == ImageFormat::cubin && wants_resource_usage(options)) {
    arguments.push_back("-Xptxas");
    arguments.push_back("-v");
  }
  return arguments;
}

std::string join(const std::vector<std::string>& words) {
  std::string joined;
  for (const std::string& word : words) joined += (joined.empty() ? "" : " ") + word;
  return joined;
}

[[noreturn]] void throw_compile_error(const Program& program, const SourceFile& source,
                                      nvrtcResult result, const std::string& log,
                                      const std::vector<Define>& defines,
                                      const std::vector<std::string>& arguments,
                                      const UnitTarget& unit) {
  auto lookup = [&](std::string_view file) -> std::optional<std::string> {
    if (file == source.name) return source.text;
    if (std::optional<std::string_view> header = named_header(program, file))
      return std::string(*header);
    return detail::read_source_if_readable(std::filesystem::path(file));
  };
  std::string message = "compiling " + source.name + " to " + std::string(to_string(unit.format)) +
                        " for " + unit.arch + " failed\n  defines: " + format_defines(defines) +
                        "\n  options: " + join(arguments) + "\n\n" +
                        detail::annotate_compile_log(log, lookup) +
                        detail::missing_standard_header_notes(log, source.text) +
                        detail::builtin_header_clash_notes(log, defines);
  const bool compile_error = result == NVRTC_ERROR_COMPILATION;
  throw Error(compile_error ? ErrorKind::compile : ErrorKind::invalid_argument, std::move(message),
              "nvrtcCompileProgram", static_cast<int>(result), nvrtcGetErrorString(result),
              "compiling " + source.name);
}

std::string output_of(const NvrtcProgram& nvrtc, ImageFormat format) {
  std::size_t size = 0;
  std::string data;
  switch (format) {
    case ImageFormat::ptx:
      check(nvrtcGetPTXSize(nvrtc.get(), &size), "nvrtcGetPTXSize");
      data.resize(size);
      check(nvrtcGetPTX(nvrtc.get(), data.data()), "nvrtcGetPTX");
      while (!data.empty() && data.back() == '\0') data.pop_back();
      break;
    case ImageFormat::ltoir:
      check(nvrtcGetLTOIRSize(nvrtc.get(), &size), "nvrtcGetLTOIRSize");
      data.resize(size);
      check(nvrtcGetLTOIR(nvrtc.get(), data.data()), "nvrtcGetLTOIR");
      break;
    default:
      check(nvrtcGetCUBINSize(nvrtc.get(), &size), "nvrtcGetCUBINSize");
      data.resize(size);
      check(nvrtcGetCUBIN(nvrtc.get(), data.data()), "nvrtcGetCUBIN");
  }
  return data;
}

std::vector<Define> validated_defines(const Program& program, const CompileOptions& options) {
  std::vector<Define> defines = options.defines;
  validate_defines(program.manifest(), defines);
  return defines;
}

// What nvrtcSetFlowCallback's callback reads. NVRTC may call it from its own threads; it only
// reads the deadline and asks the stop token, which is safe from any thread.
struct CompileLimits {
  std::optional<std::chrono::steady_clock::time_point> deadline;
  std::stop_token stop;

  bool deadline_passed() const { return deadline && std::chrono::steady_clock::now() >= *deadline; }
};

// nvrtcSetFlowCallback's callback: cancel (1) once the deadline has passed or a stop is requested.
int cancel_past_limits(void* limits, void*) {
  const auto* given = static_cast<const CompileLimits*>(limits);
  return given->deadline_passed() || given->stop.stop_requested() ? 1 : 0;
}

// Compiles with `options.timeout` and `options.stop` enforced where NVRTC can cancel (12.8 and
// newer).
nvrtcResult compile_program(nvrtcProgram nvrtc, const std::string& name,
                            const CompileOptions& options,
                            const std::vector<const char*>& arguments) {
#if CUDA_VERSION >= 12080
  CompileLimits limits{.deadline = std::nullopt, .stop = options.stop};
  if (options.timeout) limits.deadline = std::chrono::steady_clock::now() + *options.timeout;
  if (limits.deadline || limits.stop.stop_possible())
    check(nvrtcSetFlowCallback(nvrtc, cancel_past_limits, &limits), "nvrtcSetFlowCallback",
          "limiting the compile of " + name);
  const nvrtcResult result =
      nvrtcCompileProgram(nvrtc, static_cast<int>(arguments.size()), arguments.data());
  if (result == NVRTC_ERROR_CANCELLED) {
    const std::string compile = "compiling " + name + " for " + options.target.arch + " with " +
                                format_defines(options.defines);
    std::string why = "was cancelled: its stop was requested";
    if (limits.deadline_passed()) {
      char limit[32];
      std::snprintf(limit, sizeof limit, "%g",
                    static_cast<double>(options.timeout->count()) / 1000.0);
      why = "took longer than the compile timeout of " + std::string(limit) + " s: cancelled";
    }
    throw Error(ErrorKind::compile, compile + " " + why, "nvrtcCompileProgram",
                static_cast<int>(result), nvrtcGetErrorString(result), "compiling " + name);
  }
  return result;
#else
  (void)name;
  (void)options;
  return nvrtcCompileProgram(nvrtc, static_cast<int>(arguments.size()), arguments.data());
#endif
}

std::uint64_t next_program_identity() {
  static std::atomic<std::uint64_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

// A later source's "// ptxrt:" lines join the first's; a constant declared twice keeps its first
// declaration.
void merge_manifest(Manifest& into, Manifest added) {
  for (ManifestDefine& define : added.defines)
    if (!into.find_define(define.name)) into.defines.push_back(std::move(define));
  for (ManifestEntry& entry : added.entries) into.entries.push_back(std::move(entry));
  for (ManifestConstraint& constraint : added.constraints)
    into.constraints.push_back(std::move(constraint));
}

void hash_source(Sha256& hash, const Program& program, const SourceFile& source,
                 const CompileOptions& options) {
  hash.update_field(source.name).update_field(source.text);
  auto named = [&](std::string_view name) { return named_header(program, name); };
  for (const detail::IncludedFile& header : detail::find_included_files(
           source.text, source.directory, named, search_paths(source, options)))
    hash.update_field(header.include_name).update_field(header.content);
}

void hash_device_objects(Sha256& hash, const Program& program) {
  for (const DeviceObject& object : program.device_objects())
    hash.update_field(object.name).update_field(to_string(object.kind)).update_field(object.bytes);
}

struct UnitOutput {
  std::string data;
  std::string log;
  std::vector<std::string> arguments;
  std::vector<std::pair<std::string, std::string>> lowered_names;
};

UnitOutput compile_unit(const Program& program, const SourceFile& source,
                        const CompileOptions& options, const std::vector<Define>& defines,
                        const UnitTarget& unit, bool with_name_expressions) {
  UnitOutput output;
  output.arguments = nvrtc_options(source, options, defines, unit);
  std::vector<const char*> header_texts;
  std::vector<const char*> header_names;
  for (const auto& [name, text] : program.headers()) {
    header_names.push_back(name.c_str());
    header_texts.push_back(text.c_str());
  }
  for (const detail::NamedText& header : detail::standard_headers())
    if (!program.headers().contains(header.name)) {
      header_names.push_back(header.name.data());
      header_texts.push_back(header.text.data());
    }

  NvrtcProgram nvrtc(source, header_texts, header_names);
  if (with_name_expressions)
    for (const std::string& expression : options.name_expressions)
      check(nvrtcAddNameExpression(nvrtc.get(), expression.c_str()), "nvrtcAddNameExpression",
            "adding name expression " + expression + " to " + source.name);
  // The PCH options stay out of output.arguments: they must not change the Image.
  detail::PrecompiledHeaderUse precompiled_headers(options.precompiled_header_directory);
  std::vector<const char*> argument_pointers;
  for (const std::string& argument : output.arguments)
    argument_pointers.push_back(argument.c_str());
  for (const std::string& option : precompiled_headers.options())
    argument_pointers.push_back(option.c_str());
  nvrtcResult result = compile_program(nvrtc.get(), source.name, options, argument_pointers);
  precompiled_headers.finish(nvrtc.get());
  output.log = nvrtc.log();
  if (result != NVRTC_SUCCESS)
    throw_compile_error(program, source, result, output.log, defines, output.arguments, unit);
  // Where a driver is installed, NVRTC 13 keeps CUBINs in the CUDA compute cache and a hit there
  // comes back without ptxas' report: say so, since spill counts then stay unknown.
  if (unit.format == ImageFormat::cubin && wants_resource_usage(options) &&
      output.log.find("ptxas info") == std::string::npos)
    output.log +=
        "ptxrt: no ptxas report (NVRTC served this CUBIN from the CUDA compute cache); "
        "set CUDA_CACHE_DISABLE=1 for spill counts\n";
  output.data = output_of(nvrtc, unit.format);
  if (with_name_expressions)
    for (const std::string& expression : options.name_expressions) {
      const char* lowered = nullptr;
      check(nvrtcGetLoweredName(nvrtc.get(), expression.c_str(), &lowered), "nvrtcGetLoweredName",
            "looking up name expression " + expression + " in " + source.name);
      output.lowered_names.emplace_back(expression, lowered);
    }
  return output;
}

nvJitLinkInputType link_input_type(DeviceObjectKind kind) {
  switch (kind) {
    case DeviceObjectKind::cubin:
      return NVJITLINK_INPUT_CUBIN;
    case DeviceObjectKind::ptx:
      return NVJITLINK_INPUT_PTX;
    case DeviceObjectKind::ltoir:
      return NVJITLINK_INPUT_LTOIR;
    case DeviceObjectKind::fatbin:
      return NVJITLINK_INPUT_FATBIN;
    case DeviceObjectKind::object:
      return NVJITLINK_INPUT_OBJECT;
    case DeviceObjectKind::library:
      return NVJITLINK_INPUT_LIBRARY;
  }
  return NVJITLINK_INPUT_ANY;
}

// Every source as relocatable device code (LTO-IR with lto, else a CUBIN), and every device
// object, through nvJitLink. Name expressions are looked up in the first source.
Image link_program(const Program& program, const CompileOptions& options,
                   const std::vector<Define>& defines) {
  const Target& target = options.target;
  if (target.format == ImageFormat::ltoir)
    throw Error(ErrorKind::invalid_argument, "LTO-IR is made from one source; " +
                                                 program.input_names() +
                                                 " links into a CUBIN (or into PTX with lto)");
  if (target.format == ImageFormat::ptx && !options.lto)
    throw Error(ErrorKind::invalid_argument,
                "PTX of a program that links (" + program.input_names() + ", " + target.arch +
                    ") needs link-time optimisation: set CompileOptions::lto (--lto), or ask for "
                    "a CUBIN (sm_XY)");
  const UnitTarget unit{target.arch, options.lto ? ImageFormat::ltoir : ImageFormat::cubin, true};
  detail::LinkRequest request{program.input_names(),
                              target.arch,
                              target.format,
                              options.lto,
                              wants_resource_usage(options),
                              detail::split_option_words(options.link_options),
                              {}};
  Image image;
  for (std::size_t index = 0; index < program.sources().size(); ++index) {
    const SourceFile& source = program.sources()[index];
    UnitOutput compiled = compile_unit(program, source, options, defines, unit, index == 0);
    request.inputs.push_back({options.lto ? NVJITLINK_INPUT_LTOIR : NVJITLINK_INPUT_CUBIN,
                              std::move(compiled.data), source.name, false});
    if (!compiled.log.empty())
      image.compile_log += "== " + source.name + " ==\n" + compiled.log + "\n";
    image.options.insert(image.options.end(), compiled.arguments.begin(), compiled.arguments.end());
    if (index == 0) image.lowered_names = std::move(compiled.lowered_names);
  }
  for (const DeviceObject& object : program.device_objects()) {
    object.check_links_into(target.arch);
    request.inputs.push_back({link_input_type(object.kind), object.bytes, object.name, true});
  }
  detail::LinkResult linked =
      options.isolated_link
          ? detail::link_in_child_process(request, detail::isolated_link_command(),
                                          options.timeout.value_or(isolated_link_limit))
          : detail::link(request);
  image.data = std::move(linked.output);
  if (!linked.info_log.empty()) image.compile_log += "== link ==\n" + linked.info_log + "\n";
  return image;
}

// One image for one architecture: a single source through NVRTC, or a linked program.
Image build(const Program& program, const CompileOptions& options,
            const std::vector<Define>& defines) {
  Image image;
  if (program.is_linked() || options.lto) {
    image = link_program(program, options, defines);
  } else {
    const UnitTarget unit{options.target.arch, options.target.format, false};
    UnitOutput compiled =
        compile_unit(program, program.sources().front(), options, defines, unit, true);
    image.data = std::move(compiled.data);
    image.compile_log = std::move(compiled.log);
    image.options = std::move(compiled.arguments);
    image.lowered_names = std::move(compiled.lowered_names);
  }
  image.format = options.target.format;
  image.arch = options.target.arch;
  image.name = program.input_names();
  if (!options.target.note.empty())
    image.compile_log = options.target.note + "\n" + image.compile_log;
  return image;
}

}  // namespace

Program::Program(std::string source, std::string name, std::filesystem::path directory)
    : manifest_(parse_manifest(source, name)), identity_(next_program_identity()) {
  sources_.push_back({std::move(name), std::move(source), std::move(directory)});
}

Program Program::from_file(const std::filesystem::path& path) {
  return Program(detail::read_regular_file(path, "kernel source", detail::source_limits),
                 path.filename().string(), path.parent_path());
}

Program Program::from_files(const std::vector<std::filesystem::path>& paths) {
  if (paths.empty())
    throw Error(ErrorKind::invalid_argument, "Program::from_files needs at least one file");
  Program program = from_file(paths.front());
  for (std::size_t index = 1; index < paths.size(); ++index) program.add_source_file(paths[index]);
  return program;
}

Program Program::from_string(std::string source, std::string name,
                             std::filesystem::path directory) {
  return Program(std::move(source), std::move(name), std::move(directory));
}

Program& Program::add_header(std::string include_name, std::string content) {
  headers_.insert_or_assign(std::move(include_name), std::move(content));
  identity_ = next_program_identity();
  return *this;
}

Program& Program::add_source(std::string source, std::string name,
                             std::filesystem::path directory) {
  merge_manifest(manifest_, parse_manifest(source, name));
  sources_.push_back({std::move(name), std::move(source), std::move(directory)});
  identity_ = next_program_identity();
  return *this;
}

Program& Program::add_source_file(const std::filesystem::path& path) {
  return add_source(detail::read_regular_file(path, "kernel source", detail::source_limits),
                    path.filename().string(), path.parent_path());
}

Program& Program::add_device_object(DeviceObject object) {
  device_objects_.push_back(std::move(object));
  identity_ = next_program_identity();
  return *this;
}

std::string Program::input_names() const {
  std::string names;
  for (const SourceFile& source : sources_) names += (names.empty() ? "" : "+") + source.name;
  for (const DeviceObject& object : device_objects_) names += "+" + object.name;
  return names;
}

std::vector<std::filesystem::path> toolkit_include_paths() {
  std::filesystem::path root;
  for (const char* variable : {"CUDA_PATH", "CUDA_HOME"})
    if (const char* value = std::getenv(variable); value && *value) {
      root = std::filesystem::path(value) / "include";
      break;
    }
  std::vector<std::filesystem::path> roots;
  if (!root.empty()) {
    roots.push_back(root);
  } else {
    // CMake hands over a ';'-separated list.
    std::string_view list = PTXRT_CUDA_INCLUDE_DIR;
    while (!list.empty()) {
      std::size_t separator = list.find(';');
      if (separator != 0) roots.emplace_back(list.substr(0, separator));
      list.remove_prefix(separator == std::string_view::npos ? list.size() : separator + 1);
    }
  }
  std::vector<std::filesystem::path> paths;
  for (const std::filesystem::path& folder : roots) {
    paths.push_back(folder);
    std::error_code error;
    if (std::filesystem::is_directory(folder / "cccl", error)) paths.push_back(folder / "cccl");
  }
  return paths;
}

std::string cache_key(const Program& program, const CompileOptions& options, int driver_version) {
  std::vector<Define> defines = validated_defines(program, options);
  std::sort(defines.begin(), defines.end(),
            [](const Define& a, const Define& b) { return a.name < b.name; });
  Sha256 hash;
  hash.update_field("ptxrt cache key 1");
  hash_source(hash, program, program.sources().front(), options);
  hash.update_field("defines");
  for (const Define& define : defines) hash.update_field(define.name).update_field(define.value);
  hash.update_field("options");
  for (const std::string& word : detail::split_option_words(options.extra_options))
    hash.update_field(word);
  hash.update_field("names");
  for (const std::string& expression : options.name_expressions) hash.update_field(expression);
  hash.update_field(options.target.arch).update_field(to_string(options.target.format));
  hash.update_field(wants_resource_usage(options) ? "resource usage" : "");
  hash.update_field(nvrtc_build());
  if (options.target.format == ImageFormat::ptx) hash.update_field(std::to_string(driver_version));
  // A single source without lto keeps the key it always had.
  if (program.is_linked() || options.lto) {
    hash.update_field("link").update_field(options.lto ? "lto" : "");
    for (std::size_t index = 1; index < program.sources().size(); ++index)
      hash_source(hash, program, program.sources()[index], options);
    hash_device_objects(hash, program);
    hash.update_field("link options");
    for (const std::string& word : detail::split_option_words(options.link_options))
      hash.update_field(word);
    hash.update_field(std::to_string(detail::DeviceLinker::version()));
  }
  return hash.hex_digest();
}

std::string source_hash(const Program& program) {
  Sha256 hash;
  hash.update_field("ptxrt source 1");
  for (const SourceFile& source : program.sources()) hash_source(hash, program, source, {});
  hash_device_objects(hash, program);
  return hash.hex_digest();
}

Image compile(const Program& program, const CompileOptions& options, int driver_version) {
  const auto start = detail::Clock::now();
  check_target(program, options);
  std::vector<Define> defines = validated_defines(program, options);
  Image image;
  if (options.target.format == ImageFormat::fatbin) {
    std::vector<Image> parts;
    for (const std::string& arch : target_architectures(options.target.arch)) {
      CompileOptions part = options;
      part.target = {arch, arch.starts_with("sm_") ? ImageFormat::cubin : ImageFormat::ptx, {}};
      parts.push_back(build(program, part, defines));
    }
    image = make_fatbin(parts, program.input_names());
    if (!options.target.note.empty())
      image.compile_log = options.target.note + "\n" + image.compile_log;
  } else {
    image = build(program, options, defines);
  }
  image.key = cache_key(program, options, driver_version);
  image.nvrtc_version = nvrtc_version();
  image.defines = std::move(defines);
  if (log::enabled(log::Level::info))
    log::write(log::Level::info,
               "compiled " + describe_image(image) + " in " + detail::milliseconds_since(start));
  return image;
}

}  // namespace ptxrt
