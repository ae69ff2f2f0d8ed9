// A tuning problem as plain data, Kernel Tuner's way: the kernel file and its entry, the problem
// sizes, the tunable constants and their constraints, the launch geometry as expressions of
// sizes and tunables, the arguments with how their data is made, the __constant__/__device__
// symbols to fill, and how an output is checked. The same description drives `ptxrt tune FILE.cu
// --problem P.json`, `ptxrt run FILE.cu --problem P.json`, tune_problem() and TunedKernel.
//
// Made three ways, each giving the same value: a JSON file beside the kernel (from_file), the
// "// ptxrt: problem" lines of the kernel file (from_manifest), or the builder below:
//
//   KernelProblem problem(Program::from_file("scale.cu"), "scale<float>");
//   problem.size("n")
//       .tune("BLOCK", {64, 128, 256}).tune("ITEMS", {1, 2, 4})
//       .constraint("BLOCK * ITEMS <= 1024")
//       .block("BLOCK").grid("ceil_div(n, BLOCK * ITEMS)")
//       .buffer("x", ElementType::float32, "n", DataInit::uniform(-1, 1))
//       .buffer("y", ElementType::float32, "n", DataInit::zeros(), ArgumentRole::output)
//       .scalar("n", ElementType::int32, "n")
//       .verify_with_kernel({.entry = "scale_reference", .geometry = LaunchGeometry::of(
//                                {"256"}, {"ceil_div(n, 256)"})})
//       .bytes("8 * n");
//
// Expressions are integer expressions (expression.hpp: C's operators and Python's, ceil_div, min,
// max) over the sizes, the fixed defines and, where a config is known, the tunables. Names are
// checked when the problem is made, so that an expression naming nothing fails at once, naming
// the field ("arguments[2].count").
//
// Plain values: copy them and share them between threads; the C++ callbacks, when any are set,
// must then be thread-safe themselves.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "ptxrt/core/context.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/expression.hpp"
#include "ptxrt/core/kernel.hpp"
#include "ptxrt/core/memory.hpp"
#include "ptxrt/core/program.hpp"
#include "ptxrt/core/verdict.hpp"
#include "ptxrt/export.hpp"
#include "ptxrt/tune/tuning_space.hpp"

namespace ptxrt {

class Jit;

enum class ElementType {
  int8,
  int16,
  int32,
  int64,
  uint8,
  uint16,
  uint32,
  uint64,
  float32,
  float64
};
// "int8" ... "uint64", "float", "double".
PTXRT_API std::string_view to_string(ElementType type);
// The names above, and "int" (int32), "unsigned"/"uint" (uint32), "float32", "float64"; Error
// (invalid_argument) listing them otherwise.
PTXRT_API ElementType parse_element_type(std::string_view name);
PTXRT_API std::size_t element_bytes(ElementType type);
PTXRT_API bool is_floating(ElementType type);

template <typename T>
constexpr ElementType element_type_of() {
  if constexpr (std::is_same_v<T, float>)
    return ElementType::float32;
  else if constexpr (std::is_same_v<T, double>)
    return ElementType::float64;
  else if constexpr (std::is_same_v<T, std::int8_t>)
    return ElementType::int8;
  else if constexpr (std::is_same_v<T, std::int16_t>)
    return ElementType::int16;
  else if constexpr (std::is_same_v<T, std::int32_t>)
    return ElementType::int32;
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return ElementType::int64;
  else if constexpr (std::is_same_v<T, std::uint8_t>)
    return ElementType::uint8;
  else if constexpr (std::is_same_v<T, std::uint16_t>)
    return ElementType::uint16;
  else if constexpr (std::is_same_v<T, std::uint32_t>)
    return ElementType::uint32;
  else {
    static_assert(std::is_same_v<T, std::uint64_t>, "not an element type of a tuning problem");
    return ElementType::uint64;
  }
}

// Problem sizes by name: {"W": 4096, "H": 4096}, each from 1 to max_problem_size.
using ProblemSizes = std::map<std::string, std::int64_t, std::less<>>;
inline constexpr std::int64_t max_problem_size = std::int64_t{1} << 62;
// "W=4096,H=4096" (each a whole number from 1 to 2^62). Throws Error (invalid_argument) naming
// the part at fault.
PTXRT_API ProblemSizes parse_problem_sizes(std::string_view text);
// "W=4096,H=4096".
PTXRT_API std::string format_problem_sizes(const ProblemSizes& sizes);

// Block and grid dimensions and dynamic shared memory bytes, each an expression.
struct PTXRT_API LaunchGeometry {
  std::array<Expression, 3> block{Expression::parse("1"), Expression::parse("1"),
                                  Expression::parse("1")};
  std::array<Expression, 3> grid{Expression::parse("1"), Expression::parse("1"),
                                 Expression::parse("1")};
  Expression shared_bytes = Expression::parse("0");

