#include "cli.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <exception>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>

#include "apps/common/builtin_kernels.hpp"
#include "ptxrt/core/device.hpp"
#include "ptxrt/core/driver.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/manifest.hpp"
#include "ptxrt/tune/tuning_database.hpp"
#include "support/quoted.hpp"
#include "unknown_command.hpp"

namespace ptxrt::cli {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string list;
  for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
  return list.empty() ? "(none)" : list;
}

std::string supported_list() {
  std::string list;
  for (int sm : supported_architectures())
    list += (list.empty() ? "sm_" : ", sm_") + std::to_string(sm);
  return list;
}

Target detected_target(ImageFormat format) {
  DriverStatus status = driver_status();
  if (!status.usable) {
    note("no usable GPU (" + (status.problem.empty() ? "no CUDA device" : status.problem) +
         "); using --arch " + std::string(fallback_arch));
    return Target{std::string(fallback_arch), format, {}};
  }
  const DeviceProperties properties = Device::get(0).properties();
  Target target = select_target(properties.cc_major, properties.cc_minor, format);
  if (!target.note.empty()) note(target.note);
  target.note.clear();  // said once here, not again in the compile log
  return target;
}

}  // namespace

void add_kernel_argument(CLI::App& command, std::string& kernel_or_file) {
  command
      .add_option("kernel", kernel_or_file, "a builtin kernel (see `ptxrt kernels`) or a .cu file")
      ->required();
}

void add_define_option(CLI::App& command, std::vector<std::string>& defines) {
  command.add_option("-D,--define", defines,
                     "NAME=VALUE (or NAME): a compile-time constant, checked against the "
                     "kernel's manifest; repeatable");
}

void add_arch_option(CLI::App& command, std::string& arch) {
  command
      .add_option("--arch", arch,
                  "auto (device 0; sm_90 without a GPU), sm_XY, sm_XYa, sm_XYf or compute_XY")
      ->capture_default_str();
}

void NvrtcArguments::apply_to(CompileOptions& compile) const {
  compile.include_paths.assign(include_paths.begin(), include_paths.end());
  compile.extra_options = options;
  if (timeout_seconds > 0)
    compile.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout_seconds * 1000));
}

void add_nvrtc_arguments(CLI::App& command, NvrtcArguments& arguments) {
  command.add_option("-I,--include", arguments.include_paths,
                     "a folder searched for #include \"...\"; repeatable");
  command.add_option("-X,--nvrtc-option", arguments.options,
                     "an option passed to NVRTC as is (-X --use_fast_math, -X -lineinfo); "
                     "repeatable");
  command
      .add_option("--timeout", arguments.timeout_seconds,
                  "cancel a compile, or a link of --link inputs with --lto, after S seconds")
      ->check(positive_seconds());
}

Program LinkArguments::add_to(Program program) const {
  for (const std::string& source : sources) program.add_source_file(source);
  for (const std::string& object : objects)
    program.add_device_object(DeviceObject::from_file(object));
  return program;
}

void LinkArguments::apply_to(CompileOptions& compile) const {
  compile.lto = lto;
  compile.link_options = options;
  // Objects from files may hold LTO-IR, whose IR only nvJitLink reads: a damaged one then costs
  // a child process, not this one. Without lto the linker refuses LTO-IR unread.
  compile.isolated_link = lto && !objects.empty();
}

void add_link_arguments(CLI::App& command, LinkArguments& arguments) {
  command.add_option("sources", arguments.sources,
                     "more .cu files of the same program: compiled as relocatable device code and "
                     "linked with the first");
  command.add_option("--link", arguments.objects,
                     "a prebuilt device object to link in: a static library or object from nvcc "
                     "-dc, PTX, CUBIN, fatbin or LTO-IR (recognised by content); repeatable");
  command.add_flag("--lto", arguments.lto,
                   "link-time optimisation: the sources compile to LTO-IR and nvJitLink optimises "
                   "across them");
  command.add_option("--link-option", arguments.options,
                     "an option passed to nvJitLink as is (--link-option -maxrregcount=64); "
                     "repeatable");
}

void add_database_option(CLI::App& command, std::string& database, std::string_view condition) {
  command.add_option("--db", database,
                     std::string(condition) +
                         "the tuning database (default: $PTXRT_TUNING_DB, else tuning.json in the "
                         "cache directory)");
}

std::filesystem::path database_path(const std::string& given) {
  return given.empty() ? TuningDatabase::default_path() : std::filesystem::path(given);
}

bool names_a_file(const std::string& path) {
  std::error_code error;
  return std::filesystem::exists(path, error) && !std::filesystem::is_directory(path, error);
}

void check_file_or_builtin(const std::string& word, const std::vector<std::string>& builtins,
                           std::string_view kind, const std::vector<std::string>& commands) {
  if (names_a_file(word) || std::find(builtins.begin(), builtins.end(), word) != builtins.end())
    return;
  std::string message = detail::quoted(word) + " is neither a file nor a builtin " +
                        std::string(kind) + " (builtin: " + joined(builtins) + ")";
  if (std::optional<std::string> closest = closest_name(word, builtins))
    message += "; did you mean '" + *closest + "'?";
  else
    for (const std::string& command : commands)  // "tune show" is meant by "shwo"
      if (closest_name(word, {command.substr(command.rfind(' ') + 1)})) {
        message += "; did you mean the command '" + command + "'?";
        break;
      }
  throw Error(ErrorKind::not_found, message);
}

