// matmul_tiled's entry, signature and TILE_WIDTH, with defects planted for the tuner's tests:
// PLANT=0 computes C = A·B; PLANT=1 adds 1 to every element (a wrong result that verification
// must catch); PLANT=2 stores 2^40 floats past C, where nothing is allocated (an illegal address:
// a sticky fault that poisons the process's context). PLANT is declared first and counts down, so
// that the fault comes first in enumeration order and every other config runs after it.
//
// ptxrt: define PLANT in {2, 1, 0} default 0
// ptxrt: define TILE_WIDTH in {8, 16} default 16
// ptxrt: tune PLANT TILE_WIDTH
// ptxrt: constraint PLANT == 0 || TILE_WIDTH == 16
// ptxrt: entry matmul_tiled grid=(ceil(N/TILE_WIDTH), ceil(M/TILE_WIDTH)) block=(TILE_WIDTH, TILE_WIDTH)

extern "C" __global__ void matmul_tiled(const float* __restrict__ a, const float* __restrict__ b,
                                        float* __restrict__ c, int m, int n, int k) {
  const int row = blockIdx.y * TILE_WIDTH + threadIdx.y;
  const int col = blockIdx.x * TILE_WIDTH + threadIdx.x;
  if (row >= m || col >= n) return;
  float sum = 0.0f;
  for (int i = 0; i < k; ++i) sum += a[static_cast<long long>(row) * k + i] * b[static_cast<long long>(i) * n + col];
#if PLANT == 1
  sum += 1.0f;
#endif
#if PLANT == 2
  c[static_cast<long long>(row) * n + col + (1LL << 40)] = sum;
#else
  c[static_cast<long long>(row) * n + col] = sum;
#endif
}