  // Up to three dimensions each (missing ones are 1). Throws Error (invalid_argument) for text
  // that does not parse.
  static LaunchGeometry of(const std::vector<std::string>& block,
                           const std::vector<std::string>& grid,
                           std::string_view shared_bytes = "0");
};

// A kernel of the problem's own file that makes a buffer's data on the GPU, once per session:
// compiled with the fixed defines and the fallback config, launched with its own geometry (which
// may read them) and given `arguments` by name (empty: the buffer alone), the buffers among them
// holding their data as made. Its entry is resolved as the problem's is.
struct PTXRT_API GeneratorKernel {
  std::string entry;
  LaunchGeometry geometry;
  std::vector<std::string> arguments;
};

// How the elements of a buffer or symbol start out. Random data is a function of the seed (a
// seed of 0 takes the argument's position instead, so that two arguments differ). Data made from
// other buffers (derived, kernel) is made after them; a cycle among them is an error.
struct PTXRT_API DataInit {
  enum class Kind { zeros, constant, iota, uniform, normal, file, derived, offsets, kernel };
  Kind kind = Kind::zeros;
  double value = 0.0;  // constant; iota's first element
  double step = 1.0;   // iota
  double low = 0.0;    // uniform in [low, high)
  double high = 1.0;
  double mean = 0.0;  // normal
  double deviation = 1.0;
  std::uint64_t seed = 0;      // uniform, normal
  std::filesystem::path file;  // raw little-endian elements: exactly count × element size bytes
  // derived: element i of the buffer argument `source` (at least as long) plus noise uniform in
  // [-noise, noise], then its absolute value when `absolute`.
  std::string source;
  double noise = 0.0;
  bool absolute = false;
  // offsets: integers non-decreasing from 0 to `total` (sizes and defines), the first 0 and the
  // last `total`, the steps between them random: a CSR matrix's row offsets.
  std::optional<Expression> total;
  GeneratorKernel kernel;  // kernel

  static DataInit zeros() { return {}; }
  static DataInit constant(double value);
  static DataInit iota(double first = 0.0, double step = 1.0);
  static DataInit uniform(double low, double high, std::uint64_t seed = 0);
  static DataInit normal(double mean, double deviation, std::uint64_t seed = 0);
  static DataInit from_file(std::filesystem::path file);
  static DataInit derived(std::string source, double noise = 0.0, std::uint64_t seed = 0);
  static DataInit absolute_of(std::string source, double noise = 0.0, std::uint64_t seed = 0);
  // Throws Error (invalid_argument) for `total` text that does not parse.
  static DataInit offsets(std::string_view total, std::uint64_t seed = 0);
  static DataInit generated(GeneratorKernel kernel);

