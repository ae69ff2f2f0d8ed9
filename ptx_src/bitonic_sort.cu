// Ascending bitonic sort of float keys, optionally carrying int values, in place over n_pow2
// elements (a power of two). Values are optional in every entry point: pass null for keys only.
//
// Order: keys ascending with NaN after everything (every NaN equal to every other); pairs with
// equal keys are ordered by value. That makes the pair order total, so the output does not
// depend on BLOCK_SIZE, and when the values are the original positions 0..n-1 it equals a stable
// sort by key. -0 and +0 are equal keys: compare keys by value, not by bits.
// Padding any n up to n_pow2: keys = NaN (quiet, 0x7fc00000) and values = INT_MAX sort last
// whatever the input holds; keys = +INFINITY also works when the input has no NaN keys.
//
// Host sequence, CHUNK = 2*BLOCK_SIZE:
//   bitonic_sort_shared   grid=(max(1, n_pow2/CHUNK))                     (stages k = 2 .. CHUNK)
//   for k = 2*CHUNK; k <= n_pow2; k *= 2:
//     for j = k/2; j >= CHUNK; j /= 2:
//       bitonic_merge_global grid=(ceil(n_pow2/2/BLOCK_SIZE)), args (j, k)
//     bitonic_merge_shared grid=(n_pow2/CHUNK), arg k                    (steps j = BLOCK_SIZE ..
//     1)
// all with block=(BLOCK_SIZE) and no dynamic shared memory.
//
// clang-format off
// ptxrt: define BLOCK_SIZE in {128, 256, 512, 1024} default 512
// ptxrt: entry bitonic_sort_shared grid=(max(1, n_pow2/(2*BLOCK_SIZE))) block=(BLOCK_SIZE) — sorts each chunk of 2*BLOCK_SIZE in shared memory, alternating directions as bitonic sort needs; values may be null
// ptxrt: entry bitonic_merge_global grid=(ceil(n_pow2/(2*BLOCK_SIZE))) block=(BLOCK_SIZE) — one compare-exchange step (distance j, stage k) over global memory; values may be null
// ptxrt: entry bitonic_merge_shared grid=(max(1, n_pow2/(2*BLOCK_SIZE))) block=(BLOCK_SIZE) — the steps j = BLOCK_SIZE .. 1 of stage k inside each chunk of 2*BLOCK_SIZE; values may be null
// clang-format on

#ifndef BLOCK_SIZE
#error "BLOCK_SIZE must be defined (128, 256, 512 or 1024)"
#endif
#if BLOCK_SIZE < 1 || (BLOCK_SIZE & (BLOCK_SIZE - 1)) != 0
#error "BLOCK_SIZE must be a power of two (pairs of a step are found with bit masks)"
#endif

// Each thread owns one compare-exchange pair, so a block covers 2*BLOCK_SIZE elements.
#define CHUNK (2 * BLOCK_SIZE)

__device__ __forceinline__ bool key_precedes(float key, float other) {
  return key < other || (key == key && other != other);
}

// True when (key, value) must come before (other_key, other_value) in ascending order.
__device__ __forceinline__ bool element_precedes(float key, int value, float other_key,
                                                 int other_value, bool has_values) {
  if (key_precedes(key, other_key)) return true;
  if (!has_values || key_precedes(other_key, key)) return false;
  return value < other_value;
}

// Pairs at distance j are numbered so that consecutive threads get consecutive lower elements:
// pair = q*j + r has its lower element at 2*q*j + r.
__device__ __forceinline__ long long lower_element(long long pair, long long j) {
  return 2 * pair - (pair & (j - 1));
}

// Orders keys[lower] and keys[lower + j] (and their values) ascending or descending. Works on
// global or shared arrays alike.
__device__ __forceinline__ void compare_exchange(float* keys, int* values, long long lower,
                                                 long long j, bool ascending) {
  const long long upper = lower + j;
  const float lower_key = keys[lower];
  const float upper_key = keys[upper];
  const bool has_values = values != nullptr;
  const int lower_value = has_values ? values[lower] : 0;
  const int upper_value = has_values ? values[upper] : 0;
  const bool upper_first =
      element_precedes(upper_key, upper_value, lower_key, lower_value, has_values);
  const bool lower_first =
      element_precedes(lower_key, lower_value, upper_key, upper_value, has_values);
  if (ascending ? upper_first : lower_first) {
    keys[lower] = upper_key;
    keys[upper] = lower_key;
    if (has_values) {
      values[lower] = upper_value;
      values[upper] = lower_value;
    }
  }
}