void check_file_exists(const std::string& path, std::string_view option) {
  std::error_code error;
  if (!std::filesystem::exists(path, error))
    throw Error(ErrorKind::not_found,
                std::string(option) + " " + detail::quoted(path) + ": no such file");
}

Program load_program(const std::string& kernel_or_file) {
  // Whatever is at the path but a folder is read as kernel source, which refuses a FIFO or a
  // device by name rather than mistaking it for a builtin's.
  if (names_a_file(kernel_or_file)) return Program::from_file(kernel_or_file);
  std::string name = kernel_or_file;
  if (name.ends_with(".cu")) name.resize(name.size() - 3);
  const std::vector<std::string> builtins = apps::builtin_kernel_names();
  if (std::find(builtins.begin(), builtins.end(), name) == builtins.end())
    check_file_or_builtin(kernel_or_file, builtins, "kernel");
  return apps::builtin_program(name);
}

std::vector<Define> parse_defines(const std::vector<std::string>& texts) {
  std::vector<Define> defines;
  for (const std::string& text : texts) defines.push_back(parse_define(text));
  return defines;
}

std::pair<int, int> compute_capability_of(std::string_view arch) {
  const std::optional<Architecture> architecture = parse_architecture(arch);
  if (!architecture)
    throw Error(ErrorKind::invalid_argument,
                "--arch " + detail::quoted(arch) +
                    " is not an architecture: expected auto, sm_XY, sm_XYa, sm_XYf or compute_XY");
  return {architecture->cc_major(), architecture->cc_minor()};
}

Target choose_target(const std::string& arch, ImageFormat format) {
  if (arch == "auto") return detected_target(format);
  auto [major, minor] = compute_capability_of(arch);
  const std::vector<int> supported = supported_architectures();
  if (std::find(supported.begin(), supported.end(), major * 10 + minor) == supported.end())
    throw Error(ErrorKind::invalid_argument, "--arch " + arch + " is not supported by NVRTC " +
                                                 format_cuda_version(nvrtc_version()) +
                                                 "; it compiles for " + supported_list());
  return Target{arch, format, {}};
}

CLI::Validator at_least(std::int64_t minimum) {
  const std::string bound = minimum == 0 ? "0 or more" : "at least " + std::to_string(minimum);
  return CLI::Validator(
      [minimum, bound](const std::string& text) -> std::string {
        std::int64_t value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error != std::errc() || end != text.data() + text.size())
          return "must be a whole number, " + bound;
        if (value < minimum) return "must be " + bound + ", got " + std::to_string(value);
        return {};
      },
      minimum == 0   ? "NONNEGATIVE"
      : minimum == 1 ? "POSITIVE"
                     : "AT LEAST " + std::to_string(minimum));
}

CLI::Validator positive_seconds(double most) {
  const auto text_of = [](double value) { return (std::ostringstream() << value).str(); };
  return CLI::Validator(
      [most, text_of](const std::string& text) -> std::string {
        double value = 0.0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value))
          return "must be a number of seconds, more than 0";
        if (value <= 0.0) return "must be more than 0 seconds, got " + text_of(value);
        if (value > most)
          return "must be at most " + text_of(most) + " seconds, got " + text_of(value);
        return {};
      },
      "SECONDS > 0");
}

void print_json(std::ostream& out, const nlohmann::json& document) {
  out << document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

void note(std::string_view message) { std::cerr << "ptxrt: note: " << message << '\n'; }

std::string fixed(double value, int digits) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(digits) << value;
  return text.str();
}

void print_table(std::ostream& out, const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths(header.size(), 0);
  auto widen = [&widths](const std::vector<std::string>& row) {
    for (std::size_t column = 0; column < row.size() && column < widths.size(); ++column)
      widths[column] = std::max(widths[column], row[column].size());
  };
  widen(header);
  for (const std::vector<std::string>& row : rows) widen(row);
  auto print = [&](const std::vector<std::string>& row) {
    std::string line;
    for (std::size_t column = 0; column < row.size(); ++column) {
      line += row[column];
      if (column + 1 < row.size())
        line += std::string(widths[column] - row[column].size() + 2, ' ');
    }
    out << line << '\n';
  };
  print(header);
  for (const std::vector<std::string>& row : rows) print(row);
}

void run_parallel(std::size_t count, unsigned threads,
                  const std::function<void(std::size_t)>& work) {
  std::mutex mutex;
  std::size_t next = 0;
  std::size_t failed_index = count;
  std::exception_ptr failure;
  auto worker = [&] {
    for (;;) {
      std::size_t index = 0;
      {
        std::lock_guard lock(mutex);
        if (next == count) return;
        index = next++;
      }
      try {
        work(index);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (index < failed_index) {
          failed_index = index;
          failure = std::current_exception();
        }
      }
    }
  };
  std::vector<std::jthread> pool;
  const std::size_t size = std::clamp<std::size_t>(threads, 1, std::max<std::size_t>(count, 1));
  for (std::size_t i = 1; i < size; ++i) pool.emplace_back(worker);
  worker();
  pool.clear();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace ptxrt::cli