  // Whether this start can fill elements of `type`, and if not why: the standard distributions
  // are undefined for an empty range or a deviation of 0, and C's conversion of a value outside
  // an integer type's range ("uniform needs low <= high, got low 5 and high 1"); offsets are
  // integers, noise is finite and 0 or more.
  Verdict suits(ElementType type) const;
};

enum class ArgumentRole { input, output, input_output };

// One kernel argument, in the kernel's order: a device buffer (passed as its address) or a
// scalar (passed by value, element_bytes(type) bytes).
struct PTXRT_API ProblemArgument {
  enum class Kind { buffer, scalar };
  std::string name;
  Kind kind = Kind::buffer;
  ElementType type = ElementType::float32;
  // Buffer: how many elements (over sizes and fixed defines: buffers do not change with the
  // config), their start, and whether the kernel writes it: an output is poisoned before every
  // verified run and compared with the reference.
  std::optional<Expression> count;
  DataInit init;
  ArgumentRole role = ArgumentRole::input;
  // Scalar: an integer expression (which may read the tunables), or a number as written
  // ("0.5"), converted to the type.
  std::optional<Expression> value;
  std::optional<double> number;

  bool is_output() const noexcept { return kind == Kind::buffer && role != ArgumentRole::input; }
};

// A __constant__ or __device__ variable filled before each config runs: with a buffer argument's
// initial data (from_argument), or with data of its own (type, count, init).
struct PTXRT_API ProblemSymbol {
  std::string name;  // as the source names it; namespaces allowed ("filters::taps")
  std::string from_argument;
  ElementType type = ElementType::float32;
  std::optional<Expression> count;
  DataInit init;
};

// Host copies of a problem's buffers by argument name (and of symbols with data of their own,
// by symbol name): given to a reference callback with the inputs made and the outputs zeroed,
// which it fills with the expected values.
class PTXRT_API ProblemData {
 public:
  struct Array {
    std::string name;
    ElementType type = ElementType::float32;
    std::vector<std::byte> bytes;
    std::size_t count() const noexcept { return bytes.size() / element_bytes(type); }
  };

  const Array& at(std::string_view name) const;  // Error (not_found) listing the names
  Array& at(std::string_view name);
  // The elements of `name` as T, which must be its type (Error (invalid_argument) naming both).
  // A view into data that outlives it: never of a temporary ProblemData.
  template <typename T>
  std::span<T> span(std::string_view name) & {
    Array& array = checked<T>(name);
    return {reinterpret_cast<T*>(array.bytes.data()), array.count()};
  }
  template <typename T>
  std::span<const T> span(std::string_view name) const& {
    const Array& array = const_cast<ProblemData*>(this)->checked<T>(name);
    return {reinterpret_cast<const T*>(array.bytes.data()), array.count()};
  }
  template <typename T>
  std::span<const T> span(std::string_view name) const&& = delete;

  std::vector<Array> arrays;

 private:
  template <typename T>
  Array& checked(std::string_view name) {
    Array& array = at(name);
    if (array.type != element_type_of<T>()) throw_type_mismatch(array, element_type_of<T>());
    return array;
  }
  [[noreturn]] static void throw_type_mismatch(const Array& array, ElementType asked);
};

// A reference computed on the CPU from host copies of the data.
using ReferenceCallback = std::function<void(ProblemData& data)>;

// A problem's data on the GPU as its C++ callbacks see it: the session's device buffers by
// argument name (each exactly its count × element size bytes), in `context()`, at `sizes()`, with
// the Jit the session compiles through. Work goes on the legacy default stream, where the
// session's events time it, or is finished before the callback returns. A view, valid while the
// session that made it lives (a launcher's runner may keep it).
class PTXRT_API ProblemDevice {
 public:
  ProblemDevice(Jit& jit, const Context& context, const ProblemSizes& sizes,
                std::vector<std::pair<std::string_view, DeviceRange*>> buffers);

  Jit& jit() const noexcept { return *jit_; }
  const Context& context() const noexcept { return *context_; }
  const ProblemSizes& sizes() const noexcept { return *sizes_; }
  // The size `name` (Error (not_found) listing the sizes).
  std::int64_t size(std::string_view name) const;
  // The buffer argument `name` (Error (not_found) listing the buffers).
  DeviceRange& buffer(std::string_view name) const;

