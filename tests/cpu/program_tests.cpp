#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <stop_token>
#include <string>
#include <vector>

#include "error_checks.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/program.hpp"
#include "ptxrt/core/target.hpp"

using ptxrt::testing::contains;

namespace {

const std::filesystem::path data_folder = std::filesystem::path(PTXRT_SOURCE_DIR) / "tests/data";

ptxrt::CompileOptions options_for(const std::string& arch,
                                  ptxrt::ImageFormat format = ptxrt::ImageFormat::cubin) {
  ptxrt::CompileOptions options;
  options.target = {arch, format, {}};
  return options;
}

ptxrt::Error compile_error(const ptxrt::Program& program, const ptxrt::CompileOptions& options) {
  try {
    ptxrt::compile(program, options);
  } catch (const ptxrt::Error& error) {
    return error;
  }
  FAIL("expected compile() to throw");
  return ptxrt::Error(ptxrt::ErrorKind::compile, "unreachable");
}

// A scratch folder, removed at the end of the test.
struct TemporaryFolder {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("ptxrt_program_tests_" + std::to_string(::getpid()));
  TemporaryFolder() { std::filesystem::create_directories(path); }
  ~TemporaryFolder() { std::filesystem::remove_all(path); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name, std::ios::binary) << text;
  }
};

}  // namespace

TEST_CASE("a kernel compiles to CUBIN and to PTX for every architecture NVRTC supports from sm_75") {
  ptxrt::Program program = ptxrt::Program::from_file(data_folder / "kernels/scale.cu");
  for (int sm : ptxrt::supported_architectures()) {
    if (sm < 75) continue;
    CAPTURE(sm);
    ptxrt::Image cubin = ptxrt::compile(program, options_for("sm_" + std::to_string(sm)));
    CHECK(cubin.format == ptxrt::ImageFormat::cubin);
    CHECK(cubin.arch == "sm_" + std::to_string(sm));
    CHECK(ptxrt::cubin_sm_version(cubin.data) == sm);
    CHECK(contains(cubin.compile_log, "ptxas info    : Used"));  // -Xptxas -v by default

    ptxrt::Image ptx = ptxrt::compile(
        program, options_for("compute_" + std::to_string(sm), ptxrt::ImageFormat::ptx));
    CHECK(contains(ptx.data, "\n.target sm_" + std::to_string(sm) + "\n"));
    CHECK(contains(ptx.data, ".entry scale("));
    CHECK(ptx.data.back() != '\0');
  }
}

TEST_CASE("compile records what it built: name, defines with defaults, options, versions, key") {
  ptxrt::Program program = ptxrt::Program::from_file(data_folder / "kernels/scale.cu");
  ptxrt::CompileOptions options = options_for("sm_90");
  options.extra_options = {"--use_fast_math", "-Xptxas -dlcm=cg"};
  ptxrt::Image image = ptxrt::compile(program, options, 13000);
  CHECK(image.name == "scale.cu");
  CHECK(image.defines == std::vector<ptxrt::Define>{{"BLOCK", "128"}});
  CHECK(image.options.front() == "-arch=sm_90");
  CHECK(std::count(image.options.begin(), image.options.end(), "-DBLOCK=128") == 1);
  CHECK(std::count(image.options.begin(), image.options.end(), "--use_fast_math") == 1);
  CHECK(std::count(image.options.begin(), image.options.end(), "-dlcm=cg") == 1);
  CHECK(image.nvrtc_version == ptxrt::nvrtc_version());
  CHECK(image.key == ptxrt::cache_key(program, options, 13000));
  CHECK(image.key.size() == 64);
}

TEST_CASE("resource usage is reported for CUBIN by default and can be turned off") {
  ptxrt::Program program = ptxrt::Program::from_string("extern \"C\" __global__ void k() {}\n");
  ptxrt::CompileOptions options = options_for("sm_80");
  options.resource_usage = false;
  ptxrt::Image quiet = ptxrt::compile(program, options);
  CHECK_FALSE(contains(quiet.compile_log, "ptxas info"));
  CHECK(std::count(quiet.options.begin(), quiet.options.end(), "-v") == 0);
}

