// cuBLAS SGEMM as the benchmark's peer, loaded at run time with dlopen (ptxrt never links it, so
// the CLI runs where cuBLAS is absent and then reports no peer). Thread safety: one Cublas per
// thread (a cuBLAS handle is not meant to be shared without synchronization); move-only.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "ptxrt/core/context.hpp"
#include "ptxrt/core/memory.hpp"

namespace ptxrt::apps {

struct CublasLibrary;

// Where libcublas was found, or why not: tries libcublas.so.13, libcublas.so, then the same
// under $CUDA_PATH/lib64, $CUDA_HOME/lib64 and /usr/local/cuda/lib64. Needs no GPU.
struct CublasAvailability {
  std::shared_ptr<const CublasLibrary> library;  // null when not found
  std::string description;                       // the path loaded, or the reason it was not
};
CublasAvailability find_cublas();

class Cublas {
 public:
  // A handle in `context` with the default math mode (CUBLAS_DEFAULT_MATH: no TF32 for fp32).
  // Throws Error(driver) naming the cuBLAS call and status when cuBLAS fails.
  Cublas(std::shared_ptr<const CublasLibrary> library, const Context& context);
  ~Cublas();
  Cublas(Cublas&& other) noexcept;
  Cublas& operator=(Cublas&&) = delete;
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  // C = A·B for row-major A (m×k), B (k×n), C (m×n), on the default stream. cuBLAS is
  // column-major, where a row-major matrix reads as its transpose, so this asks for
  // C^T = B^T·A^T: the operands swap and nothing is transposed.
  void sgemm_row_major(const DeviceBuffer<float>& a, const DeviceBuffer<float>& b,
                       DeviceBuffer<float>& c, int m, int n, int k) const;
  // The same on device memory of any kind, of at least the matrices' bytes.
  void sgemm_row_major(const DeviceRange& a, const DeviceRange& b, DeviceRange& c, int m, int n,
                       int k) const;

 private:
  void check(int status, const char* call) const;
  std::shared_ptr<const CublasLibrary> library_;
  Context context_;
  void* handle_ = nullptr;
};

}  // namespace ptxrt::apps