 private:
  Jit* jit_;
  const Context* context_;
  const ProblemSizes* sizes_;
  std::vector<std::pair<std::string_view, DeviceRange*>> buffers_;
};

// A reference computed on the GPU, or on the CPU from downloads (a choice it makes by size): it
// gets the inputs as made and the outputs poisoned, writes the expected outputs into the output
// buffers, and returns what it is, for messages ("cuBLAS").
using DeviceReferenceCallback = std::function<std::string(const ProblemDevice& device)>;

// Runs `config` for a problem that is not one launch of its entry with its argument list (several
// kernels, a reduction after a split, a host-driven algorithm): it compiles what it needs
// through the Jit (cached per context) and computes the outputs from the inputs. The session
// verifies its outputs and times it as it times a launch. Throws as the runtime does.
using ConfigRunner = std::function<void(const TuningConfig& config)>;
// Makes a session's runner, once, on its data with the inputs as made: what the runs share (a
// workspace, what it learns from the inputs) lives in it.
using ProblemLauncher = std::function<ConfigRunner(const ProblemDevice& device)>;

// A library that computes the same outputs (cuBLAS for a product): what it is and one run of it.
struct PTXRT_API ProblemPeerRun {
  std::string description;  // "cuBLAS SGEMM (libcublas.so.12)"
  std::function<void()> run;
};
// Makes the peer on the session's data, or nothing when there is none here (no cuBLAS found).
using ProblemPeer = std::function<std::optional<ProblemPeerRun>(const ProblemDevice& device)>;

// The configs a tune times first at `sizes` (TuneOptions::first), best first: a heuristic's
// picks, so that a short tune starts from what runs untuned. The first is what runs untuned
// (problem_untuned_config), even where the space does not hold it.
using ProblemFirstConfigs = std::function<std::vector<TuningConfig>(const ProblemSizes& sizes)>;

// A constraint the expressions cannot say (a C++ model of the kernel, of the device): whether
// `config` is allowed at `sizes`, and if not why.
using ProblemConstraint =
    std::function<Verdict(const TuningConfig& config, const ProblemSizes& sizes)>;

// The reference kernel: in the problem's file or another, with a geometry of its own, compiled
// with the problem's fixed defines, the default config and `defines` (which win), and given
// `arguments` (argument names, in its order; empty: the problem's own list).
struct PTXRT_API ReferenceKernel {
  std::string entry;
  std::optional<Program> program;
  LaunchGeometry geometry;
  std::vector<std::pair<std::string, Expression>> defines;
  std::vector<std::string> arguments;
};

// A check of what an output means rather than its layout (a kernel writing one partial result per
// block): the aggregate of its first `length` elements (an expression of sizes, defines and
// tunables; none: all of them) against `expected` (an expression, or `expected_number`), else
// against the same aggregate of the reference's output, whose length is evaluated at the
// reference's config (the reference config, the reference kernel's defines, otherwise the
// fallback config). Passes when |actual - expected| <= atol + rtol × |expected| (NaN never
// does); the tolerances default to the verification's.
enum class Aggregate { sum, min, max, count };  // count: the elements that are not 0
PTXRT_API std::string_view to_string(Aggregate aggregate);

struct PTXRT_API OutputAggregate {
  std::string output;
  Aggregate aggregate = Aggregate::sum;
  std::optional<Expression> length;
  std::optional<Expression> expected;
  std::optional<double> expected_number;
  std::optional<double> atol;
  std::optional<double> rtol;
};

// A kernel of the problem's own file that judges a config's output after each verified run,
// compiled with that config: given `arguments` by name (the problem's arguments as the config
// left them, and "reference.NAME" for the reference's output NAME), then an int* verdict and a
// float* error, both 0 before it runs. A verdict other than 0 makes the config wrong, the error
// in the detail.
struct PTXRT_API CheckKernel {
  std::string entry;
  LaunchGeometry geometry;
  std::vector<std::string> arguments;
};

struct PTXRT_API ProblemVerification {
  enum class Kind { none, reference_kernel, reference_config, files, callback, device_callback };
  // What rtol multiplies: each element's |expected| (numpy's allclose), or the largest |expected|
  // of the element's output (a product's rounding error grows with its largest elements, not
  // with the one compared, which may be near 0).
  enum class RelativeTo { element, largest };
  Kind kind = Kind::none;
  ReferenceKernel kernel;                                            // reference_kernel
  TuningConfig config;                                               // reference_config
  std::vector<std::pair<std::string, std::filesystem::path>> files;  // output name → data
  ReferenceCallback callback;                                        // callback
  DeviceReferenceCallback device_callback;                           // device_callback
  // An element passes when |actual - expected| <= atol + rtol × |expected| (NaN never does).
  double atol = 1e-6;
  double rtol = 1e-5;
  RelativeTo relative_to = RelativeTo::element;
  // Outputs named by an aggregate or by the check kernel's arguments are checked by them alone,
  // not element by element.
  std::vector<OutputAggregate> aggregates;
  std::optional<CheckKernel> check;

