// c = a + b for row-major rows×cols matrices, one element per thread: the block-shape study of
// memory coalescing. A warp covers consecutive columns of one row when BLOCK_X >= 32, so 32×16
// reads whole 128-byte lines while 16×32 splits each warp over two rows (two half-lines).
//
// clang-format off
// ptxrt: define BLOCK_X in {8, 16, 32} default 32
// ptxrt: define BLOCK_Y in {4, 8, 16, 32} default 16
// ptxrt: entry matrix_add grid=(ceil(cols/BLOCK_X), ceil(rows/BLOCK_Y)) block=(BLOCK_X, BLOCK_Y) — c = a + b, row-major, any rows and cols (rows/BLOCK_Y <= 65535)
// clang-format on

#ifndef BLOCK_X
#error "BLOCK_X must be defined (8, 16 or 32)"
#endif
#ifndef BLOCK_Y
#error "BLOCK_Y must be defined (4, 8, 16 or 32)"
#endif

extern "C" __global__ void __launch_bounds__(BLOCK_X* BLOCK_Y)
    matrix_add(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
               int rows, int cols) {
  const int col = blockIdx.x * BLOCK_X + threadIdx.x;
  const int row = blockIdx.y * BLOCK_Y + threadIdx.y;
  // The grid is rounded up to whole blocks; threads past the right or bottom edge do nothing.
  if (row >= rows || col >= cols) return;
  // rows*cols may exceed 2^31 elements, so the flat index is 64-bit.
  const long long i = static_cast<long long>(row) * cols + col;
  c[i] = a[i] + b[i];
}
