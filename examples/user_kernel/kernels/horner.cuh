// Horner's rule, in a header beside the kernel file: ptxrt resolves quoted includes relative to
// the including file, as nvcc does.
#pragma once

template <int Degree>
__device__ float horner(const float* coefficients, float x) {
  float value = coefficients[Degree];
#pragma unroll
  for (int power = Degree - 1; power >= 0; --power) value = value * x + coefficients[power];
  return value;
}