  // Whether an output is compared element by element with the reference's.
  bool compares_elements_of(std::string_view output) const;
};

// The work one run does, for the rate: flops → GFLOP/s, bytes → GB/s, or any unit.
struct PTXRT_API ProblemRate {
  Expression work = Expression::parse("0");
  std::string unit;         // "GFLOP/s"; empty: no rate
  double unit_scale = 1e9;  // work per second is divided by it
};

// A figure of merit of each timed config (Measurement::metrics), which a tune may choose its
// winner by: `work` (an expression of the sizes and tunables) per `per`, over `scale`. GFLOP/s is
// 2*M*N*K per time_s over 1e9; GFLOP/J the same per energy_j.
struct PTXRT_API ProblemMetric {
  enum class Per { time_s, time_ms, energy_j, power_w };  // energy and power: observed (NVML)
  std::string name;
  Expression work = Expression::parse("0");
  Per per = Per::time_s;
  double scale = 1.0;
  bool maximize = true;  // higher is better, as for any work per second or per joule

  bool needs_power() const noexcept { return per == Per::energy_j || per == Per::power_w; }
};
PTXRT_API std::string_view to_string(ProblemMetric::Per per);  // "time_s", "energy_j", ...

class KernelProblem;
// The most bytes a problem's buffers and symbols may take together where no device says how much
// memory it has (a dry run plans for a device model): 256 GiB, more than any GPU holds.
inline constexpr std::uint64_t max_problem_data_bytes = std::uint64_t{256} << 30;
// Checks the data of `problem` at `sizes` (complete) without making any: every buffer's and
// symbol's count from 1 up, its bytes (count × element size, overflow-checked) and all of them
// together within `memory_bytes` (a device's memory; max_problem_data_bytes when none is known),
// and every data file (inputs and the expected outputs of verify.files) a regular file of exactly
// its bytes. Throws Error (invalid_argument) naming the problem file and the field, Error (io)
// for a data file that is missing, not a regular file or unreadable.
PTXRT_API void check_problem_data(const KernelProblem& problem, const ProblemSizes& sizes,
                                  std::uint64_t memory_bytes = max_problem_data_bytes);
// The data of every buffer argument (by its name) and of every symbol with data of its own (by
// the symbol's name), made as their DataInit says at `sizes` (complete), after the checks of
// check_problem_data. Integer elements of a normal or iota start saturate at their type's range.
PTXRT_API ProblemData make_problem_data(const KernelProblem& problem, const ProblemSizes& sizes,
                                        std::uint64_t memory_bytes = max_problem_data_bytes);
// The expected outputs of a problem verified against data files, by output name; each file must
// hold exactly its output's bytes (the errors of check_problem_data).
PTXRT_API ProblemData read_expected_files(const KernelProblem& problem, const ProblemSizes& sizes);

// Programs an application knows by name (the CLI: ptxrt's builtin kernels), for a problem file's
// "builtin" field: the program, or nothing for a name it does not know. Called from the reading
// thread; must not throw for an unknown name.
using ProgramsByName = std::function<std::optional<Program>(std::string_view name)>;

class PTXRT_API KernelProblem {
 public:
  // `entry`: the kernel as its source names it: an extern "C" name, a C++ name (with its
  // namespaces), or a template instantiation ("scale<float, 4>"); it is resolved through NVRTC
  // name expressions, so overloads must be told apart as C++ would ("(void(*)(float*))scale").
  KernelProblem(Program program, std::string entry);

