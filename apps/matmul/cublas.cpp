#include "apps/matmul/cublas.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "ptxrt/core/error.hpp"

namespace ptxrt::apps {

// The few cuBLAS v2 types and entry points used, declared here from the documented API so that
// building ptxrt needs no cuBLAS headers (a minimal toolkit has NVRTC and the driver headers only).
namespace cublas_api {
struct Context;
using Handle = Context*;
using Status = int;                    // cublasStatus_t
constexpr Status success = 0;          // CUBLAS_STATUS_SUCCESS
using Operation = int;                 // cublasOperation_t
constexpr Operation no_transpose = 0;  // CUBLAS_OP_N
using MathMode = int;                  // cublasMath_t
constexpr MathMode default_math = 0;   // CUBLAS_DEFAULT_MATH: fp32 stays fp32 (no TF32)
using Create = Status (*)(Handle*);
using Destroy = Status (*)(Handle);
using SetMathMode = Status (*)(Handle, MathMode);
using Sgemm = Status (*)(Handle, Operation, Operation, int, int, int, const float*, const float*,
                         int, const float*, int, const float*, float*, int);
using StatusString = const char* (*)(Status);
}  // namespace cublas_api

struct CublasLibrary {
  void* handle = nullptr;
  cublas_api::Create create = nullptr;
  cublas_api::Destroy destroy = nullptr;
  cublas_api::SetMathMode set_math_mode = nullptr;
  cublas_api::Sgemm sgemm = nullptr;
  cublas_api::StatusString status_string = nullptr;

  CublasLibrary() = default;
  CublasLibrary(const CublasLibrary&) = delete;
  CublasLibrary& operator=(const CublasLibrary&) = delete;
  ~CublasLibrary() {
    if (handle) dlclose(handle);
  }
};

namespace {

template <typename Function>
bool bind(void* library, const char* name, Function& function) {
  function = reinterpret_cast<Function>(dlsym(library, name));
  return function != nullptr;
}

std::vector<std::string> candidate_paths() {
  std::vector<std::string> paths{"libcublas.so.13", "libcublas.so"};
  std::vector<std::string> folders;
  for (const char* variable : {"CUDA_PATH", "CUDA_HOME"})
    if (const char* value = std::getenv(variable); value && *value) folders.push_back(value);
  folders.push_back("/usr/local/cuda");
  for (const std::string& folder : folders)
    for (const char* name : {"libcublas.so.13", "libcublas.so"})
      paths.push_back(folder + "/lib64/" + name);
  return paths;
}

}  // namespace

CublasAvailability find_cublas() {
  std::string reasons;
  for (const std::string& path : candidate_paths()) {
    // RTLD_NODELETE: cuBLAS keeps process-wide state (its caches, cuBLASLt's) past cublasDestroy,
    // so unloading it frees nothing worth having, and a leak checker can name what stays only
    // while the library is mapped.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!handle) {
      const char* error = dlerror();
      if (reasons.empty()) reasons = error ? error : path + ": not found";
      continue;
    }
    auto library = std::make_shared<CublasLibrary>();
    library->handle = handle;
    if (bind(handle, "cublasCreate_v2", library->create) &&
        bind(handle, "cublasDestroy_v2", library->destroy) &&
        bind(handle, "cublasSetMathMode", library->set_math_mode) &&
        bind(handle, "cublasSgemm_v2", library->sgemm) &&
        bind(handle, "cublasGetStatusString", library->status_string))
      return {std::move(library), path};
    reasons = path + " lacks a cuBLAS v2 entry point";
  }
  return {nullptr, "cuBLAS not found (" + reasons + ")"};
}

Cublas::Cublas(std::shared_ptr<const CublasLibrary> library, const Context& context)
    : library_(std::move(library)), context_(context) {
  if (!library_) throw Error(ErrorKind::not_found, "cuBLAS is not loaded");
  // cuBLAS goes through the runtime API, which adopts the context current on the thread.
  ContextGuard guard(context_);
  cublas_api::Handle created = nullptr;
  check(library_->create(&created), "cublasCreate_v2");
  handle_ = created;
  check(library_->set_math_mode(created, cublas_api::default_math), "cublasSetMathMode");
}

Cublas::~Cublas() {
  if (!handle_) return;
  ContextGuard guard(context_);
  library_->destroy(static_cast<cublas_api::Handle>(handle_));
}

Cublas::Cublas(Cublas&& other) noexcept
    : library_(std::move(other.library_)),
      context_(other.context_),
      handle_(std::exchange(other.handle_, nullptr)) {}

void Cublas::check(int status, const char* call) const {
  if (status == cublas_api::success) return;
  const char* name = library_->status_string(status);
  throw Error(ErrorKind::driver, std::string(call) + " failed: " + (name ? name : "unknown status"),
              call, status, name ? name : "");
}

void Cublas::sgemm_row_major(const DeviceBuffer<float>& a, const DeviceBuffer<float>& b,
                             DeviceBuffer<float>& c, int m, int n, int k) const {
  sgemm_row_major(a.memory(), b.memory(), c.memory(), m, n, k);
}

void Cublas::sgemm_row_major(const DeviceRange& a, const DeviceRange& b, DeviceRange& c, int m,
                             int n, int k) const {
  const auto count = [](int rows, int cols) {
    return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  };
  const auto floats = [](const DeviceRange& range) { return range.bytes() / sizeof(float); };
  if (m < 1 || n < 1 || k < 1 || floats(a) < count(m, k) || floats(b) < count(k, n) ||
      floats(c) < count(m, n))
    throw Error(ErrorKind::invalid_argument,
                "cuBLAS SGEMM " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                    std::to_string(k) + ": buffers of " + std::to_string(floats(a)) + ", " +
                    std::to_string(floats(b)) + " and " + std::to_string(floats(c)) +
                    " floats are too small or the sizes are not positive");
  ContextGuard guard(context_);
  const float alpha = 1.0f;
  const float beta = 0.0f;
  const auto* a_pointer = reinterpret_cast<const float*>(a.address());
  const auto* b_pointer = reinterpret_cast<const float*>(b.address());
  auto* c_pointer = reinterpret_cast<float*>(c.address());
  check(library_->sgemm(static_cast<cublas_api::Handle>(handle_), cublas_api::no_transpose,
                        cublas_api::no_transpose, n, m, k, &alpha, b_pointer, n, a_pointer, k,
                        &beta, c_pointer, n),
        "cublasSgemm_v2");
}

}  // namespace ptxrt::apps
