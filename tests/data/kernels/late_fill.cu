// late_fill writes after spinning `cycles` clocks: work that a launch on another stream must wait
// for, since a copy that did not wait would read what was there before.
extern "C" __global__ void late_fill(float* out, int n, long long cycles, float value) {
  const long long start = clock64();
  while (clock64() - start < cycles) {}
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
}

extern "C" __global__ void copy(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}
