// The resource report, checked against what NVRTC and ptxas say about kernels built here.
#include <doctest/doctest.h>
#include <nvrtc.h>

#include <algorithm>
#include <string>
#include <vector>

#include "jit/nvrtc_check.hpp"
#include "ptxrt/core/demangle.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/resources.hpp"

namespace {

struct Compiled {
  std::string cubin;
  std::string log;
};

class Program {
 public:
  explicit Program(const char* source) {
    ptxrt::check(nvrtcCreateProgram(&program_, source, "resources_test.cu", 0, nullptr, nullptr),
                 "nvrtcCreateProgram");
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  ~Program() { nvrtcDestroyProgram(&program_); }

  Compiled compile(std::vector<std::string> options) {
    options.insert(options.begin(), {"-arch=sm_90", "-Xptxas", "-v"});
    std::vector<const char*> arguments;
    for (const std::string& option : options) arguments.push_back(option.c_str());
    nvrtcResult result =
        nvrtcCompileProgram(program_, static_cast<int>(arguments.size()), arguments.data());
    Compiled compiled;
    std::size_t size = 0;
    ptxrt::check(nvrtcGetProgramLogSize(program_, &size), "nvrtcGetProgramLogSize");
    compiled.log.resize(size);
    ptxrt::check(nvrtcGetProgramLog(program_, compiled.log.data()), "nvrtcGetProgramLog");
    REQUIRE_MESSAGE(result == NVRTC_SUCCESS, compiled.log);
    ptxrt::check(nvrtcGetCUBINSize(program_, &size), "nvrtcGetCUBINSize");
    compiled.cubin.resize(size);
    ptxrt::check(nvrtcGetCUBIN(program_, compiled.cubin.data()), "nvrtcGetCUBIN");
    return compiled;
  }

 private:
  nvrtcProgram program_ = nullptr;
};

Compiled compile(const char* source, std::vector<std::string> options = {}) {
  return Program(source).compile(std::move(options));
}

const ptxrt::KernelResources& find(const std::vector<ptxrt::KernelResources>& kernels,
                                   const std::string& name) {
  auto found = std::find_if(kernels.begin(), kernels.end(),
                            [&name](const auto& kernel) { return kernel.name == name; });
  REQUIRE_MESSAGE(found != kernels.end(), "no kernel named " << name);
  return *found;
}

void check_rejected(std::string_view bytes, const std::string& fragment) {
  try {
    ptxrt::read_cubin_resources(bytes);
    FAIL("accepted a malformed CUBIN; expected an error mentioning '" << fragment << "'");
  } catch (const ptxrt::Error& error) {
    CHECK(error.kind() == ptxrt::ErrorKind::invalid_argument);
    CHECK_MESSAGE(std::string(error.what()).find(fragment) != std::string::npos, error.what());
  }
}

const char* const kSharedAndConstants = R"(
__constant__ float coeffs[64];
extern "C" __global__ void tiles(float* out) {
  __shared__ float a[2][16][16];
  a[threadIdx.y % 2][threadIdx.x % 16][threadIdx.x / 16] = out[threadIdx.x] * coeffs[threadIdx.x % 64];
  __syncthreads();
  out[threadIdx.x] = a[(threadIdx.y + 1) % 2][threadIdx.x % 16][0];
}
extern "C" __global__ void __launch_bounds__(256, 2) bounded(float* out, int n) {
  if (threadIdx.x < n) out[threadIdx.x] += 1.0f;
}
extern "C" __global__ void named_barrier(float* out) {
  asm volatile("bar.sync 3, 64;");
  out[threadIdx.x] = 1.0f;
}
)";

// 48 live values against a 32-register cap: ptxas has to spill.
const char* const kRegisterHungry = R"(
extern "C" __global__ void hungry(const float* in, float* out, int n) {
  float acc[48];
#pragma unroll
  for (int i = 0; i < 48; ++i) acc[i] = in[threadIdx.x + i * n];
#pragma unroll
  for (int k = 0; k < 8; ++k)
#pragma unroll
    for (int i = 0; i < 48; ++i) acc[i] = acc[i] * acc[(i + k + 1) % 48] + acc[(i * 7 + k) % 48];
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < 48; ++i) sum += acc[i] * (float)(i + 1);
  out[threadIdx.x] = sum;
}
)";

}  // namespace

TEST_CASE("read_cubin_resources reports a 2 KB static shared array apart from the system reserve") {
  auto kernels = ptxrt::read_cubin_resources(compile(kSharedAndConstants).cubin);
  REQUIRE(kernels.size() == 3);
  const auto tiles = find(kernels, "tiles");
  CHECK(tiles.sm == 90);
  CHECK(tiles.static_shared_bytes == 2048);
  CHECK(tiles.reserved_shared_bytes == 1024);
  CHECK(tiles.barriers == 1);
  CHECK(tiles.max_threads_per_block == 0);
  CHECK_FALSE(tiles.spill_store_bytes.has_value());
  CHECK(find(kernels, "bounded").static_shared_bytes == 0);
}

