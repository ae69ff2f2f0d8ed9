// c = a + b over n floats. Memory-bound: three streams, one add per 12 bytes moved, so the only
// thing that matters is moving bytes at full width; it is benchmarked against copy bandwidth.
//
// clang-format off
// ptxrt: entry vector_add grid=(any) block=(any) — c[i] = a[i] + b[i] for i < n; grid-stride, float4 when a, b, c are 16-byte aligned (e.g. block 256, grid min(ceil(n/1024), 32 per SM))
// clang-format on

// 16-byte accesses need all three pointers on a 16-byte boundary; cudaMalloc/cuMemAlloc give
// 256-byte alignment, but a caller may pass an offset view (a + 1), so the check is made here.
__device__ __forceinline__ bool aligned_to_float4(const void* pointer) {
  return (reinterpret_cast<unsigned long long>(pointer) & 15ull) == 0ull;
}

extern "C" __global__ void vector_add(const float* __restrict__ a, const float* __restrict__ b,
                                      float* __restrict__ c, long long n) {
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;

  // The branch is uniform across the grid (same pointers for every thread), so it costs nothing.
  if (aligned_to_float4(a) && aligned_to_float4(b) && aligned_to_float4(c)) {
    const long long quads = n / 4;
    const float4* a4 = reinterpret_cast<const float4*>(a);
    const float4* b4 = reinterpret_cast<const float4*>(b);
    float4* c4 = reinterpret_cast<float4*>(c);
    for (long long q = first; q < quads; q += stride) {
      const float4 x = a4[q];
      const float4 y = b4[q];
      c4[q] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
    // The last n % 4 elements do not fill a float4. A loop, not an if: the grid may have
    // fewer than 3 threads.
    for (long long i = quads * 4 + first; i < n; i += stride) c[i] = a[i] + b[i];
    return;
  }
  for (long long i = first; i < n; i += stride) c[i] = a[i] + b[i];
}
