/*
 * One explicit time step of heat diffusion on a grid of nx by ny cells (five-point stencil). The
 * cells on the grid's edge hold their temperature (a fixed boundary), so every cell is written.
 *
 * Tunables: block_size_x, block_size_y (threads), tile_size_y (rows per thread, a block apart),
 * use_shared (stage the block's cells and their halo in shared memory).
 * Fixed: nx, ny (cells). alpha is the diffusion number, below 0.25 for a stable step.
 */

#define tile_height (block_size_y * tile_size_y)

__device__ __forceinline__ float diffused(float alpha, float centre, float west, float east,
                                          float north, float south) {
  return centre + alpha * (west + east + north + south - 4.0f * centre);
}

__global__ void diffuse(float* next, const float* current, float alpha) {
  const int x = blockIdx.x * block_size_x + threadIdx.x;
  const int top = blockIdx.y * tile_height;

#if use_shared == 1
  // Each cell is read by five threads: from shared memory, global memory sees it once per block.
  __shared__ float cells[tile_height + 2][block_size_x + 2];
  for (int row = threadIdx.y; row < tile_height + 2; row += block_size_y) {
    for (int column = threadIdx.x; column < block_size_x + 2; column += block_size_x) {
      const int gy = top + row - 1;
      const int gx = blockIdx.x * block_size_x + column - 1;
      cells[row][column] =
          (gy >= 0 && gy < ny && gx >= 0 && gx < nx) ? current[gy * nx + gx] : 0.0f;
    }
  }
  __syncthreads();
#endif

  if (x >= nx) return;
#pragma unroll
  for (int k = 0; k < tile_size_y; k++) {
    const int local_y = threadIdx.y + k * block_size_y;
    const int y = top + local_y;
    if (y >= ny) continue;
    if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) {
      next[y * nx + x] = current[y * nx + x];
      continue;
    }
#if use_shared == 1
    const int lx = threadIdx.x + 1;
    const int ly = local_y + 1;
    next[y * nx + x] = diffused(alpha, cells[ly][lx], cells[ly][lx - 1], cells[ly][lx + 1],
                                cells[ly - 1][lx], cells[ly + 1][lx]);
#else
    const int i = y * nx + x;
    next[i] = diffused(alpha, current[i], current[i - 1], current[i + 1], current[i - nx],
                       current[i + nx]);
#endif
  }
}

// One thread per cell from global memory: the answer the tuned kernel must give.
__global__ void diffuse_reference(float* next, const float* current, float alpha) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= nx || y >= ny) return;
  const int i = y * nx + x;
  if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) {
    next[i] = current[i];
    return;
  }
  next[i] = current[i] + alpha * (current[i - 1] + current[i + 1] + current[i - nx] +
                                  current[i + nx] - 4.0f * current[i]);
}
