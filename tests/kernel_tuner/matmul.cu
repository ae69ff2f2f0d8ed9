/*
 * C = A B for n by n row-major matrices. A block computes a tile of (block_size_y * tile_size_y)
 * rows by (block_size_x * tile_size_x) columns of C, stepping through the shared dimension
 * tile_k columns of A (rows of B) at a time through shared memory; each thread keeps
 * tile_size_y by tile_size_x sums in registers, its outputs a block apart so that a warp's
 * stores and shared reads stay contiguous. Every edge is guarded: n need not be a multiple of
 * any tile.
 *
 * Tunables: block_size_x, block_size_y (threads), tile_size_x, tile_size_y (outputs per thread),
 * tile_k (the shared dimension's step).
 * Fixed: n.
 */

#define tile_rows (block_size_y * tile_size_y)
#define tile_columns (block_size_x * tile_size_x)
#define threads (block_size_x * block_size_y)

__global__ void matmul(float* C, const float* A, const float* B) {
  __shared__ float a_tile[tile_rows][tile_k];
  __shared__ float b_tile[tile_k][tile_columns];
  const int thread = threadIdx.y * block_size_x + threadIdx.x;
  const int first_row = blockIdx.y * tile_rows;
  const int first_column = blockIdx.x * tile_columns;

  float sum[tile_size_y][tile_size_x] = {};
  for (int k0 = 0; k0 < n; k0 += tile_k) {
    for (int i = thread; i < tile_rows * tile_k; i += threads) {
      const int row = i / tile_k, k = i % tile_k;
      const int y = first_row + row, kk = k0 + k;
      a_tile[row][k] = (y < n && kk < n) ? A[y * n + kk] : 0.0f;
    }
    for (int i = thread; i < tile_k * tile_columns; i += threads) {
      const int k = i / tile_columns, column = i % tile_columns;
      const int x = first_column + column, kk = k0 + k;
      b_tile[k][column] = (x < n && kk < n) ? B[kk * n + x] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < tile_k; k++) {
      float b[tile_size_x];
#pragma unroll
      for (int tx = 0; tx < tile_size_x; tx++) b[tx] = b_tile[k][threadIdx.x + tx * block_size_x];
#pragma unroll
      for (int ty = 0; ty < tile_size_y; ty++) {
        const float a = a_tile[threadIdx.y + ty * block_size_y][k];
#pragma unroll
        for (int tx = 0; tx < tile_size_x; tx++) sum[ty][tx] += a * b[tx];
      }
    }
    __syncthreads();
  }

#pragma unroll
  for (int ty = 0; ty < tile_size_y; ty++) {
#pragma unroll
    for (int tx = 0; tx < tile_size_x; tx++) {
      const int y = first_row + threadIdx.y + ty * block_size_y;
      const int x = first_column + threadIdx.x + tx * block_size_x;
      if (y < n && x < n) C[y * n + x] = sum[ty][tx];
    }
  }
}

// One thread per element of C, dot products straight from global memory: the answer.
__global__ void matmul_reference(float* C, const float* A, const float* B) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= n || y >= n) return;
  float sum = 0.0f;
  for (int k = 0; k < n; k++) sum += A[y * n + k] * B[k * n + x];
  C[y * n + x] = sum;
}
