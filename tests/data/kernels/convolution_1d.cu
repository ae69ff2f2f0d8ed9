// Test kernel with C++ linkage (no extern "C", so its symbol is mangled) and no manifest (so -D
// takes any name): a 1D convolution, output[i] = sum of input[i + j - MASK_WIDTH / 2] * mask[j]
// over the MASK_WIDTH taps, zero outside the input; one thread per output element.
#ifndef MASK_WIDTH
#define MASK_WIDTH 5
#endif

__constant__ int length;  // of input and output

__global__ void convolution_kernel(float* input, float* mask, float* output) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= length) return;
  float sum = 0.0f;
  for (int j = 0; j < MASK_WIDTH; ++j) {
    const int at = i + j - MASK_WIDTH / 2;
    if (at >= 0 && at < length) sum += input[at] * mask[j];
  }
  output[i] = sum;
}