TEST_CASE("a compile whose stop is requested is cancelled and says so") {
  ptxrt::Program program =
      ptxrt::Program::from_string("extern \"C\" __global__ void k() {}\n", "stopped.cu");
  std::stop_source source;
  source.request_stop();
  ptxrt::CompileOptions options = options_for("sm_90");
  options.stop = source.get_token();
  const ptxrt::Error error = compile_error(program, options);
  CHECK(error.kind() == ptxrt::ErrorKind::compile);
  CHECK(error.code_name() == "NVRTC_ERROR_CANCELLED");
  CHECK(contains(error.what(), "compiling stopped.cu for sm_90"));
  CHECK(contains(error.what(), "was cancelled: its stop was requested"));
  // Without the stop the same compile succeeds.
  options.stop = {};
  CHECK_FALSE(ptxrt::compile(program, options).data.empty());
}

TEST_CASE("an invalid define value is rejected before NVRTC runs") {
  // The source does not compile; an invalid_argument (not compile) error proves NVRTC never ran.
  ptxrt::Program program = ptxrt::Program::from_string(
      "// ptxrt: define TILE_WIDTH in {4, 8, 16, 32} default 16\nthis is not C++\n",
      "matmul_tiled.cu");
  ptxrt::CompileOptions options = options_for("sm_90");
  options.defines = {{"TILE_WIDTH", "33"}};
  ptxrt::Error error = compile_error(program, options);
  CHECK(error.kind() == ptxrt::ErrorKind::invalid_argument);
  CHECK(std::string(error.what()) ==
        "TILE_WIDTH=33 is not valid for matmul_tiled.cu: expected one of 4, 8, 16, 32");
  CHECK_THROWS_WITH_AS(ptxrt::cache_key(program, options),
                       "TILE_WIDTH=33 is not valid for matmul_tiled.cu: expected one of 4, 8, 16, 32",
                       ptxrt::Error);
}

TEST_CASE("a missing required define is rejected before NVRTC runs") {
  ptxrt::Program program = ptxrt::Program::from_string(
      "// ptxrt: define TILE_WIDTH in {4, 8, 16, 32}\nthis is not C++\n", "matmul_tiled.cu");
  ptxrt::Error error = compile_error(program, options_for("sm_90"));
  CHECK(error.kind() == ptxrt::ErrorKind::invalid_argument);
  CHECK(std::string(error.what()) ==
        "TILE_WIDTH is required by matmul_tiled.cu (one of 4, 8, 16, 32)");
}

TEST_CASE("a compile error shows the original line with two lines of context, defines, options") {
  ptxrt::Program program = ptxrt::Program::from_string(
      "// ptxrt: define N in {1, 2} default 2\n"  // 1
      "// line 2\n"
      "// line 3\n"
      "extern \"C\" __global__ void broken(float* p) {\n"
      "  p[0] = undeclared_name * N;\n"  // 5
      "}\n"
      "// line 7\n"
      "// line 8\n",
      "broken.cu");
  ptxrt::Error error = compile_error(program, options_for("sm_90"));
  const std::string message = error.what();
  CHECK(error.kind() == ptxrt::ErrorKind::compile);
  CHECK(error.code_name() == "NVRTC_ERROR_COMPILATION");
  CHECK(message.starts_with("compiling broken.cu to CUBIN for sm_90 failed\n  defines: N=2\n"
                            "  options: -arch=sm_90 -DN=2 "));
  CHECK(contains(message, "broken.cu(5): error: identifier \"undeclared_name\" is undefined\n"
                          "    3 | // line 3\n"
                          "    4 | extern \"C\" __global__ void broken(float* p) {\n"
                          "  > 5 |   p[0] = undeclared_name * N;\n"
                          "      |          ^\n"
                          "    6 | }\n"
                          "    7 | // line 7\n"));
  CHECK_FALSE(contains(message, "// line 2"));  // context, not the whole source
  CHECK_FALSE(contains(message, "// line 8"));
}

TEST_CASE("a compile error inside an included header points into that header") {
  TemporaryFolder folder;
  folder.write("helper.cuh", "#pragma once\n__device__ float helper() {\n  return missing;\n}\n");
  folder.write("user.cu", "#include \"helper.cuh\"\nextern \"C\" __global__ void k() {}\n");
  ptxrt::Error error =
      compile_error(ptxrt::Program::from_file(folder.path / "user.cu"), options_for("sm_80"));
  const std::string message = error.what();
  CHECK(contains(message, "helper.cuh(3): error: identifier \"missing\" is undefined\n"));
  CHECK(contains(message, "  > 3 |   return missing;\n"));
}