TEST_CASE("read_cubin_resources reports the module's __constant__ bytes and each kernel's params") {
  auto kernels = ptxrt::read_cubin_resources(compile(kSharedAndConstants).cubin);
  const auto tiles = find(kernels, "tiles");
  const auto bounded = find(kernels, "bounded");
  CHECK(tiles.user_constant_bytes == 64 * sizeof(float));
  CHECK(bounded.user_constant_bytes == 64 * sizeof(float));
  CHECK(tiles.param_bytes == 8);     // float*
  CHECK(bounded.param_bytes == 12);  // float*, int
  // sm_90 keeps 0x210 bytes of driver data in bank 0 ahead of the parameters.
  CHECK(tiles.param_bank_bytes == 0x210 + 8);
  CHECK(bounded.param_bank_bytes == 0x210 + 12);
}

TEST_CASE("read_cubin_resources takes max threads per block from __launch_bounds__") {
  auto kernels = ptxrt::read_cubin_resources(compile(kSharedAndConstants).cubin);
  CHECK(find(kernels, "bounded").max_threads_per_block == 256);
}

TEST_CASE("a bar.sync on barrier 3 counts as four named barriers in the CUBIN and the log") {
  Compiled compiled = compile(kSharedAndConstants);
  CAPTURE(compiled.log);
  CHECK(find(ptxrt::read_cubin_resources(compiled.cubin), "named_barrier").barriers == 4);
  CHECK(find(ptxrt::parse_ptxas_info(compiled.log), "named_barrier").barriers == 4);
}

TEST_CASE("register counts read from the CUBIN equal those in the ptxas log") {
  for (const char* source : {kSharedAndConstants, kRegisterHungry}) {
    Compiled compiled = compile(source);
    auto from_cubin = ptxrt::read_cubin_resources(compiled.cubin);
    auto from_log = ptxrt::parse_ptxas_info(compiled.log);
    CAPTURE(compiled.log);
    REQUIRE(from_log.size() == from_cubin.size());
    for (const auto& logged : from_log) {
      CAPTURE(logged.name);
      CHECK(logged.registers > 0);
      CHECK(find(from_cubin, logged.name).registers == logged.registers);
      CHECK(find(from_cubin, logged.name).static_shared_bytes == logged.static_shared_bytes);
    }
  }
}

TEST_CASE("a kernel capped at 32 registers spills, and the log parse and the CUBIN agree on it") {
  Compiled compiled = compile(kRegisterHungry, {"--maxrregcount=32"});
  auto logged = find(ptxrt::parse_ptxas_info(compiled.log), "hungry");
  CHECK(logged.sm == 90);
  CHECK(logged.registers == 32);
  REQUIRE(logged.spill_store_bytes.has_value());
  REQUIRE(logged.spill_load_bytes.has_value());
  CHECK(*logged.spill_store_bytes > 0);
  CHECK(*logged.spill_load_bytes > 0);
  CHECK(logged.stack_frame_bytes > 0);

  auto from_cubin = find(ptxrt::read_cubin_resources(compiled.cubin), "hungry");
  CHECK(from_cubin.registers == 32);
  CHECK(from_cubin.stack_frame_bytes == logged.stack_frame_bytes);
  CHECK(from_cubin.cumulative_stack_bytes == logged.cumulative_stack_bytes);
}

TEST_CASE("parse_ptxas_info reads nvcc's layout, cmem included, and skips device functions") {
  const char* log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function '_Z6stackyPi' for 'sm_80'\n"
      "ptxas info    : Function properties for _Z6stackyPi\n"
      "    288 bytes stack frame, 16 bytes spill stores, 20 bytes spill loads\n"
      "ptxas info    : Used 32 registers, used 1 barriers, 112 bytes smem, 360 bytes cmem[0], "
      "576 bytes cumulative stack size\n"
      "ptxas info    : Compile time = 7.036 ms\n"
      "ptxas info    : Function properties for _Z6helperiPKi\n"
      "    280 bytes stack frame, 100 bytes spill stores, 100 bytes spill loads\n";
  auto entries = ptxrt::parse_ptxas_info(log);
  REQUIRE(entries.size() == 1);
  ptxrt::KernelResources expected;
  expected.name = "_Z6stackyPi";
  expected.sm = 80;
  expected.registers = 32;
  expected.barriers = 1;
  expected.static_shared_bytes = 112;
  expected.param_bank_bytes = 360;
  expected.stack_frame_bytes = 288;
  expected.cumulative_stack_bytes = 576;
  expected.spill_store_bytes = 16;
  expected.spill_load_bytes = 20;
  CHECK(entries[0] == expected);
}

