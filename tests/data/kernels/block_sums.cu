// A per-block partial reduction, Kernel Tuner-style: each block of block_size_x threads sums
// ITEMS_PER_THREAD elements a thread into one partial sum, so how many partials there are (the
// output's layout) changes with the config. Its problem, block_sums.json, checks the sum and the
// count of the partials rather than the elements, and makes the input on the GPU with make_input.
// block_size_x: a power of 2 from 32 to 1024. ITEMS_PER_THREAD: 1 or more.

// Values in [0.5, 1.5): every partial is positive, so the count of non-zero partials is the count
// of blocks.
extern "C" __global__ void make_input(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 0.5f + (float)((i * 7919u) % 1024u) / 1024.0f;
}

extern "C" __global__ void block_sums(const float* x, float* partial, int n) {
  __shared__ float sums[block_size_x];
  const long long first = (long long)blockIdx.x * block_size_x * ITEMS_PER_THREAD + threadIdx.x;
  float sum = 0.0f;
  for (int item = 0; item < ITEMS_PER_THREAD; ++item) {
    const long long i = first + (long long)item * block_size_x;
    if (i < n) sum += x[i];
  }
  sums[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = block_size_x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) sums[threadIdx.x] += sums[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = sums[0];
}