TEST_CASE("quoted includes are found beside the file, along -I paths, and in named headers") {
  ptxrt::Program from_file = ptxrt::Program::from_file(data_folder / "kernels/scale.cu");
  CHECK_NOTHROW(ptxrt::compile(from_file, options_for("sm_80")));

  const std::string uses_offset =
      "#include \"offset.cuh\"\n"
      "extern \"C\" __global__ void shift(float* p) { p[0] = plus_offset(p[0]); }\n";
  ptxrt::CompileOptions with_include = options_for("sm_80");
  with_include.include_paths = {data_folder / "include"};
  CHECK_NOTHROW(ptxrt::compile(ptxrt::Program::from_string(uses_offset, "shift.cu"), with_include));
  CHECK(compile_error(ptxrt::Program::from_string(uses_offset, "shift.cu"), options_for("sm_80"))
            .kind() == ptxrt::ErrorKind::compile);

  ptxrt::Program named = ptxrt::Program::from_string(uses_offset, "shift.cu");
  named.add_header("offset.cuh", "__device__ float plus_offset(float v) { return v + 2.0f; }\n");
  CHECK_NOTHROW(ptxrt::compile(named, options_for("sm_80")));
}

TEST_CASE("the toolkit's device headers compile: cooperative groups, fp16, libcu++, CUB blocks") {
  ptxrt::Program program = ptxrt::Program::from_string(
      "#include <cooperative_groups.h>\n#include <cuda_fp16.h>\n#include <cuda/std/array>\n"
      "#include <cub/block/block_reduce.cuh>\n"
      "namespace cg = cooperative_groups;\n"
      "extern \"C\" __global__ void k(__half* out) {\n"
      "  cg::thread_block block = cg::this_thread_block();\n"
      "  cuda::std::array<float, 2> values{1.0f, 2.0f};\n"
      "  using Reduce = cub::BlockReduce<float, 128>;\n"
      "  __shared__ typename Reduce::TempStorage storage;\n"
      "  const float sum = Reduce(storage).Sum(values[1]);\n"
      "  block.sync();\n"
      "  out[block.thread_rank()] = __float2half(values[1] + sum);\n"
      "}\n");
  CHECK_NOTHROW(ptxrt::compile(program, options_for("compute_80", ptxrt::ImageFormat::ptx)));
}

namespace {

struct HeaderUse {
  const char* header;
  const char* use;  // an expression that needs the header
};

void check_headers_compile(std::initializer_list<HeaderUse> uses) {
  for (const HeaderUse& test : uses) {
    CAPTURE(test.header);
    ptxrt::Program program = ptxrt::Program::from_string(
        std::string("#include <") + test.header +
        ">\nextern \"C\" __global__ void k(double* out, float value) { out[0] = " + test.use +
        "; }\n");
    CHECK_NOTHROW(ptxrt::compile(program, options_for("compute_80", ptxrt::ImageFormat::ptx)));
  }
}

}  // namespace

// Three cases, each a few seconds of NVRTC, so that CTest can run them side by side.
TEST_CASE("the C standard headers kernel files include compile under NVRTC") {
  check_headers_compile({
      {"cstdint", "std::uint32_t(1) + ::int64_t(2) + UINT32_MAX"},
      {"stdint.h", "uint8_t(1) + INT32_MAX"},
      {"cstddef", "sizeof(std::size_t) + std::ptrdiff_t(1) + offsetof(float2, y)"},
      {"stddef.h", "sizeof(size_t) + ptrdiff_t(1)"},
      {"climits", "INT_MAX + CHAR_BIT"},
      {"limits.h", "INT_MIN + LLONG_MAX"},
      {"cfloat", "FLT_MAX + FLT_EPSILON + DBL_MIN"},
      {"float.h", "FLT_MIN + DBL_EPSILON + FLT_MANT_DIG"},
      {"cmath", "std::sqrt(2.0f) + std::fabs(-1.0) + std::isnan(1.0f) + HUGE_VALF"},
      {"math.h", "sqrtf(2.0f) + expf(1.0f) + INFINITY + HUGE_VAL"},
      {"cassert", "(assert(value > 0), 1)"},
      {"assert.h", "(assert(value > 0), 1)"},
      {"cstdio", "std::printf(\"%f\\n\", value) + printf(\"\\n\")"},
      {"stdio.h", "printf(\"%d\\n\", 1)"},
      {"cstdlib", "std::abs(-3) + std::div(7, 2).quot + abs(-1)"},
      {"stdlib.h", "abs(-3) + (malloc(0) == nullptr)"},
      {"cstring", "(std::memcpy(out, out + 1, 0), 1) + (std::memset(out, 0, 0), 1)"},
      {"string.h", "(memset(out, 0, 0), 1)"},
  });
}

