// C = A·B, fp32, row-major, A is M×K, B is K×N, through shared-memory tiles: a block stages one
// TILE_WIDTH×TILE_WIDTH tile of A and one of B at a time, and each element staged is then read
// TILE_WIDTH times from shared memory instead of from global memory.
//
// clang-format off
// ptxrt: define TILE_WIDTH in {4, 8, 16, 32} default 16
// ptxrt: tune TILE_WIDTH
// ptxrt: entry matmul_tiled grid=(ceil(N/TILE_WIDTH), ceil(M/TILE_WIDTH)) block=(TILE_WIDTH, TILE_WIDTH) — C = A·B, row-major, any M, N, K
// clang-format on

#ifndef TILE_WIDTH
#error "TILE_WIDTH must be defined (4, 8, 16 or 32)"
#endif

extern "C" __global__ void __launch_bounds__(TILE_WIDTH* TILE_WIDTH)
    matmul_tiled(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                 int m, int n, int k) {
  // Exactly 2·TILE_WIDTH²·4 bytes of static shared memory, nothing else (a test checks it).
  __shared__ float tile_a[TILE_WIDTH][TILE_WIDTH];
  __shared__ float tile_b[TILE_WIDTH][TILE_WIDTH];

  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int row = blockIdx.y * TILE_WIDTH + ty;
  const int col = blockIdx.x * TILE_WIDTH + tx;
  // Written as a quotient plus a remainder test so that k close to INT_MAX cannot overflow.
  const int tiles = k / TILE_WIDTH + (k % TILE_WIDTH != 0);

  float sum = 0.0f;
  for (int tile = 0; tile < tiles; ++tile) {
    const int a_col = tile * TILE_WIDTH + tx;
    const int b_row = tile * TILE_WIDTH + ty;
    // Elements past the edge of A or B are staged as zero, so they add nothing to the dot
    // product and the inner loop needs no bounds test. Threads outside C still stage their
    // element: the rest of the block needs it.
    tile_a[ty][tx] = (row < m && a_col < k) ? a[static_cast<long long>(row) * k + a_col] : 0.0f;
    tile_b[ty][tx] = (b_row < k && col < n) ? b[static_cast<long long>(b_row) * n + col] : 0.0f;
    __syncthreads();
    // tile_a[ty][i] is one address per warp row (a broadcast) and tile_b[i][tx] is consecutive
    // words, so neither read has bank conflicts.
#pragma unroll
    for (int i = 0; i < TILE_WIDTH; ++i) sum += tile_a[ty][i] * tile_b[i][tx];
    // The next iteration overwrites the tiles; nobody may still be reading them.
    __syncthreads();
  }
  // No early return above: every thread must reach both barriers of every iteration.
  if (row < m && col < n) c[static_cast<long long>(row) * n + col] = sum;
}
