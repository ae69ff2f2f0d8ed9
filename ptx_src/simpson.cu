// Simpson's rule in double precision: the integral of f over [a, b] with n intervals (n even),
//   h/3 · (f(x_0) + 4 f(x_1) + 2 f(x_2) + 4 f(x_3) + ... + 4 f(x_{n-1}) + f(x_n)),  x_i = a + i·h.
// Each thread sums the weighted samples of a grid-stride slice of i = 0..n, the block adds its
// threads' sums (block_sum.cuh: shared memory down to 64, warp shuffles for the last 32) and
// writes one partial, already multiplied by h/3: the integral is the plain sum of the partials,
// which the host adds in double. x_i is computed from i, never accumulated, so it carries no
// drift; the summation error is about sqrt(n)·2^-53 relative.
//
// f: 0 → 4/(1+x²) (over [0, 1] gives π), 1 → x² (Simpson is exact for cubics: 1/3 over [0, 1]),
// 2 → sin(x) (2 over [0, π]); any other value gives NaN partials, so a bad choice cannot pass.
// n must be even and >= 2 (the host checks it: with an odd n the weights no longer form the rule).
//
// clang-format off
// ptxrt: define BLOCK_SIZE in {128, 256, 512} default 256
// ptxrt: entry simpson grid=(G) block=(BLOCK_SIZE) — partial[blockIdx.x] = h/3 · weighted sum of a grid-stride slice of the n+1 samples; any G >= 1 (e.g. min(ceil((n+1)/BLOCK_SIZE), 1024)); the integral is the sum of the G partials
// clang-format on

#ifndef BLOCK_SIZE
#error "BLOCK_SIZE must be defined (128, 256 or 512)"
#endif
#if BLOCK_SIZE < 64 || (BLOCK_SIZE & (BLOCK_SIZE - 1)) != 0
#error "BLOCK_SIZE must be a power of two of at least 64 (the shared tree halves down to 64)"
#endif

#include "block_sum.cuh"

__device__ __forceinline__ double integrand(int function, double x) {
  switch (function) {
    case 0:
      return 4.0 / (1.0 + x * x);
    case 1:
      return x * x;
    case 2:
      return sin(x);
    default:
      return __longlong_as_double(0x7ff8000000000000ll);  // NaN
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    simpson(double a, double b, long long n, int function, double* __restrict__ partial) {
  const double h = (b - a) / static_cast<double>(n);

  double sum = 0.0;
  const long long stride = static_cast<long long>(gridDim.x) * BLOCK_SIZE;
  for (long long i = static_cast<long long>(blockIdx.x) * BLOCK_SIZE + threadIdx.x; i <= n;
       i += stride) {
    const double weight = (i == 0 || i == n) ? 1.0 : ((i & 1) ? 4.0 : 2.0);
    sum += weight * integrand(function, a + static_cast<double>(i) * h);
  }
  const double total = block_sum<BLOCK_SIZE>(sum);
  if (threadIdx.x == 0) partial[blockIdx.x] = total * (h / 3.0);
}