// Runs steps j = first_j .. 1 of stage k on the chunk staged in shared memory. The direction of
// a pair depends on its position in the whole array (bit k of the global index), so that the
// chunks end up as the alternating runs the next global stage merges.
__device__ __forceinline__ void merge_steps_in_chunk(float* keys, int* values,
                                                     long long chunk_start, int chunk_size,
                                                     long long first_j, long long k) {
  const int pair = threadIdx.x;
  for (long long j = first_j; j > 0; j /= 2) {
    // A chunk smaller than CHUNK (the whole array is smaller) leaves some threads idle.
    if (pair < chunk_size / 2) {
      const long long lower = lower_element(pair, j);
      compare_exchange(keys, values, lower, j, ((chunk_start + lower) & k) == 0);
    }
    __syncthreads();
  }
}

// Shared-memory staging: coalesced copies between the chunk in global memory and its tile.
__device__ __forceinline__ void load_chunk(const float* keys, const int* values, float* tile_keys,
                                           int* tile_values, long long chunk_start,
                                           int chunk_size) {
  for (int i = threadIdx.x; i < chunk_size; i += BLOCK_SIZE) {
    tile_keys[i] = keys[chunk_start + i];
    if (values != nullptr) tile_values[i] = values[chunk_start + i];
  }
  __syncthreads();
}

__device__ __forceinline__ void store_chunk(const float* tile_keys, const int* tile_values,
                                            float* keys, int* values, long long chunk_start,
                                            int chunk_size) {
  for (int i = threadIdx.x; i < chunk_size; i += BLOCK_SIZE) {
    keys[chunk_start + i] = tile_keys[i];
    if (values != nullptr) values[chunk_start + i] = tile_values[i];
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    bitonic_sort_shared(float* __restrict__ keys, int* __restrict__ values_or_null,
                        long long n_pow2) {
  __shared__ float tile_keys[CHUNK];
  __shared__ int tile_values[CHUNK];
  const long long chunk_start = static_cast<long long>(blockIdx.x) * CHUNK;
  // Surplus blocks leave as a whole, before any barrier.
  if (chunk_start >= n_pow2) return;
  const int chunk_size = n_pow2 < CHUNK ? static_cast<int>(n_pow2) : CHUNK;
  int* tile_values_or_null = values_or_null != nullptr ? tile_values : nullptr;

  load_chunk(keys, values_or_null, tile_keys, tile_values, chunk_start, chunk_size);
  for (long long k = 2; k <= chunk_size; k *= 2) {
    merge_steps_in_chunk(tile_keys, tile_values_or_null, chunk_start, chunk_size, k / 2, k);
  }
  store_chunk(tile_keys, tile_values, keys, values_or_null, chunk_start, chunk_size);
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    bitonic_merge_global(float* __restrict__ keys, int* __restrict__ values_or_null,
                         long long n_pow2, long long j, long long k) {
  const long long pair = static_cast<long long>(blockIdx.x) * BLOCK_SIZE + threadIdx.x;
  // The grid is rounded up to whole blocks; there are only n_pow2/2 pairs.
  if (pair >= n_pow2 / 2) return;
  const long long lower = lower_element(pair, j);
  compare_exchange(keys, values_or_null, lower, j, (lower & k) == 0);
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    bitonic_merge_shared(float* __restrict__ keys, int* __restrict__ values_or_null,
                         long long n_pow2, long long k) {
  __shared__ float tile_keys[CHUNK];
  __shared__ int tile_values[CHUNK];
  const long long chunk_start = static_cast<long long>(blockIdx.x) * CHUNK;
  if (chunk_start >= n_pow2) return;
  const int chunk_size = n_pow2 < CHUNK ? static_cast<int>(n_pow2) : CHUNK;
  int* tile_values_or_null = values_or_null != nullptr ? tile_values : nullptr;
  // Steps with j >= CHUNK cross chunks and were done by bitonic_merge_global.
  const long long first_j = k / 2 < BLOCK_SIZE ? k / 2 : BLOCK_SIZE;

  load_chunk(keys, values_or_null, tile_keys, tile_values, chunk_start, chunk_size);
  merge_steps_in_chunk(tile_keys, tile_values_or_null, chunk_start, chunk_size, first_j, k);
  store_chunk(tile_keys, tile_values, keys, values_or_null, chunk_start, chunk_size);
}