  // A JSON problem file (docs/tuning.md lists its fields) for the kernel in `kernel_file`;
  // relative data files are found beside the problem file. Throws Error (invalid_argument)
  // naming the file with line and column for text that is not JSON, and the field for a wrong
  // value; Error (io) for a file that cannot be read.
  static KernelProblem from_file(const std::filesystem::path& problem_file,
                                 const std::filesystem::path& kernel_file);
  // The same from text; `origin` names it in messages, `base_directory` serves relative paths.
  // Without `program`, the text's "source" (a path), "source_text" or "builtin" names it; a
  // "builtin" is found through `programs_by_name` (without it, refused naming the field).
  static KernelProblem from_json(std::string_view text, std::optional<Program> program,
                                 std::string_view origin,
                                 const std::filesystem::path& base_directory,
                                 const ProgramsByName& programs_by_name = {});
  // The problem of the kernel file's "// ptxrt: problem" lines (messages give the file's line
  // numbers); without a "tune" field its space is the manifest's tune and constraint lines.
  // Throws Error (not_found) when the file has no such lines.
  static KernelProblem from_manifest(Program program);
  // The problem file's JSON for this problem, which from_json reads back the same; the program
  // goes by name when `programs_by_name` gives this very program for its name, as its path when
  // it was read from a file, else as its source text. Throws Error (invalid_argument) for a
  // problem with a reference callback.
  std::string to_json(const ProgramsByName& programs_by_name = {}) const;

  // The builder. Each returns *this; expression text is parsed at once (Error naming it).
  KernelProblem& name(std::string name);
  KernelProblem& size(std::string name, std::optional<std::int64_t> default_value = std::nullopt);
  KernelProblem& tune(std::string name, std::vector<std::int64_t> values,
                      std::optional<std::int64_t> default_value = std::nullopt);
  KernelProblem& constraint(std::string_view expression);
  // A fixed compile-time constant, an expression of the sizes ("W", "17"): -D NAME=value.
  KernelProblem& define(std::string name, std::string_view expression);
  KernelProblem& compile_option(std::string option);  // as CompileOptions::extra_options
  KernelProblem& block(std::string_view x, std::string_view y = "1", std::string_view z = "1");
  KernelProblem& grid(std::string_view x, std::string_view y = "1", std::string_view z = "1");
  // Kernel Tuner's grid_div: grid dimension d = ceil_div(extents[d], product of divisors[d]),
  // e.g. grid_divide({"W", "H"}, {{"block_size_x", "tile_size_x"}, {"block_size_y"}}).
  KernelProblem& grid_divide(const std::vector<std::string>& extents,
                             const std::vector<std::vector<std::string>>& divisors);
  KernelProblem& shared_memory(std::string_view bytes);
  KernelProblem& buffer(std::string name, ElementType type, std::string_view count,
                        DataInit init = DataInit::zeros(), ArgumentRole role = ArgumentRole::input);
  KernelProblem& scalar(std::string name, ElementType type, std::string_view value);
  KernelProblem& scalar(std::string name, ElementType type, double number);
  KernelProblem& symbol(std::string name, std::string from_argument);
  KernelProblem& symbol(std::string name, ElementType type, std::string_view count, DataInit init);
  KernelProblem& verify_with_kernel(ReferenceKernel reference);
  KernelProblem& verify_with_config(TuningConfig config);
  KernelProblem& verify_with_files(
      std::vector<std::pair<std::string, std::filesystem::path>> files);
  KernelProblem& verify_with(ReferenceCallback callback);
  KernelProblem& verify_on_device(DeviceReferenceCallback callback);
  KernelProblem& tolerance(
      double atol, double rtol,
      ProblemVerification::RelativeTo relative_to = ProblemVerification::RelativeTo::element);
  KernelProblem& aggregate(OutputAggregate check);
  KernelProblem& check_with_kernel(CheckKernel check);
  KernelProblem& flops(std::string_view work);  // GFLOP/s
  KernelProblem& bytes(std::string_view work);  // GB/s
  KernelProblem& rate(std::string_view work, std::string unit, double unit_scale);
  // Error (invalid_argument) for a name already taken (or time, energy, power) or a scale that is
  // not a finite number above 0.
  KernelProblem& metric(ProblemMetric metric);
  // The program manifest's tune lines as tunables and its constraint lines as constraints.
  KernelProblem& tune_from_manifest();

