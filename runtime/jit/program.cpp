#include "ptxrt/program.hpp"

#include <cuda.h>
#include <nvrtc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>

#include "jit/compile_diagnostics.hpp"
#include "jit/elapsed.hpp"
#include "jit/include_scanner.hpp"
#include "jit/std_headers.hpp"
#include "ptxrt/builtin_kernels.hpp"
#include "ptxrt/error.hpp"
#include "ptxrt/hash.hpp"
#include "ptxrt/log.hpp"

namespace ptxrt {
namespace {

// Owns an nvrtcProgram.
class NvrtcProgram {
 public:
  NvrtcProgram(const Program& program, const std::vector<const char*>& header_texts,
               const std::vector<const char*>& header_names) {
    check(nvrtcCreateProgram(&handle_, program.source().c_str(), program.name().c_str(),
                             static_cast<int>(header_texts.size()), header_texts.data(),
                             header_names.data()),
          "nvrtcCreateProgram", "creating the NVRTC program for " + program.name());
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

std::vector<std::filesystem::path> search_paths(const Program& program,
                                                const CompileOptions& options) {
  std::vector<std::filesystem::path> paths;
  if (!program.directory().empty()) paths.push_back(program.directory());
  paths.insert(paths.end(), options.include_paths.begin(), options.include_paths.end());
  return paths;
}

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  std::istringstream stream{std::string(text)};
  for (std::string word; stream >> word;) words.push_back(word);
  return words;
}

void check_target(const Program& program, const Target& target) {
  if (target.arch.empty())
    throw Error(ErrorKind::invalid_argument,
                "no target architecture given for " + program.name() +
                    ": set CompileOptions::target (select_target() picks one for a device)");
  if (target.format == ImageFormat::cubin && !target.arch.starts_with("sm_"))
    throw Error(ErrorKind::invalid_argument,
                "a CUBIN needs a real architecture (sm_XY), not " + target.arch + ", for " +
                    program.name() + ": ask for PTX, or for sm_" +
                    target.arch.substr(target.arch.find('_') + 1));
}

bool wants_resource_usage(const CompileOptions& options) {
  return options.resource_usage.value_or(options.target.format == ImageFormat::cubin);
}

// Every NVRTC option, in order: arch, defines, includes, the caller's extras.
std::vector<std::string> nvrtc_options(const Program& program, const CompileOptions& options,
                                       const std::vector<Define>& defines) {
  std::vector<std::string> arguments{"-arch=" + options.target.arch};
  for (const Define& define : defines)
    arguments.push_back("-D" + define.name + (define.value.empty() ? "" : "=" + define.value));
  for (const std::filesystem::path& folder : search_paths(program, options))
    arguments.push_back("-I" + folder.string());
  for (const std::filesystem::path& folder : toolkit_include_paths())
    arguments.push_back("-I" + folder.string());
  for (const std::string& option : options.extra_options)
    for (std::string& word : split_words(option)) arguments.push_back(std::move(word));
  // Two words: one NVRTC 13.0 build seen on an H100 machine ignores the "-Xptxas=-v" spelling.
  if (wants_resource_usage(options)) {
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

std::string format_name(ImageFormat format) { return format == ImageFormat::ptx ? "PTX" : "CUBIN"; }

// NVRTC only says `cannot open source file "vector"`; a missing <header> without a folder gets a
// note of what the device side has instead.
std::string missing_standard_header_notes(std::string_view log, std::string_view source) {
  constexpr std::string_view marker = "cannot open source file \"";
  std::string notes;
  for (std::size_t at = log.find(marker); at != std::string_view::npos;
       at = log.find(marker, at + 1)) {
    const std::size_t start = at + marker.size(), end = log.find('"', start);
    if (end == std::string_view::npos) break;
    const std::string name(log.substr(start, end - start));
    if (name.find('/') != std::string::npos ||
        source.find("<" + name + ">") == std::string_view::npos)
      continue;
    notes += "\nnote: <";
    notes += name;
    notes += "> is not among the standard headers ptxrt gives NVRTC, which are those with a "
             "device form:";
    for (const detail::NamedText& header : detail::standard_headers()) {
      notes += ' ';
      notes += header.name;
    }
    notes += ". Host-only headers (<vector>, <string>, <iostream>) cannot be compiled for the "
             "device; the toolkit's own (cuda/std/..., cooperative_groups.h) are on the include "
             "path.\n";
  }
  return notes;
}

[[noreturn]] void throw_compile_error(const Program& program, nvrtcResult result,
                                      const std::string& log, const std::vector<Define>& defines,
                                      const std::vector<std::string>& arguments,
                                      const Target& target) {
  auto lookup = [&](std::string_view file) -> std::optional<std::string> {
    if (file == program.name()) return program.source();
    if (std::optional<std::string_view> header = named_header(program, file))
      return std::string(*header);
    return detail::read_text_file(std::filesystem::path(file));
  };
  std::string message = "compiling " + program.name() + " to " + format_name(target.format) +
                        " for " + target.arch + " failed\n  defines: " +
                        format_defines(defines) + "\n  options: " + join(arguments) + "\n\n" +
                        detail::annotate_compile_log(log, lookup) +
                        missing_standard_header_notes(log, program.source());
  const bool compile_error = result == NVRTC_ERROR_COMPILATION;
  throw Error(compile_error ? ErrorKind::compile : ErrorKind::invalid_argument, std::move(message),
              "nvrtcCompileProgram", static_cast<int>(result), nvrtcGetErrorString(result),
              "compiling " + program.name());
}

std::string output_of(const NvrtcProgram& nvrtc, ImageFormat format) {
  std::size_t size = 0;
  std::string data;
  if (format == ImageFormat::ptx) {
    check(nvrtcGetPTXSize(nvrtc.get(), &size), "nvrtcGetPTXSize");
    data.resize(size);
    check(nvrtcGetPTX(nvrtc.get(), data.data()), "nvrtcGetPTX");
    while (!data.empty() && data.back() == '\0') data.pop_back();
  } else {
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

// nvrtcSetFlowCallback's callback: cancel (1) once the deadline has passed. NVRTC may call it
// from its own threads; it only reads the deadline.
int cancel_after_deadline(void* deadline, void*) {
  const auto* until = static_cast<const std::chrono::steady_clock::time_point*>(deadline);
  return std::chrono::steady_clock::now() >= *until ? 1 : 0;
}

// Compiles with `options.timeout` enforced where NVRTC can cancel (12.8 and newer).
nvrtcResult compile_program(nvrtcProgram nvrtc, const Program& program,
                            const CompileOptions& options,
                            const std::vector<const char*>& arguments) {
#if CUDA_VERSION >= 12080
  std::chrono::steady_clock::time_point deadline{};
  if (options.timeout) {
    deadline = std::chrono::steady_clock::now() + *options.timeout;
    check(nvrtcSetFlowCallback(nvrtc, cancel_after_deadline, &deadline), "nvrtcSetFlowCallback",
          "limiting the compile of " + program.name());
  }
  const nvrtcResult result =
      nvrtcCompileProgram(nvrtc, static_cast<int>(arguments.size()), arguments.data());
  if (result == NVRTC_ERROR_CANCELLED) {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", static_cast<double>(options.timeout->count()) / 1000.0);
    throw Error(ErrorKind::compile,
                "compiling " + program.name() + " for " + options.target.arch + " with " +
                    format_defines(options.defines) + " took longer than the compile timeout of " +
                    limit + " s: cancelled",
                "nvrtcCompileProgram", static_cast<int>(result), nvrtcGetErrorString(result),
                "compiling " + program.name());
  }
  return result;
#else
  (void)program;
  (void)options;
  return nvrtcCompileProgram(nvrtc, static_cast<int>(arguments.size()), arguments.data());
#endif
}

std::uint64_t next_program_identity() {
  static std::atomic<std::uint64_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

}  // namespace

Program::Program(std::string source, std::string name, std::filesystem::path directory)
    : source_(std::move(source)),
      name_(std::move(name)),
      directory_(std::move(directory)),
      manifest_(parse_manifest(source_, name_)),
      identity_(next_program_identity()) {}

Program Program::from_file(const std::filesystem::path& path) {
  std::optional<std::string> source = detail::read_text_file(path);
  if (!source)
    throw Error(ErrorKind::io, "cannot read kernel source " + path.string());
  return Program(std::move(*source), path.filename().string(), path.parent_path());
}

Program Program::from_string(std::string source, std::string name,
                             std::filesystem::path directory) {
  return Program(std::move(source), std::move(name), std::move(directory));
}

Program Program::builtin(std::string_view name) {
  std::string file(name);
  if (!file.ends_with(".cu")) file += ".cu";
  // The embedded files never change, so every request for one gets a copy of one Program (one
  // identity): Jit's fingerprint tables then hold an entry per kernel, not one per request.
  static std::mutex mutex;
  static std::map<std::string, Program, std::less<>> programs;
  std::lock_guard lock(mutex);
  if (auto found = programs.find(file); found != programs.end()) return found->second;
  std::optional<std::string_view> source = builtin_file(file);
  if (!source) {
    std::string known;
    for (const std::string& kernel : builtin_kernel_names()) known += " " + kernel;
    throw Error(ErrorKind::not_found, "no builtin kernel '" + std::string(name) + "'; known:" +
                                          (known.empty() ? " (none)" : known));
  }
  Program program(std::string(*source), file, {});
  for (auto [path, text] : builtin_headers()) program.add_header(std::string(path), std::string(text));
  programs.emplace(file, program);
  return program;
}

Program& Program::add_header(std::string include_name, std::string content) {
  headers_.insert_or_assign(std::move(include_name), std::move(content));
  identity_ = next_program_identity();
  return *this;
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
  hash.update_field("ptxrt cache key 1").update_field(program.name()).update_field(program.source());
  auto named = [&](std::string_view name) { return named_header(program, name); };
  for (const detail::IncludedFile& header : detail::find_included_files(
           program.source(), program.directory(), named, search_paths(program, options)))
    hash.update_field(header.include_name).update_field(header.content);
  hash.update_field("defines");
  for (const Define& define : defines) hash.update_field(define.name).update_field(define.value);
  hash.update_field("options");
  for (const std::string& option : options.extra_options)
    for (const std::string& word : split_words(option)) hash.update_field(word);
  hash.update_field("names");
  for (const std::string& expression : options.name_expressions) hash.update_field(expression);
  hash.update_field(options.target.arch).update_field(format_name(options.target.format));
  hash.update_field(wants_resource_usage(options) ? "resource usage" : "");
  hash.update_field(nvrtc_build());
  if (options.target.format == ImageFormat::ptx) hash.update_field(std::to_string(driver_version));
  return hash.hex_digest();
}

std::string source_hash(const Program& program) {
  Sha256 hash;
  hash.update_field("ptxrt source 1").update_field(program.name()).update_field(program.source());
  auto named = [&](std::string_view name) { return named_header(program, name); };
  for (const detail::IncludedFile& header : detail::find_included_files(
           program.source(), program.directory(), named, search_paths(program, {})))
    hash.update_field(header.include_name).update_field(header.content);
  return hash.hex_digest();
}

Image compile(const Program& program, const CompileOptions& options, int driver_version) {
  const auto start = detail::Clock::now();
  check_target(program, options.target);
  std::vector<Define> defines = validated_defines(program, options);
  std::vector<std::string> arguments = nvrtc_options(program, options, defines);

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

  NvrtcProgram nvrtc(program, header_texts, header_names);
  for (const std::string& expression : options.name_expressions)
    check(nvrtcAddNameExpression(nvrtc.get(), expression.c_str()), "nvrtcAddNameExpression",
          "adding name expression " + expression + " to " + program.name());
  std::vector<const char*> argument_pointers;
  for (const std::string& argument : arguments) argument_pointers.push_back(argument.c_str());
  nvrtcResult result = compile_program(nvrtc.get(), program, options, argument_pointers);
  std::string log = nvrtc.log();
  if (result != NVRTC_SUCCESS)
    throw_compile_error(program, result, log, defines, arguments, options.target);
  // Where a driver is installed, NVRTC 13 keeps CUBINs in the CUDA compute cache and a hit there
  // comes back without ptxas' report: say so, since spill counts then stay unknown.
  if (wants_resource_usage(options) && log.find("ptxas info") == std::string::npos)
    log += "ptxrt: no ptxas report (NVRTC served this CUBIN from the CUDA compute cache); set "
           "CUDA_CACHE_DISABLE=1 for spill counts\n";

  Image image;
  image.format = options.target.format;
  image.arch = options.target.arch;
  image.data = output_of(nvrtc, options.target.format);
  image.name = program.name();
  image.options = arguments;
  image.compile_log = options.target.note.empty() ? log : options.target.note + "\n" + log;
  for (const std::string& expression : options.name_expressions) {
    const char* lowered = nullptr;
    check(nvrtcGetLoweredName(nvrtc.get(), expression.c_str(), &lowered), "nvrtcGetLoweredName",
          "looking up name expression " + expression + " in " + program.name());
    image.lowered_names.emplace_back(expression, lowered);
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
