/*
 * The first stage of a sum of n floats: num_blocks blocks each sum one contiguous chunk of the
 * input and write one partial sum, partial_sums[blockIdx.x]; a second launch (or the host) adds
 * the partials. Which elements a partial holds depends on num_blocks, so only the partials'
 * total, not each of them, is the same for every config.
 *
 * Tunables: block_size_x (threads), vector (floats per load: 1, 2 or 4), use_shuffle (finish
 * each warp's sum with shuffles instead of shared memory), num_blocks (the grid, one partial each).
 */

// A chunk is a whole number of float4s, so that every vector load of it is aligned.
__device__ __forceinline__ int chunk_length(int n, int blocks) {
  return (n + 4 * blocks - 1) / (4 * blocks) * 4;
}

__device__ __forceinline__ float load_sum(const float* in, int i) {
#if vector == 4
  const float4 v = *reinterpret_cast<const float4*>(in + i);
  return (v.x + v.y) + (v.z + v.w);
#elif vector == 2
  const float2 v = *reinterpret_cast<const float2*>(in + i);
  return v.x + v.y;
#else
  return in[i];
#endif
}

__global__ void sum_floats(float* partial_sums, const float* in, int n) {
  __shared__ float sums[block_size_x];
  const int length = chunk_length(n, num_blocks);
  const int begin = blockIdx.x * length;
  const int end = min(n, begin + length);

  float sum = 0.0f;
  for (int i = begin + threadIdx.x * vector; i < end; i += block_size_x * vector) {
    if (i + vector <= end) {
      sum += load_sum(in, i);
    } else {
      for (int j = i; j < end; j++) sum += in[j];
    }
  }

#if use_shuffle == 1
  sums[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = block_size_x / 2; stride >= 32; stride /= 2) {
    if (threadIdx.x < stride) sums[threadIdx.x] += sums[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x < 32) {
    sum = sums[threadIdx.x];
    for (int offset = 16; offset > 0; offset /= 2)
      sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (threadIdx.x == 0) partial_sums[blockIdx.x] = sum;
  }
#else
  sums[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = block_size_x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) sums[threadIdx.x] += sums[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial_sums[blockIdx.x] = sums[0];
#endif
}
