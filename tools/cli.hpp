// What the `ptxrt` commands share: the registration of each command group, the arguments several
// commands take (<kernel|file.cu>, -D, -I, -X, --arch) turned into ptxrt values, and aligned
// tables.
//
// Exit codes: 0 success, 1 a failure the user can fix (bad value, compile error; one message on
// stderr naming the thing at fault), 2 a malformed command line (CLI11's parse errors), 130 (143)
// a tune stopped by SIGINT (SIGTERM).
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ptxrt/core/image.hpp"
#include "ptxrt/core/program.hpp"
#include "ptxrt/core/target.hpp"

namespace ptxrt::cli {

// One per command group, each in its own file; main() calls them in order.
void add_devices_commands(CLI::App& app);
void add_compile_commands(CLI::App& app);
void add_resources_commands(CLI::App& app);
void add_kernels_commands(CLI::App& app);
void add_cache_commands(CLI::App& app);
void add_demo_command(CLI::App& app);
void add_tune_commands(CLI::App& app);

// The options several commands take, with the same names and help everywhere.
void add_kernel_argument(CLI::App& command, std::string& kernel_or_file);
void add_define_option(CLI::App& command, std::vector<std::string>& defines);
void add_arch_option(CLI::App& command, std::string& arch);
// -I: folders searched for a kernel file's #include "..."; -X: options passed to NVRTC as is.
struct NvrtcArguments {
  std::vector<std::string> include_paths;
  std::vector<std::string> options;
  double timeout_seconds = 0;  // 0: none (an isolated link still stops at a minute)

  void apply_to(CompileOptions& compile) const;
};
void add_nvrtc_arguments(CLI::App& command, NvrtcArguments& arguments);
// A program of several files: more sources after the kernel argument, prebuilt device objects
// and libraries (--link), link-time optimisation (--lto) and nvJitLink options (--link-option).
struct LinkArguments {
  std::vector<std::string> sources;
  std::vector<std::string> objects;
  bool lto = false;
  std::vector<std::string> options;

  // `program` with the further sources and device objects (each recognised by its content).
  Program add_to(Program program) const;
  void apply_to(CompileOptions& compile) const;
};
void add_link_arguments(CLI::App& command, LinkArguments& arguments);
// --db: the tuning database; `condition` ("with --tuned: ") prefixes its help.
void add_database_option(CLI::App& command, std::string& database, std::string_view condition = "");
// The database --db names: `given`, or TuningDatabase::default_path() when it is empty.
std::filesystem::path database_path(const std::string& given);

// "<kernel|file.cu>": an existing file is read as kernel source, anything else must be a builtin
// kernel's name. Throws Error (not_found) naming the argument and the builtin kernels.
Program load_program(const std::string& kernel_or_file);

// Throws Error (not_found) unless `word` names a file or one of `builtins`: "'shwo' is neither a
// file nor a builtin tuning problem (builtin: matmul, sgemm, closest-pair)", with the closest
// builtin, or else the closest of `commands` ("tune show"), when `word` looks like a typo of one.
void check_file_or_builtin(const std::string& word, const std::vector<std::string>& builtins,
                           std::string_view kind, const std::vector<std::string>& commands = {});

// Throws Error (not_found) "--problem 'p.json': no such file" when nothing is at `path`; what is
// there is for its reader to judge.
void check_file_exists(const std::string& path, std::string_view option);

// Each "NAME=VALUE" (or "NAME") through parse_define.
std::vector<Define> parse_defines(const std::vector<std::string>& texts);

// What --arch auto means without a usable GPU: the architecture most CI machines compile for.
inline constexpr std::string_view fallback_arch = "sm_90";

// What --arch names: "sm_XY", "sm_XYa", "sm_XYf", "compute_XY" as given (checked against
// NVRTC's supported architectures), or for "auto" device 0's (select_target). Without a usable
// GPU "auto" means sm_90, and a note on stderr says so. Throws Error (invalid_argument).
Target choose_target(const std::string& arch, ImageFormat format);

// The compute capability an architecture name stands for: {9, 0} for "sm_90a" or "compute_90",
// {12, 1} for "sm_121". Throws Error (invalid_argument) for anything else.
std::pair<int, int> compute_capability_of(std::string_view arch);

// Bounds of numeric options, said as the option's type would: "--device: must be 0 or more, got
// -1", "--time: must be more than 0 seconds, got -1" (CLI11's PositiveNumber and
// NonNegativeNumber print theirs as 300-digit doubles).
CLI::Validator at_least(std::int64_t minimum);
// Seconds: a finite number above 0 and at most `most`, which keeps it a count of milliseconds.
CLI::Validator positive_seconds(double most = 1e9);

// Every --json output: `document` indented by 2, then a newline. Text from outside (file names,
// defines, compile logs) need not be UTF-8, which JSON requires: such bytes are written as
// U+FFFD rather than failing the output.
void print_json(std::ostream& out, const nlohmann::json& document);

// "ptxrt: note: <message>" on stderr: what the user should know but is not a failure.
void note(std::string_view message);

// `value` with `digits` after the point, as "%.*f" writes it.
std::string fixed(double value, int digits);

// Columns padded to their widest cell, two spaces apart, the header first.
void print_table(std::ostream& out, const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows);

// Calls work(i) for every i in [0, count) on up to `threads` threads. When calls throw, the one
// with the lowest i is rethrown after all have finished, so that the report does not depend on
// scheduling.
void run_parallel(std::size_t count, unsigned threads,
                  const std::function<void(std::size_t)>& work);

}  // namespace ptxrt::cli
