/*
 * A 2-D convolution of an image with a filter held in constant memory. The input carries a
 * border of filter_width - 1 columns and filter_height - 1 rows, so every output pixel has all
 * of its neighbours and no thread branches on the image's edge while it sums.
 *
 * Tunables: block_size_x, block_size_y (threads), tile_size_x, tile_size_y (output pixels per
 * thread, a block apart), use_padding (one spare float per shared row).
 * Fixed: image_width, image_height (the output), filter_width, filter_height (odd, at most 31).
 */

#define input_width (image_width + filter_width - 1)
#define input_height (image_height + filter_height - 1)
#define tile_width (block_size_x * tile_size_x)
#define tile_height (block_size_y * tile_size_y)

#if use_padding == 1
// A shared row whose length is a multiple of 32 floats would put a thread's column of reads on one
// bank when block_size_x is smaller than a warp: one spare float staggers the rows.
#define shared_row (tile_width + filter_width - 1 + 1)
#else
#define shared_row (tile_width + filter_width - 1)
#endif

__constant__ float filter[31 * 31];

__global__ void convolution_2d(float* output, const float* input) {
  __shared__ float window[tile_height + filter_height - 1][shared_row];
  const int left = blockIdx.x * tile_width;
  const int top = blockIdx.y * tile_height;

  // The block's input window, border included: every sum of the block reads only from here.
  for (int row = threadIdx.y; row < tile_height + filter_height - 1; row += block_size_y) {
    for (int column = threadIdx.x; column < tile_width + filter_width - 1; column += block_size_x) {
      const int y = top + row;
      const int x = left + column;
      window[row][column] =
          (y < input_height && x < input_width) ? input[y * input_width + x] : 0.0f;
    }
  }
  __syncthreads();

  float sum[tile_size_y][tile_size_x] = {};
  for (int fy = 0; fy < filter_height; fy++) {
    for (int fx = 0; fx < filter_width; fx++) {
      const float weight = filter[fy * filter_width + fx];
#pragma unroll
      for (int ty = 0; ty < tile_size_y; ty++) {
#pragma unroll
        for (int tx = 0; tx < tile_size_x; tx++) {
          sum[ty][tx] +=
              weight *
              window[threadIdx.y + ty * block_size_y + fy][threadIdx.x + tx * block_size_x + fx];
        }
      }
    }
  }

#pragma unroll
  for (int ty = 0; ty < tile_size_y; ty++) {
#pragma unroll
    for (int tx = 0; tx < tile_size_x; tx++) {
      const int y = top + threadIdx.y + ty * block_size_y;
      const int x = left + threadIdx.x + tx * block_size_x;
      if (y < image_height && x < image_width) output[y * image_width + x] = sum[ty][tx];
    }
  }
}

// One thread per output pixel, straight from global memory: the answer the tuned kernel must give.
__global__ void convolution_2d_reference(float* output, const float* input) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= image_width || y >= image_height) return;
  float sum = 0.0f;
  for (int fy = 0; fy < filter_height; fy++)
    for (int fx = 0; fx < filter_width; fx++)
      sum += filter[fy * filter_width + fx] * input[(y + fy) * input_width + x + fx];
  output[y * image_width + x] = sum;
}
