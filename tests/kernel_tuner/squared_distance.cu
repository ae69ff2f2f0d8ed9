/*
 * A cost function: the sum of squared differences between a model's values and the observed
 * ones, (model[i] - observed[i])^2 over n values, in one launch that leaves one partial cost per
 * block, partial_costs[blockIdx.x]; the caller adds the partials. A block covers
 * block_size_x * items_per_thread consecutive values, so the number of partials, and what each
 * holds, depends on the config: only their total is the same for every config.
 *
 * Tunables: block_size_x (threads), items_per_thread (values a thread adds before the block's
 * sum), use_shuffle (finish each warp's sum with shuffles instead of shared memory).
 */

__global__ void squared_distance(float* partial_costs, const float* model, const float* observed,
                                 int n) {
  __shared__ float sums[block_size_x];
  // Consecutive threads read consecutive values on every step, so each load is coalesced.
  const int first = blockIdx.x * block_size_x * items_per_thread + threadIdx.x;
  float sum = 0.0f;
  for (int k = 0; k < items_per_thread; k++) {
    const int i = first + k * block_size_x;
    if (i < n) {
      const float difference = model[i] - observed[i];
      sum += difference * difference;
    }
  }
  sums[threadIdx.x] = sum;
  __syncthreads();
#if use_shuffle == 1
  for (int stride = block_size_x / 2; stride >= 32; stride /= 2) {
    if (threadIdx.x < stride) sums[threadIdx.x] += sums[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x < 32) {
    sum = sums[threadIdx.x];
    for (int offset = 16; offset > 0; offset /= 2)
      sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (threadIdx.x == 0) partial_costs[blockIdx.x] = sum;
  }
#else
  for (int stride = block_size_x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) sums[threadIdx.x] += sums[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial_costs[blockIdx.x] = sums[0];
#endif
}

// The whole cost, summed in double by one block of 1024 threads, in partial_costs[0]: the total
// every config's partials must add up to.
__global__ void squared_distance_reference(float* partial_costs, const float* model,
                                           const float* observed, int n) {
  __shared__ double sums[1024];
  double sum = 0.0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const double difference = (double)model[i] - observed[i];
    sum += difference * difference;
  }
  sums[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) sums[threadIdx.x] += sums[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial_costs[0] = (float)sums[0];
}

// ptxrt's check of a config (one block of 256 threads, compiled with the config's defines): its
// partials added in double against the reference's total; a NaN (a partial left unwritten) fails.
__global__ void costs_agree(const float* partial_costs, const float* reference_costs, int n,
                            int* verdict, float* error) {
  __shared__ double sums[256];
  const int partials =
      (n + block_size_x * items_per_thread - 1) / (block_size_x * items_per_thread);
  double sum = 0.0;
  for (int i = threadIdx.x; i < partials; i += blockDim.x) sum += partial_costs[i];
  sums[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) sums[threadIdx.x] += sums[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const double expected = reference_costs[0];
    const double difference = fabs(sums[0] - expected);
    *error = (float)difference;
    if (!(difference <= 1e-4 * fabs(expected))) *verdict = 1;
  }
}