TEST_CASE(
    "the C++ standard headers kernel files include compile under NVRTC: from type_traits to "
    "iterator") {
  check_headers_compile({
      {"type_traits", "std::is_same_v<float, std::remove_cv_t<const float>>"},
      {"limits", "std::numeric_limits<float>::max() + std::numeric_limits<int>::lowest()"},
      {"utility", "std::pair<int, float>(1, 2.0f).second + std::move(1)"},
      {"algorithm",
       "std::min(value, 1.0f) + std::max(1, 2) + std::clamp(value, 0.0f, 1.0f) + "
       "*std::max_element(out, out + 2) + std::min({1, 2, 3}) + std::count(out, out + 2, 0.0) + "
       "*std::lower_bound(out, out + 2, 1.0) + std::all_of(out, out + 2, [](double x) { "
       "return x > 0; })"},
      {"array", "std::array<float, 3>{1, 2, 3}[2] + std::size(std::array<int, 2>{})"},
      {"bit", "std::popcount(7u) + std::bit_cast<unsigned>(value) + std::countl_zero(1u)"},
      {"complex", "std::abs(std::complex<float>(3, 4)) + std::norm(std::complex<double>(1, 1))"},
      {"functional", "std::plus<float>()(1, 2) + std::less<int>()(1, 2)"},
      {"initializer_list", "std::initializer_list<int>{1, 2, 3}.size()"},
      {"iterator", "std::distance(out, out + 3) + *std::next(out, 0)"},
  });
}

TEST_CASE(
    "the C++ standard headers kernel files include compile under NVRTC: from numeric to "
    "memory") {
  check_headers_compile({
      {"numeric", "std::gcd(12, 18) + std::midpoint(1, 3)"},
      {"optional", "std::optional<float>(value).value_or(2.0f)"},
      {"span", "std::span<double>(out, 2).size()"},
      {"tuple", "std::get<1>(std::make_tuple(1, 2.0f))"},
      {"atomic", "std::atomic_ref<double>(out[1]).fetch_add(1.0)"},
      {"concepts", "std::integral<int> + std::floating_point<float>"},
      {"variant", "std::get<float>(std::variant<int, float>(value))"},
      {"numbers", "std::numbers::pi + std::numbers::e_v<float>"},
      {"memory", "*std::addressof(out[0])"},
  });
}

TEST_CASE("a host-only standard header is a compile error that lists the device-side ones") {
  ptxrt::Program host_only = ptxrt::Program::from_string(
      "#include <vector>\nextern \"C\" __global__ void k() {}\n", "host_only.cu");
  const ptxrt::Error error = compile_error(host_only, options_for("sm_90"));
  const std::string message = error.what();
  CHECK(error.kind() == ptxrt::ErrorKind::compile);
  CHECK(contains(message, "cannot open source file \"vector\""));
  CHECK(contains(message, "note: <vector> is not among the standard headers ptxrt gives NVRTC"));
  CHECK(contains(message, " cstdint "));
  CHECK(contains(message, " algorithm"));

  // A quoted header of the user's own is theirs to find: no note about the standard ones.
  ptxrt::Program own = ptxrt::Program::from_string(
      "#include \"missing_helper.h\"\nextern \"C\" __global__ void k() {}\n", "own.cu");
  const std::string own_message = compile_error(own, options_for("sm_90")).what();
  CHECK(contains(own_message, "cannot open source file \"missing_helper.h\""));
  CHECK_FALSE(contains(own_message, "note:"));
}

