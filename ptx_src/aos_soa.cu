// Array of structures against structure of arrays, for a bandwidth study: both kernels compute
// out[i] = x·x + y·y + z·z for n points. With SoA each of the three loads of a warp reads 128
// consecutive bytes; with AoS the warp's loads of x are 12 bytes apart, so each load instruction
// touches 384 bytes for 128 useful ones (the caches recover some of it for y and z).
// The arithmetic is explicitly rounded ((x·x + y·y) + z·z, no FMA) so that both kernels and
// apps::squared_norms agree bit for bit.
//
// clang-format off
// ptxrt: entry read_aos grid=(any) block=(any) — out[i] = |p[i]|², p an array of 12-byte {x, y, z} points; grid-stride (e.g. block 256, grid min(ceil(n/256), 32 per SM))
// ptxrt: entry read_soa grid=(any) block=(any) — out[i] = x[i]² + y[i]² + z[i]², three separate arrays; grid-stride (e.g. block 256, grid min(ceil(n/256), 32 per SM))
// clang-format on

// 12 bytes, alignment 4: three floats and no padding, the layout apps::Point declares.
struct Point {
  float x, y, z;
};

__device__ __forceinline__ float squared_norm(float x, float y, float z) {
  return __fadd_rn(__fadd_rn(__fmul_rn(x, x), __fmul_rn(y, y)), __fmul_rn(z, z));
}

extern "C" __global__ void read_aos(const Point* __restrict__ points, float* __restrict__ out,
                                    long long n) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const Point p = points[i];
    out[i] = squared_norm(p.x, p.y, p.z);
  }
}

extern "C" __global__ void read_soa(const float* __restrict__ x, const float* __restrict__ y,
                                    const float* __restrict__ z, float* __restrict__ out,
                                    long long n) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = squared_norm(x[i], y[i], z[i]);
  }
}
