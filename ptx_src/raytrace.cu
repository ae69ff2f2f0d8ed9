// The spheres ray tracer with its scene in constant memory. One thread per pixel casts an
// orthographic ray along -z through (px - width/2, py - height/2) and keeps the nearest sphere it
// hits (the largest z). Every thread of a warp reads the same sphere at the same time, which is
// the access constant memory broadcasts in one transaction; the scene never changes during a
// launch, so it needs no coherence.
//
// Colour: the sphere's colour scaled by dz/radius (1 at the centre, 0 at the rim), clamped to
// [0, 1], times 255, truncated; alpha is 255; background black. Every float operation is an
// explicitly rounded intrinsic, so nvcc/NVRTC cannot contract it into an FMA or approximate it
// under --use_fast_math: the image equals apps::raytrace (plain IEEE float, no FMA) bit for bit.
//
// clang-format off
// ptxrt: define MAX_SPHERES in {16, 32, 64, 128} default 64
// ptxrt: entry raytrace grid=(ceil(width/16), ceil(height/16)) block=(16, 16) — any 2-D block; rgba is width*height*4 bytes, row-major, 4-byte aligned; set `spheres` and `sphere_count` first
// clang-format on

#ifndef MAX_SPHERES
#error "MAX_SPHERES must be defined (16, 32, 64 or 128)"
#endif

#include "sphere.cuh"

__constant__ Sphere spheres[MAX_SPHERES];
__constant__ int sphere_count;

// Channel value for colour c at brightness shade. The comparisons also send NaN to 0.
__device__ __forceinline__ unsigned char channel(float colour, float shade) {
  const float level = __fmul_rn(colour, shade);
  const float clamped = level > 0.0f ? (level < 1.0f ? level : 1.0f) : 0.0f;
  return static_cast<unsigned char>(__fmul_rn(clamped, 255.0f));
}

extern "C" __global__ void raytrace(unsigned char* __restrict__ rgba, int width, int height) {
  const int px = blockIdx.x * blockDim.x + threadIdx.x;
  const int py = blockIdx.y * blockDim.y + threadIdx.y;
  // The grid is rounded up to whole blocks; threads past the image edge have no pixel.
  if (px >= width || py >= height) return;
  const float ray_x = static_cast<float>(px - width / 2);
  const float ray_y = static_cast<float>(py - height / 2);

  // A count beyond the array would read past the symbol; the host is told the limit too.
  const int count = sphere_count < MAX_SPHERES ? sphere_count : MAX_SPHERES;
  float nearest_z = -__int_as_float(0x7f800000);  // -infinity: nothing hit yet
  float shade = 0.0f;
  int hit = -1;
  for (int s = 0; s < count; ++s) {
    const float dx = __fsub_rn(ray_x, spheres[s].x);
    const float dy = __fsub_rn(ray_y, spheres[s].y);
    const float distance2 = __fadd_rn(__fmul_rn(dx, dx), __fmul_rn(dy, dy));
    const float radius2 = __fmul_rn(spheres[s].radius, spheres[s].radius);
    if (distance2 < radius2) {
      const float dz = __fsqrt_rn(__fsub_rn(radius2, distance2));
      const float z = __fadd_rn(spheres[s].z, dz);
      // Strictly nearer: at equal depth the earlier sphere stays, as on the CPU.
      if (z > nearest_z) {
        nearest_z = z;
        shade = __fdiv_rn(dz, spheres[s].radius);
        hit = s;
      }
    }
  }

  // One 4-byte store per pixel rather than four byte stores (rgba must be 4-byte aligned).
  uchar4 pixel = make_uchar4(0, 0, 0, 255);
  if (hit >= 0) {
    pixel.x = channel(spheres[hit].r, shade);
    pixel.y = channel(spheres[hit].g, shade);
    pixel.z = channel(spheres[hit].b, shade);
  }
  reinterpret_cast<uchar4*>(rgba)[static_cast<long long>(py) * width + px] = pixel;
}