TEST_CASE("name expressions give the lowered names of template instantiations") {
  ptxrt::Program program = ptxrt::Program::from_string(
      "template <typename T, int N> __global__ void fill(T* p) { p[N] = T(N); }\n");
  ptxrt::CompileOptions options = options_for("sm_80");
  options.name_expressions = {"fill<float, 4>", "fill<int, 2>"};
  ptxrt::Image image = ptxrt::compile(program, options);
  REQUIRE(image.lowered_names.size() == 2);
  CHECK(image.lowered_names[0] ==
        std::pair<std::string, std::string>{"fill<float, 4>", "_Z4fillIfLi4EEvPT_"});
  CHECK(image.lowered_names[1] ==
        std::pair<std::string, std::string>{"fill<int, 2>", "_Z4fillIiLi2EEvPT_"});
}

TEST_CASE("a CUBIN for a virtual architecture, no target, or a bad option is invalid_argument") {
  ptxrt::Program program = ptxrt::Program::from_string("extern \"C\" __global__ void k() {}\n");
  ptxrt::Error virtual_arch = compile_error(program, options_for("compute_90"));
  CHECK(virtual_arch.kind() == ptxrt::ErrorKind::invalid_argument);
  CHECK(std::string(virtual_arch.what()) ==
        "a CUBIN needs a real architecture (sm_XY), not compute_90, for program.cu: ask for PTX, "
        "or for sm_90");
  CHECK(compile_error(program, options_for("")).kind() == ptxrt::ErrorKind::invalid_argument);
  ptxrt::CompileOptions bogus = options_for("sm_90");
  bogus.extra_options = {"--no-such-option"};
  ptxrt::Error error = compile_error(program, bogus);
  CHECK(error.kind() == ptxrt::ErrorKind::invalid_argument);
  CHECK(contains(error.what(), "unrecognized option --no-such-option"));
}

TEST_CASE("an unreadable kernel file is an io error") {
  CHECK_THROWS_AS(ptxrt::Program::from_file(data_folder / "no_such_file.cu"), ptxrt::Error);
}

TEST_CASE("cache_key changes when an included header changes") {
  TemporaryFolder folder;
  folder.write("inner.cuh", "#define VALUE 1\n");
  folder.write("outer.cuh", "#include \"inner.cuh\"\n");
  folder.write("main.cu", "#include \"outer.cuh\"\nextern \"C\" __global__ void k() {}\n");
  ptxrt::CompileOptions options = options_for("sm_90");
  const std::string before = ptxrt::cache_key(ptxrt::Program::from_file(folder.path / "main.cu"), options);
  CHECK(before == ptxrt::cache_key(ptxrt::Program::from_file(folder.path / "main.cu"), options));
  folder.write("inner.cuh", "#define VALUE 2\n");
  CHECK(before != ptxrt::cache_key(ptxrt::Program::from_file(folder.path / "main.cu"), options));
}

TEST_CASE("cache_key covers named headers, defines, options, arch and, for PTX, the driver") {
  ptxrt::Program program = ptxrt::Program::from_string(
      "// ptxrt: define N in {1, 2} default 1\n#include \"named.cuh\"\n");
  program.add_header("named.cuh", "// one\n");
  ptxrt::CompileOptions options = options_for("sm_90");
  const std::string key = ptxrt::cache_key(program, options);

  ptxrt::Program edited = program;
  edited.add_header("named.cuh", "// two\n");
  CHECK(ptxrt::cache_key(edited, options) != key);

  ptxrt::CompileOptions explicit_default = options;
  explicit_default.defines = {{"N", "1"}};
  CHECK(ptxrt::cache_key(program, explicit_default) == key);
  ptxrt::CompileOptions other_value = options;
  other_value.defines = {{"N", "2"}};
  CHECK(ptxrt::cache_key(program, other_value) != key);

  ptxrt::CompileOptions sorted = options;
  sorted.defines = {{"A", "1"}, {"B", "2"}};
  ptxrt::CompileOptions reversed = options;
  reversed.defines = {{"B", "2"}, {"A", "1"}};
  CHECK(ptxrt::cache_key(program, sorted) == ptxrt::cache_key(program, reversed));

  ptxrt::CompileOptions fast_math = options;
  fast_math.extra_options = {"--use_fast_math"};
  CHECK(ptxrt::cache_key(program, fast_math) != key);
  CHECK(ptxrt::cache_key(program, options_for("sm_90a")) != key);

  CHECK(ptxrt::cache_key(program, options, 12080) == ptxrt::cache_key(program, options, 13000));
  ptxrt::CompileOptions ptx = options_for("compute_90", ptxrt::ImageFormat::ptx);
  CHECK(ptxrt::cache_key(program, ptx, 12080) != ptxrt::cache_key(program, ptx, 13000));
}