TEST_CASE("parse_ptxas_info gives each entry of a linked program's log the source it came from") {
  const std::string log =
      "== a.cu ==\n"
      "ptxas info    : Compiling entry function 'first' for 'sm_90'\n"
      "ptxas info    : Used 8 registers\n"
      "\n"
      "== b.cu ==\r\n"
      "ptxas info    : Compiling entry function 'second' for 'sm_90'\n"
      "ptxas info    : Used 10 registers\n"
      "\n"
      "== link ==\n"
      "ptxas info    : Compiling entry function 'linked' for 'sm_90'\n";
  const std::vector<ptxrt::KernelResources> entries = ptxrt::parse_ptxas_info(log);
  REQUIRE(entries.size() == 3);
  CHECK(entries[0].source == "a.cu");
  CHECK(entries[0].registers == 8);
  CHECK(entries[1].source == "b.cu");
  CHECK(entries[1].registers == 10);
  CHECK(entries[2].source.empty());  // compiled at link time (LTO): no one source
  CHECK(ptxrt::parse_ptxas_info("ptxas info    : Compiling entry function 'k' for 'sm_90'\n")
            .front()
            .source.empty());
}

TEST_CASE("merge takes spills from the log and everything else from the CUBIN") {
  ptxrt::KernelResources from_cubin;
  from_cubin.name = "k";
  from_cubin.registers = 40;
  from_cubin.static_shared_bytes = 4096;
  ptxrt::KernelResources logged;
  logged.name = "k";
  logged.registers = 39;
  logged.spill_store_bytes = 8;
  logged.spill_load_bytes = 12;
  ptxrt::KernelResources only_logged;
  only_logged.name = "only_in_log";

  auto merged = ptxrt::merge({from_cubin}, {logged, only_logged});
  REQUIRE(merged.size() == 2);
  CHECK(merged[0].registers == 40);
  CHECK(merged[0].static_shared_bytes == 4096);
  CHECK(merged[0].spill_store_bytes == 8);
  CHECK(merged[0].spill_load_bytes == 12);
  CHECK(merged[1] == only_logged);
}

TEST_CASE("merge takes a linked program's source from the log") {
  ptxrt::KernelResources from_cubin;
  from_cubin.name = "k";
  ptxrt::KernelResources logged;
  logged.name = "k";
  logged.source = "b.cu";
  CHECK(ptxrt::merge({from_cubin}, {logged}).front().source == "b.cu");
}

TEST_CASE("read_cubin_resources rejects input that is not a CUBIN") {
  check_rejected("", "shorter than an ELF header");
  check_rejected(std::string(200, 'x'), "no ELF magic");
  std::string cubin = compile(kSharedAndConstants).cubin;
  std::string elf32 = cubin;
  elf32[4] = 1;
  check_rejected(elf32, "64-bit");
  std::string x86 = cubin;
  x86[0x12] = 62;
  x86[0x13] = 0;
  check_rejected(x86, "e_machine 62");
}

TEST_CASE("read_cubin_resources rejects every truncation of a CUBIN") {
  std::string cubin = compile(kSharedAndConstants).cubin;
  // The header tables sit at the end of the file, so every cut loses part of one.
  for (std::size_t size = 0; size < cubin.size(); ++size) {
    CAPTURE(size);
    check_rejected(std::string_view(cubin).substr(0, size),
                   size < 64 ? "shorter than an ELF header" : "past the end");
  }
}

TEST_CASE("read_cubin_resources survives any single corrupted byte: it parses or throws Error") {
  const std::string cubin = compile(kSharedAndConstants).cubin;
  std::size_t rejected = 0;
  for (std::size_t at = 0; at < cubin.size(); ++at) {
    std::string corrupted = cubin;
    corrupted[at] = static_cast<char>(~corrupted[at]);
    try {
      ptxrt::read_cubin_resources(corrupted);
    } catch (const ptxrt::Error& error) {
      REQUIRE(error.kind() == ptxrt::ErrorKind::invalid_argument);
      ++rejected;
    }
  }
  CHECK(rejected > 0);
}

TEST_CASE("read_cubin_resources rejects an attribute record that overruns its section") {
  std::string cubin = compile(kSharedAndConstants).cubin;
  // EIATTR_REGCOUNT, sized format, 8-byte payload: the first record of the module's .nv.info.
  std::size_t record = cubin.find(std::string("\x04\x2f\x08\x00", 4));
  REQUIRE(record != std::string::npos);
  cubin[record + 2] = '\xff';
  cubin[record + 3] = '\xff';
  check_rejected(cubin, "attribute record in .nv.info at offset 0 claims 65535 bytes");
}

TEST_CASE("demangle reads a C++ kernel's symbol and leaves every other name as it is") {
  CHECK(ptxrt::demangle("_Z18convolution_kernelPfS_S_") ==
        "convolution_kernel(float*, float*, float*)");
  CHECK(ptxrt::demangle("_Z5scaleIfEvPT_") == "void scale<float>(float*)");
  CHECK(ptxrt::demangle("matmul_tiled") == "matmul_tiled");
  // A bare type code is no kernel's symbol: an extern "C" kernel named "f" is not a float.
  CHECK(ptxrt::demangle("f") == "f");
  CHECK(ptxrt::demangle("_Znot a symbol") == "_Znot a symbol");
}
