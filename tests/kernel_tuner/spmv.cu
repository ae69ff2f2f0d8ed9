/*
 * y = A x for a sparse matrix A of `rows` rows in CSR form: row r's nonzeros are values[k] in
 * column columns[k] for row_offsets[r] <= k < row_offsets[r + 1] (the offsets non-decreasing,
 * from 0 to the number of nonzeros). threads_per_row threads share a row, so a block works on
 * block_size_x / threads_per_row rows at once; a row's threads then add their sums with shuffles.
 *
 * Tunables: block_size_x (threads), threads_per_row (1 to 32, a power of two), read_only (read x
 * through the read-only data cache: its reads scatter).
 * Fixed: rows.
 */

#define rows_per_block (block_size_x / threads_per_row)

#if read_only == 1
#define load_x(index) __ldg(x + (index))
#else
#define load_x(index) x[index]
#endif

__global__ void spmv(float* y, const int* row_offsets, const int* columns, const float* values,
                     const float* x) {
  const int row = blockIdx.x * rows_per_block + threadIdx.x / threads_per_row;
  const int lane = threadIdx.x % threads_per_row;
  float sum = 0.0f;
  if (row < rows) {
    for (int k = row_offsets[row] + lane; k < row_offsets[row + 1]; k += threads_per_row)
      sum += values[k] * load_x(columns[k]);
  }
  // A row's threads are neighbours within one warp, so shuffles of width threads_per_row add them.
  for (int offset = threads_per_row / 2; offset > 0; offset /= 2)
    sum += __shfl_down_sync(0xffffffffu, sum, offset, threads_per_row);
  if (row < rows && lane == 0) y[row] = sum;
}

// One thread per row: the answer.
__global__ void spmv_reference(float* y, const int* row_offsets, const int* columns,
                               const float* values, const float* x) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float sum = 0.0f;
  for (int k = row_offsets[row]; k < row_offsets[row + 1]; k++) sum += values[k] * x[columns[k]];
  y[row] = sum;
}
