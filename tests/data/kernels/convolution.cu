/*
 * A 2-D convolution written the way Kernel Tuner's users write kernels: the tunables are bare
 * macros this file uses without declaring (the tuner defines them), the image and filter sizes
 * are macros too, the filter sits in constant memory, and a naive kernel beside the tuned one
 * computes the answer to check against. Nothing here is specific to ptxrt.
 *
 * Tunables: block_size_x, block_size_y (threads), tile_size_x, tile_size_y (outputs per thread
 * in x and y), use_padding (pad shared memory rows against bank conflicts), read_only (load the
 * input through the read-only cache).
 * Sizes: image_width, image_height (the output), filter_width, filter_height (odd).
 */

#define border_height ((filter_height / 2) * 2)
#define border_width ((filter_width / 2) * 2)
#define input_height (image_height + border_height)
#define input_width (image_width + border_width)

#define i_end min(block_size_y * tile_size_y + border_height, input_height)
#define j_end min(block_size_x * tile_size_x + border_width, input_width)

#if read_only == 1
#define LDG(x, y) __ldg(x + y)
#else
#define LDG(x, y) x[y]
#endif

#if use_padding == 1
// A row of 32 or more floats that is not a multiple of 32 long would put a column's reads on
// few banks: one extra float spreads them.
#define SHARED_MEM_PADDING (block_size_x % 32 == 0 ? 0 : 1)
#else
#define SHARED_MEM_PADDING 0
#endif

__constant__ float d_filter[33 * 33];  // large enough for the largest filter

__global__ void convolution_kernel(float *output, const float *input, const float *filter) {
  int ty = threadIdx.y;
  int tx = threadIdx.x;
  int by = blockIdx.y * block_size_y * tile_size_y;
  int bx = blockIdx.x * block_size_x * tile_size_x;

  __shared__ float sh_input[block_size_y * tile_size_y + border_height]
                           [block_size_x * tile_size_x + border_width + SHARED_MEM_PADDING];

  // The block's input tile with its border: every output of the block reads from here.
  for (int i = ty; i < i_end; i += block_size_y) {
    for (int j = tx; j < j_end; j += block_size_x) {
      int y = by + i;
      int x = bx + j;
      if (y < input_height && x < input_width) sh_input[i][j] = LDG(input, y * input_width + x);
    }
  }
  __syncthreads();

  float sum[tile_size_y][tile_size_x];
#pragma unroll
  for (int yi = 0; yi < tile_size_y; yi++)
#pragma unroll
    for (int xi = 0; xi < tile_size_x; xi++) sum[yi][xi] = 0.0f;

  for (int i = 0; i < filter_height; i++) {
    for (int j = 0; j < filter_width; j++) {
#pragma unroll
      for (int yi = 0; yi < tile_size_y; yi++)
#pragma unroll
        for (int xi = 0; xi < tile_size_x; xi++)
          sum[yi][xi] += sh_input[ty + yi * block_size_y + i][tx + xi * block_size_x + j] *
                         d_filter[i * filter_width + j];
    }
  }

#pragma unroll
  for (int yi = 0; yi < tile_size_y; yi++) {
#pragma unroll
    for (int xi = 0; xi < tile_size_x; xi++) {
      int y = by + ty + yi * block_size_y;
      int x = bx + tx + xi * block_size_x;
      if (y < image_height && x < image_width) output[y * image_width + x] = sum[yi][xi];
    }
  }
}

// One thread per output, the filter read from global memory: slow and plainly right.
__global__ void convolution_naive(float *output, const float *input, const float *filter) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= image_width || y >= image_height) return;
  float sum = 0.0f;
  for (int i = 0; i < filter_height; i++)
    for (int j = 0; j < filter_width; j++)
      sum += input[(y + i) * input_width + x + j] * filter[i * filter_width + j];
  output[y * image_width + x] = sum;
}
