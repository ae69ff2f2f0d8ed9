// How an SGEMM's C is checked when the CPU cannot compute all of it in time: cuBLAS's C, or
// fp64 dot products at a fixed set of elements. Used by `ptxrt run sgemm` and the SGEMM bench.
// Pure functions but for the cuBLAS product; thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "apps/matmul/cublas.hpp"
#include "ptxrt/core/context.hpp"
#include "ptxrt/core/memory.hpp"

namespace ptxrt::apps {

// Products up to this many multiply-adds are checked against the CPU's fp64 product in full
// (apps::matmul, about a second); larger ones against cuBLAS or the samples.
inline constexpr double full_cpu_reference_limit = 2147483648.0;  // 2^31

// The fp64 dot products of A's rows and B's columns at `count` elements spread over C, and
// where they are (row-major indices into C).
struct ProductSamples {
  std::vector<std::size_t> indices;
  std::vector<float> expected;
};
ProductSamples sample_product(std::span<const float> a, std::span<const float> b, int m, int n,
                              int k, int count = 64);

// max-abs-normalized error of `c` at the samples (apps::max_relative_error).
double sampled_error(std::span<const float> c, const ProductSamples& samples);

// cuBLAS's C for the product of `a` and `b` on the device, when `cublas` found the library, and
// its own error at the samples; nothing otherwise.
struct CublasProduct {
  std::vector<float> c;
  double sampled_error = 0.0;
};
std::optional<CublasProduct> cublas_product(const CublasAvailability& cublas,
                                            const Context& context, const DeviceBuffer<float>& a,
                                            const DeviceBuffer<float>& b, int m, int n, int k,
                                            const ProductSamples& samples);

}  // namespace ptxrt::apps
