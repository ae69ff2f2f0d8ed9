/*
 * B = transpose(A) for A of a_height rows by a_width columns (row-major). A block moves a square
 * tile of block_size_x by block_size_x elements through shared memory, so both the read of A and
 * the write of B are coalesced; its block_size_y rows of threads each move
 * block_size_x / block_size_y rows of the tile.
 *
 * Tunables: block_size_x (the tile's edge and the threads in x), block_size_y (threads in y, a
 * divisor of block_size_x), use_padding (one spare float per shared row), read_only (load A
 * through the read-only data cache).
 * Fixed: a_width, a_height.
 */

#if use_padding == 1
// Without the spare float, the tile's column that a warp reads on the way out lies on one bank.
#define tile_row (block_size_x + 1)
#else
#define tile_row block_size_x
#endif

#if read_only == 1
#define load_a(pointer, index) __ldg((pointer) + (index))
#else
#define load_a(pointer, index) (pointer)[index]
#endif

__global__ void transpose(float* B, const float* A) {
  __shared__ float tile[block_size_x][tile_row];
  const int x = blockIdx.x * block_size_x + threadIdx.x;
  const int top = blockIdx.y * block_size_x;
  for (int row = threadIdx.y; row < block_size_x; row += block_size_y) {
    const int y = top + row;
    if (x < a_width && y < a_height) tile[row][threadIdx.x] = load_a(A, y * a_width + x);
  }
  __syncthreads();

  // The same block's tile leaves as columns: what was blockIdx.y is now the x of B.
  const int out_x = top + threadIdx.x;
  const int out_top = blockIdx.x * block_size_x;
  for (int row = threadIdx.y; row < block_size_x; row += block_size_y) {
    const int out_y = out_top + row;
    if (out_x < a_height && out_y < a_width) B[out_y * a_height + out_x] = tile[threadIdx.x][row];
  }
}

// One thread per element: the answer.
__global__ void transpose_reference(float* B, const float* A) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < a_width && y < a_height) B[x * a_height + y] = A[y * a_width + x];
}
