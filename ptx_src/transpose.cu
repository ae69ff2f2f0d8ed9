// out = in^T, where in is a row-major rows×cols matrix and out is cols×rows: three versions of
// the memory-coalescing study. Each block covers one TILE_DIM×TILE_DIM tile with
// TILE_DIM×BLOCK_ROWS threads, so each thread moves TILE_DIM/BLOCK_ROWS elements.
//   naive:  reads rows of `in` (coalesced), writes columns of `out` (one 32-byte sector per
//           element: strided).
//   shared: stages the tile in shared memory so that both the read and the write are along rows;
//           reading a tile column makes a warp hit few banks (32-way conflicts at TILE_DIM=32).
//   padded: the same with one extra float per tile row, so that a tile column spans all banks.
//
// clang-format off
// ptxrt: define TILE_DIM in {16, 32} default 32
// ptxrt: define BLOCK_ROWS in {4, 8, 16, 32} default 8
// ptxrt: entry transpose_naive grid=(ceil(cols/TILE_DIM), ceil(rows/TILE_DIM)) block=(TILE_DIM, BLOCK_ROWS) — out = in^T, in is rows×cols, strided writes
// ptxrt: entry transpose_shared grid=(ceil(cols/TILE_DIM), ceil(rows/TILE_DIM)) block=(TILE_DIM, BLOCK_ROWS) — out = in^T through a shared tile (bank conflicts on the column read)
// ptxrt: entry transpose_padded grid=(ceil(cols/TILE_DIM), ceil(rows/TILE_DIM)) block=(TILE_DIM, BLOCK_ROWS) — out = in^T through a shared tile padded to TILE_DIM+1 columns (conflict-free)
// clang-format on

#ifndef TILE_DIM
#error "TILE_DIM must be defined (16 or 32)"
#endif
#ifndef BLOCK_ROWS
#error "BLOCK_ROWS must be defined (4, 8, 16 or 32)"
#endif
#if BLOCK_ROWS > TILE_DIM || TILE_DIM % BLOCK_ROWS != 0
#error \
    "BLOCK_ROWS must divide TILE_DIM (each thread moves TILE_DIM/BLOCK_ROWS elements of a tile column)"
#endif

extern "C" __global__ void __launch_bounds__(TILE_DIM* BLOCK_ROWS)
    transpose_naive(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  const int col = blockIdx.x * TILE_DIM + threadIdx.x;
  const int row0 = blockIdx.y * TILE_DIM + threadIdx.y;
  // Tiles on the right or bottom edge are partial; elements outside `in` are skipped.
  if (col >= cols) return;
  for (int offset = 0; offset < TILE_DIM; offset += BLOCK_ROWS) {
    const int row = row0 + offset;
    if (row < rows) {
      out[static_cast<long long>(col) * rows + row] = in[static_cast<long long>(row) * cols + col];
    }
  }
}

// The two tiled versions differ only in the tile's row pitch: TILE_DIM + Padding floats.
// With Padding = 0 a tile column is TILE_DIM words apart, i.e. always the same bank when
// TILE_DIM = 32; with Padding = 1 consecutive rows shift by one bank.
template <int Padding>
__device__ __forceinline__ void transpose_through_tile(const float* __restrict__ in,
                                                       float* __restrict__ out, int rows,
                                                       int cols) {
  __shared__ float tile[TILE_DIM][TILE_DIM + Padding];

  // Read tile (blockIdx.y, blockIdx.x) of `in` row by row.
  int col = blockIdx.x * TILE_DIM + threadIdx.x;
  int row0 = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int offset = 0; offset < TILE_DIM; offset += BLOCK_ROWS) {
    const int row = row0 + offset;
    // Partial edge tiles: outside elements are never written back, so they are left unset.
    if (row < rows && col < cols) {
      tile[threadIdx.y + offset][threadIdx.x] = in[static_cast<long long>(row) * cols + col];
    }
  }
  __syncthreads();

  // Write it as tile (blockIdx.x, blockIdx.y) of `out` (cols×rows), again row by row, so the
  // global write is coalesced; the transposition happens in the shared-memory index.
  col = blockIdx.y * TILE_DIM + threadIdx.x;   // a column of out = a row of in
  row0 = blockIdx.x * TILE_DIM + threadIdx.y;  // a row of out = a column of in
  for (int offset = 0; offset < TILE_DIM; offset += BLOCK_ROWS) {
    const int row = row0 + offset;
    if (row < cols && col < rows) {
      out[static_cast<long long>(row) * rows + col] = tile[threadIdx.x][threadIdx.y + offset];
    }
  }
}

extern "C" __global__ void __launch_bounds__(TILE_DIM* BLOCK_ROWS)
    transpose_shared(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  transpose_through_tile<0>(in, out, rows, cols);
}

extern "C" __global__ void __launch_bounds__(TILE_DIM* BLOCK_ROWS)
    transpose_padded(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  transpose_through_tile<1>(in, out, rows, cols);
}
