// y[i] = p(x[i]) for a polynomial of degree DEGREE whose coefficients sit in constant memory,
// written for a tuner: BLOCK (threads per block) and ITEMS (points per thread, BLOCK apart, so
// that each load stays coalesced) are left to it, and a plain reference kernel sits beside.
__constant__ float coefficients[16];  // c0 + c1 x + ... + c_DEGREE x^DEGREE

__global__ void horner(const float* x, float* y, int n) {
  const int first = blockIdx.x * BLOCK * ITEMS + threadIdx.x;
#pragma unroll
  for (int item = 0; item < ITEMS; ++item) {
    const int i = first + item * BLOCK;
    if (i < n) {
      const float v = x[i];
      float p = coefficients[DEGREE];
#pragma unroll
      for (int c = DEGREE - 1; c >= 0; --c) p = p * v + coefficients[c];
      y[i] = p;
    }
  }
}

// One point per thread, in double precision.
__global__ void horner_reference(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double p = coefficients[DEGREE];
  for (int c = DEGREE - 1; c >= 0; --c) p = p * x[i] + coefficients[c];
  y[i] = static_cast<float>(p);
}
