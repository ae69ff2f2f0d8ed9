/*
 * c = a + b over n floats. Each thread adds tile_size_x elements that lie a block apart, so every
 * load of a warp stays one coalesced segment whatever the tile.
 *
 * Tunables: block_size_x (threads), tile_size_x (elements per thread).
 */
__global__ void vector_add(float* c, const float* a, const float* b, int n) {
  int first = blockIdx.x * block_size_x * tile_size_x + threadIdx.x;
#pragma unroll
  for (int k = 0; k < tile_size_x; k++) {
    int i = first + k * block_size_x;
    if (i < n) c[i] = a[i] + b[i];
  }
}