  // The C++ hooks, for what the description cannot say; a problem with any of them has no JSON
  // form, so a tune isolates its configs in workers only where the worker can rebuild it by
  // name (serve_tune_worker's resolver). Copies of the problem share the callbacks, which must
  // then be thread-safe.
  //
  // A constraint of the space, after the expressions; `description` names it in the space's
  // description (and so in the database key) and in what it prunes.
  KernelProblem& constraint(std::string description, ProblemConstraint check);
  // Runs each config instead of one launch of the entry. The entry is then what the tuner
  // compiles and checks the resources of for a config's geometry (the block and shared memory
  // of its main kernel); the arguments are the data the launcher gets, not the entry's
  // parameter list (which is not checked against them).
  KernelProblem& launch_with(ProblemLauncher launcher);
  // The peer a tune's report compares the winner with, timed on the same data.
  KernelProblem& peer(ProblemPeer peer);
  // What a tune times first (problem_first_configs). Only the tuning process asks for them, so
  // unlike the hooks above this one does not keep a problem from its workers.
  KernelProblem& try_first(ProblemFirstConfigs suggest);
  // Keys the tuning database by the source alone (source_hash of the program), not by the
  // description as well: for a problem whose name fixes its description (ptxrt's builtins),
  // whose tunes were recorded under that key.
  KernelProblem& key_by_source();

  // Every expression names only what it may (sizes, defines, tunables, functions), every
  // argument and symbol name is unique and refers to what exists, the values are usable. Called
  // by the readers; call it after building. Throws Error (invalid_argument) naming the field.
  void validate() const;

  const std::string& name() const noexcept { return name_; }
  // What messages name first: the problem file ("p.json"), the kernel file of the manifest
  // lines, or for a built problem its program and name ("k.cu (scale)").
  std::string origin() const;
  const Program& program() const noexcept { return program_; }
  const std::string& entry() const noexcept { return entry_; }
  const std::vector<std::pair<std::string, std::optional<std::int64_t>>>& sizes() const noexcept {
    return sizes_;
  }
  const std::vector<TuningParameter>& tunables() const noexcept { return tunables_; }
  const std::vector<Expression>& constraints() const noexcept { return constraints_; }
  const std::vector<std::pair<std::string, Expression>>& defines() const noexcept {
    return defines_;
  }
  const std::vector<std::string>& compile_options() const noexcept { return compile_options_; }
  const LaunchGeometry& geometry() const noexcept { return geometry_; }
  const std::vector<ProblemArgument>& arguments() const noexcept { return arguments_; }
  const std::vector<ProblemSymbol>& symbols() const noexcept { return symbols_; }
  const ProblemVerification& verification() const noexcept { return verification_; }
  const ProblemRate& rate() const noexcept { return rate_; }
  const std::vector<ProblemMetric>& metrics() const noexcept { return metrics_; }
  const ProblemLauncher& launcher() const noexcept { return launcher_; }
  const ProblemPeer& peer() const noexcept { return peer_; }
  const ProblemFirstConfigs& first_configs() const noexcept { return first_configs_; }
  const std::vector<std::pair<std::string, ProblemConstraint>>& checks() const noexcept {
    return checks_;
  }
  // Whether the whole problem is data (no C++ hook): then its JSON form can go to a worker.
  bool is_declarative() const noexcept;

