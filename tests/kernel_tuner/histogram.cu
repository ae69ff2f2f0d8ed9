/*
 * A 256-bin histogram of n values (each below 256): bins[v] counts the values equal to v. bins
 * must hold zeros before the launch; every block adds its counts to it.
 *
 * Tunables: block_size_x (threads), items_per_thread (values a thread counts, a grid apart),
 * use_shared (count in a block-private histogram in shared memory first, so that the global
 * atomics are one per bin and block instead of one per value).
 */

#define bin_count 256

__global__ void histogram(unsigned int* bins, const unsigned int* values, int n) {
#if use_shared == 1
  __shared__ unsigned int block_bins[bin_count];
  for (int b = threadIdx.x; b < bin_count; b += block_size_x) block_bins[b] = 0;
  __syncthreads();
#endif
  const int stride = gridDim.x * block_size_x;
  const int first = blockIdx.x * block_size_x + threadIdx.x;
#pragma unroll
  for (int k = 0; k < items_per_thread; k++) {
    const int i = first + k * stride;
    if (i < n) {
      const unsigned int bin = values[i] % bin_count;
#if use_shared == 1
      atomicAdd(&block_bins[bin], 1u);
#else
      atomicAdd(&bins[bin], 1u);
#endif
    }
  }
#if use_shared == 1
  __syncthreads();
  for (int b = threadIdx.x; b < bin_count; b += block_size_x)
    if (block_bins[b] != 0) atomicAdd(&bins[b], block_bins[b]);
#endif
}

// One thread per value, global atomics only: the answer.
__global__ void histogram_reference(unsigned int* bins, const unsigned int* values, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[values[i] % bin_count], 1u);
}
