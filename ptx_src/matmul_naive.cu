// C = A·B, fp32, row-major, A is M×K, B is K×N: the untiled baseline. Each thread reads a whole
// row of A and column of B from global memory, so every input element is fetched from DRAM (or
// L2) once per output it contributes to; matmul_tiled.cu cuts that by TILE_WIDTH.
//
// clang-format off
// ptxrt: define BLOCK_SIZE in {8, 16, 32} default 16
// ptxrt: entry matmul_naive grid=(ceil(N/BLOCK_SIZE), ceil(M/BLOCK_SIZE)) block=(BLOCK_SIZE, BLOCK_SIZE) — C = A·B, row-major, any M, N, K
// clang-format on

#ifndef BLOCK_SIZE
#error "BLOCK_SIZE must be defined (8, 16 or 32)"
#endif

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE* BLOCK_SIZE)
    matmul_naive(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                 int m, int n, int k) {
  const int row = blockIdx.y * BLOCK_SIZE + threadIdx.y;
  const int col = blockIdx.x * BLOCK_SIZE + threadIdx.x;
  // The grid is rounded up to whole blocks; threads outside C have nothing to compute.
  if (row >= m || col >= n) return;
  // M*K and K*N may exceed 2^31 elements, so row offsets are 64-bit.
  const float* a_row = a + static_cast<long long>(row) * k;
  const float* b_col = b + col;
  float sum = 0.0f;
  for (int i = 0; i < k; ++i) sum += a_row[i] * b_col[static_cast<long long>(i) * n];
  c[static_cast<long long>(row) * n + col] = sum;
}
