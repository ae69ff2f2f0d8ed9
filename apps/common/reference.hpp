// Plain CPU references for the kernels in ptx_src/, one per kernel family, written for clarity
// rather than speed. The verification code runs a kernel, runs its reference on the same input
// and compares with max_relative_error (floats) or exact equality (indices, sorted keys, images).
//
// Every function is pure (no state) and safe to call from any thread. Inputs are spans the caller
// keeps owning; results come back as new vectors, except sort, which works in place like
// std::sort. A span whose size does not match the dimensions given throws ptxrt::Error
// (ErrorKind::invalid_argument) naming the argument, its size and the size expected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace ptxrt::apps {

// Layout-identical to `struct Sphere` in ptx_src/sphere.cuh, so an array of these can be copied
// byte for byte into raytrace.cu's `spheres` constant symbol.
struct Sphere {
  float r, g, b;  // colour, each channel in [0, 1]
  float radius;
  float x, y, z;  // centre, in pixels from the image centre; the viewer looks down -z
};
static_assert(sizeof(Sphere) == 28 && alignof(Sphere) == 4, "must match ptx_src/sphere.cuh");

// Layout-identical to `struct Point` in ptx_src/aos_soa.cu (read_aos).
struct Point {
  float x, y, z;
};
static_assert(sizeof(Point) == 12 && alignof(Point) == 4, "must match ptx_src/aos_soa.cu");

// C = A·B, row-major, A is m×k, B is k×n, C is m×n. Accumulates in double and rounds once, so
// it is the more accurate side: a float kernel differs from it by a relative error (relative to
// max|C|) of up to about k·2^-24, typically sqrt(k)·2^-24.
std::vector<float> matmul(std::span<const float> a, std::span<const float> b, std::size_t m,
                          std::size_t n, std::size_t k);

// c = a + b, element by element; exact (one rounding), so kernels must match it bit for bit.
std::vector<float> vector_add(std::span<const float> a, std::span<const float> b);
std::vector<float> matrix_add(std::span<const float> a, std::span<const float> b, std::size_t rows,
                              std::size_t cols);

// out = in^T: in is rows×cols row-major, out is cols×rows. Exact.
std::vector<float> transpose(std::span<const float> in, std::size_t rows, std::size_t cols);

// The sum in double. reduce_sum (float per thread, then a tree) differs from it by a relative
// error (relative to sum|x|) of up to (m + log2(threads))·2^-24, m the elements per thread.
double sum(std::span<const float> values);

struct ArgMin {
  float value;
  std::int64_t index;
};
// The smallest value and its position: NaN counts as larger than every number, ties (-0 == +0,
// NaN with NaN) go to the smallest index. reduce_argmin matches it exactly. Throws
// ErrorKind::invalid_argument on an empty span.
ArgMin argmin(std::span<const float> values);

// Ascending, NaN last (after +inf; for NaN-free input these are std::sort's semantics).
void sort(std::span<float> keys);
// Pairs ascending by key, NaN last, stable: equal keys keep their input order. The bitonic
// kernel orders equal keys by value instead, which is the same when values are the positions.
void sort(std::span<float> keys, std::span<int> values);

// The image raytrace.cu renders: width*height RGBA pixels, row-major, 4 bytes each. Uses every
// sphere given (the kernel stops at MAX_SPHERES). Float arithmetic in the kernel's order, each
// operation rounded once, so on a host whose compiler does not contract a*b+c into an FMA (x86-64
// builds without -mfma, the default) the image is identical byte for byte; where it does, a
// channel may differ by 1 and a pixel on a sphere's rim may flip.
std::vector<unsigned char> raytrace(std::span<const Sphere> spheres, int width, int height);

// The integrands simpson.cu can select; the value is its `function` argument.
enum class Integrand : int {
  four_over_one_plus_x_squared = 0,  // 4/(1+x²): π over [0, 1]
  x_squared = 1,                     // x²: 1/3 over [0, 1], exactly for Simpson's rule
  sine = 2,                          // sin(x): 2 over [0, π]
};
double integrand(Integrand function, double x);
// Simpson's rule over [a, b] with n intervals, in double. Throws ErrorKind::invalid_argument
// unless n is even and at least 2. The kernel sums in another order: expect agreement to about
// sqrt(n)·2^-53 relative.
double simpson(Integrand function, double a, double b, std::int64_t n);

// out[i] = x·x + y·y + z·z, rounded as (x·x + y·y) + z·z: read_aos and read_soa match it exactly
// (same FMA caveat as raytrace).
std::vector<float> squared_norms(std::span<const Point> points);
std::vector<float> squared_norms(std::span<const float> x, std::span<const float> y,
                                 std::span<const float> z);

// Counts of `values` in `bins` bins, a value v in bin min(v, bins - 1): what histogram.cu's
// kernels compute, exactly. Throws ErrorKind::invalid_argument for 0 bins.
std::vector<std::uint32_t> histogram(std::span<const std::uint32_t> values, std::size_t bins);

// How far `actual` is from `expected`: the largest |actual[i] - expected[i]|, divided by the
// largest |expected[i]| (so small elements near zero do not blow the ratio up), and where it
// occurs. A NaN on either side, or an infinity that is not matched exactly, gives +infinity at
// that index, so no tolerance passes it; an all-zero reference gives 0 when matched exactly and
// +infinity otherwise. Sizes must be equal (ErrorKind::invalid_argument otherwise).
struct Deviation {
  double max_relative_error = 0.0;
  std::size_t worst_index = 0;  // 0 when there is no error at all
};
Deviation compare(std::span<const float> actual, std::span<const float> expected);
double max_relative_error(std::span<const float> actual, std::span<const float> expected);

}  // namespace ptxrt::apps
