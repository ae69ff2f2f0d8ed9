// y[i] = p(x[i]) for a polynomial whose coefficients sit in constant memory: every thread reads
// the same coefficient at the same time, which the constant cache broadcasts in one transaction.
// DEGREE is a compile-time constant (-D DEGREE=N), so Horner's loop unrolls fully.
#include "horner.cuh"

#ifndef DEGREE
#error "compile with -D DEGREE=<1..15>"
#endif

__constant__ float coefficients[16];  // c0 + c1 x + ... + c_DEGREE x^DEGREE

extern "C" __global__ void evaluate_polynomial(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = horner<DEGREE>(coefficients, x[i]);
}