TEST_CASE("-I folders among the extra options come before the toolkit's, so their headers win") {
  TemporaryFolder folder;
  // Named like a toolkit header: the kernel compiles only when this one is found first.
  folder.write("cuda_fp16.h", "#pragma once\n#define LOCAL_HALF_STAND_IN 1\n");
  const ptxrt::Program program = ptxrt::Program::from_string(
      "#include <cuda_fp16.h>\n"
      "static_assert(LOCAL_HALF_STAND_IN == 1, \"the toolkit's cuda_fp16.h was found first\");\n"
      "extern \"C\" __global__ void k() {}\n",
      "stand_in.cu");
  const std::string folder_option = "-I" + folder.path.string();
  const std::string toolkit_option = "-I" + ptxrt::toolkit_include_paths().front().string();
  for (const std::vector<std::string>& extra :
       std::vector<std::vector<std::string>>{{folder_option},
                                             {"-I " + folder.path.string(), "-lineinfo"},
                                             {"--include-path=" + folder.path.string()},
                                             {"--include-path", folder.path.string()}}) {
    CAPTURE(extra.front());
    ptxrt::CompileOptions options = options_for("compute_80", ptxrt::ImageFormat::ptx);
    options.extra_options = extra;
    const ptxrt::Image image = ptxrt::compile(program, options);
    const auto place = [&](const std::string& option) {
      return std::find(image.options.begin(), image.options.end(), option) - image.options.begin();
    };
    CHECK(place(folder_option) < place(toolkit_option));
    CHECK(place(toolkit_option) < static_cast<std::ptrdiff_t>(image.options.size()));
  }
  ptxrt::CompileOptions with_include_path = options_for("compute_80", ptxrt::ImageFormat::ptx);
  with_include_path.include_paths = {folder.path};
  CHECK_NOTHROW(ptxrt::compile(program, with_include_path));
  // Without the folder, the toolkit's header is found and the assertion fails.
  CHECK(compile_error(program, options_for("compute_80", ptxrt::ImageFormat::ptx)).kind() ==
        ptxrt::ErrorKind::compile);
}

TEST_CASE("cache_key reads the headers found through -I folders among the extra options") {
  TemporaryFolder folder;
  folder.write("settings.cuh", "#define VALUE 1\n");
  const ptxrt::Program program = ptxrt::Program::from_string(
      "#include \"settings.cuh\"\nextern \"C\" __global__ void k() {}\n", "uses_settings.cu");
  ptxrt::CompileOptions options = options_for("sm_90");
  options.extra_options = {"-I " + folder.path.string()};
  const std::string before = ptxrt::cache_key(program, options);
  folder.write("settings.cuh", "#define VALUE 2\n");
  CHECK(ptxrt::cache_key(program, options) != before);
}

TEST_CASE("a define named as an identifier of NVRTC's builtin header gets a note naming it") {
  const ptxrt::Program program = ptxrt::Program::from_string(
      "extern \"C\" __global__ void scale(float* x, int n) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) x[i] *= width * block;\n"
      "}\n",
      "scale.cu");
  ptxrt::CompileOptions options = options_for("sm_90");
  options.defines = {{"width", "4"}, {"block", "2"}};
  const ptxrt::Error error = compile_error(program, options);
  const std::string message = error.what();
  CHECK(error.kind() == ptxrt::ErrorKind::compile);
  CHECK_MESSAGE(contains(message, "note: the define(s) width name an identifier of NVRTC's "
                                  "builtin header"),
                message);

  // The same kernel with a name the header does not use compiles, and has no such note to give.
  options.defines = {{"scale_width", "4"}, {"block", "2"}};
  const ptxrt::Program renamed = ptxrt::Program::from_string(
      "extern \"C\" __global__ void scale(float* x, int n) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) x[i] *= scale_width * block;\n"
      "}\n",
      "scale.cu");
  CHECK(ptxrt::compile(renamed, options).data.size() > 0);
}
