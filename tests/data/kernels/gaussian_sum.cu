/*
 * An instruction-bound kernel with algorithm switches, written as for Kernel Tuner: the
 * tunables are bare macros this file uses without declaring, and a naive reference kernel sits
 * beside the tuned one.
 *
 *   y[i] = (1 / steps) * sum over k < steps of exp(-(x[i] + k / steps)^2)
 *
 * (a Riemann sum of a Gaussian), `steps` exponentials per element: the arithmetic, not the
 * memory, decides the time.
 *
 * Tunables: block_size_x (threads), ITEMS_PER_THREAD (elements per thread, block_size_x apart),
 * UNROLL (of the step loop), ALGORITHM: 0 expf (libdevice, exact to an ulp or two), 1 __expf
 * (the SFU's approximation), 2 a polynomial for 2^f after range reduction (FMAs only).
 * Sizes: steps, a macro; n, an argument.
 */

__device__ __forceinline__ float gauss(float t) {
#if ALGORITHM == 0
  return expf(-t * t);
#elif ALGORITHM == 1
  return __expf(-t * t);
#else
  // e^u = 2^(u log2 e) = 2^whole * 2^f with f in [0, 1): the exponent field takes the whole
  // part, a degree-6 polynomial (relative error under 1e-7 on [0, 1)) the fraction.
  const float v = fmaxf(-t * t * 1.44269504f, -126.0f);
  const float whole = floorf(v);
  const float f = v - whole;
  float p = 2.16906092e-4f;
  p = fmaf(p, f, 1.24430815e-3f);
  p = fmaf(p, f, 9.67847255e-3f);
  p = fmaf(p, f, 5.54835247e-2f);
  p = fmaf(p, f, 2.40229796e-1f);
  p = fmaf(p, f, 6.93146987e-1f);
  p = fmaf(p, f, 1.0f);
  return p * __int_as_float((static_cast<int>(whole) + 127) << 23);
#endif
}

template <typename T>
__global__ void gaussian_sum(const T *x, T *y, int n) {
  const int first = blockIdx.x * block_size_x * ITEMS_PER_THREAD + threadIdx.x;
#pragma unroll
  for (int item = 0; item < ITEMS_PER_THREAD; ++item) {
    const int i = first + item * block_size_x;
    if (i < n) {
      const T xi = x[i];
      T sum = 0;
#pragma unroll UNROLL
      for (int k = 0; k < steps; ++k) sum += gauss(xi + static_cast<T>(k) / steps);
      y[i] = sum / steps;
    }
  }
}

// The same sum in double precision, one element per thread.
__global__ void gaussian_sum_reference(const float *x, float *y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double sum = 0.0;
  for (int k = 0; k < steps; ++k) {
    const double t = x[i] + static_cast<double>(k) / steps;
    sum += exp(-t * t);
  }
  y[i] = static_cast<float>(sum / steps);
}