  // `given` completed with the declared defaults. Throws Error (invalid_argument) for a size
  // that is neither given nor defaulted, or one the problem does not declare.
  ProblemSizes complete_sizes(const ProblemSizes& given) const;
  // The sizes' values in declared order: the tuning database's size.
  std::vector<std::int64_t> size_values(const ProblemSizes& sizes) const;
  // The space at `sizes`: the tunables and constraints, which may read the sizes and defines.
  TuningSpace space_at(const ProblemSizes& sizes) const;
  // Each tunable at its declared default (else its first value).
  TuningConfig default_config() const;
  // The default config, or, when the constraints at `sizes` rule it out, the first config they
  // allow: what runs untuned. Throws Error (invalid_argument) when they allow none.
  TuningConfig fallback_config(const ProblemSizes& sizes) const;
  // The fixed defines' values at `sizes`, and the entry as a name expression: the options every
  // config is compiled with (its own defines added).
  CompileOptions compile_options_at(const ProblemSizes& sizes) const;
  // How the reference kernel is compiled at `sizes`: the fixed defines and the fallback config,
  // each overridden by the reference's own defines; its entry (and, in the problem's own file,
  // the symbols) as name expressions. `values` are the defines its geometry may read.
  struct ReferenceBuild {
    CompileOptions options;
    TuningConfig values;
  };
  ReferenceBuild reference_build_at(const ProblemSizes& sizes) const;
  // The value of `expression` at `sizes` and `config`; Error (invalid_argument) naming `field`.
  std::int64_t evaluate(const Expression& expression, const ProblemSizes& sizes,
                        const TuningConfig& config, std::string_view field) const;
  // The launch `config` gets at `sizes`. Throws Error (invalid_argument) naming the config for
  // a dimension that is not from 1 to 2^32-1 or negative shared memory.
  LaunchConfig launch_at(const TuningConfig& config, const ProblemSizes& sizes) const;
  // The same for another geometry (a reference kernel's); `field` prefixes its fields' names.
  LaunchConfig launch_at(const LaunchGeometry& geometry, const TuningConfig& config,
                         const ProblemSizes& sizes, std::string_view field = "") const;
  // The byte size of each argument as passed (8 for a buffer's address).
  std::vector<std::size_t> argument_bytes() const;
  // SHA-256 (hex) of the kernel source and what of the description decides speed (entry,
  // defines, options, geometry, arguments, symbols): a tuning database key's source hash. With
  // key_by_source, source_hash(program()).
  std::string key_hash() const;

 private:
  KernelProblem& set_rate(std::string field, std::string_view work, std::string unit,
                          double unit_scale);

  std::string name_;
  Program program_;
  std::string entry_;
  std::vector<std::pair<std::string, std::optional<std::int64_t>>> sizes_;
  std::vector<TuningParameter> tunables_;
  std::vector<Expression> constraints_;
  std::vector<std::pair<std::string, Expression>> defines_;
  std::vector<std::string> compile_options_;
  LaunchGeometry geometry_;
  // What grid_divide built the grid from, by the field that gave each part ("grid_div_x[1]"), so
  // that a name error quotes the part as written.
  std::vector<std::pair<std::string, Expression>> grid_divide_parts_;
  std::vector<ProblemArgument> arguments_;
  std::vector<ProblemSymbol> symbols_;
  ProblemVerification verification_;
  ProblemRate rate_;
  std::vector<ProblemMetric> metrics_;
  std::vector<std::pair<std::string, ProblemConstraint>> checks_;
  ProblemLauncher launcher_;
  ProblemPeer peer_;
  ProblemFirstConfigs first_configs_;
  bool key_by_source_ = false;
  std::string rate_field_ = "rate.work";  // flops, bytes or rate.work: where the work was given
  std::string origin_;  // what messages name: the problem file, or the kernel file's manifest
};

}  // namespace ptxrt
