// Histograms of n unsigned values into BINS bins (value v counts in bin min(v, BINS - 1)), added
// into `histogram`, which the caller zeroes first. Counts are integer atomics: exact, in any
// order. Both entries are grid-stride loops, best launched with about as many blocks as are
// resident at once (each block pays for zeroing and flushing its counters once).
//
// histogram_block: each block keeps all BINS counters in its own shared memory, adds its slice
// with shared-memory atomics, then adds its non-zero counters to the global histogram.
//
// histogram_cluster (sm_90 and newer): a thread-block cluster of CLUSTER_SIZE blocks keeps one
// histogram spread over its blocks' shared memory (distributed shared memory): block r of the
// cluster owns bins [r·BINS/CLUSTER_SIZE, (r+1)·BINS/CLUSTER_SIZE), and every thread adds into
// whichever block owns its value's bin, through cluster.map_shared_rank. A block holds
// BINS/CLUSTER_SIZE counters instead of BINS, so more blocks fit on an SM (or a histogram too
// large for one block's shared memory fits at all), and a cluster flushes each bin once instead
// of each block; the price is that most adds go to another SM's shared memory.
//
// Shared memory is dynamic (BINS·4 bytes for histogram_block, BINS/CLUSTER_SIZE·4 for
// histogram_cluster): 32768 bins need 128 KiB, over the 48 KiB of static shared memory.
// Clusters stay within the portable 8 blocks, which every cluster-capable device runs without
// the kernel's opt-in.
//
// clang-format off
// ptxrt: define BINS in {256, 1024, 4096, 16384, 32768} default 4096
// ptxrt: define BLOCK_SIZE in {128, 256, 512, 1024} default 256
// ptxrt: define CLUSTER_SIZE in {2, 4, 8} default 4
// ptxrt: entry histogram_block grid=(G) block=(BLOCK_SIZE) dynamic shared BINS*4 bytes — histogram[min(v, BINS-1)] += 1 for every v in values[0..n); any G >= 1
// ptxrt: entry histogram_cluster grid=(G*CLUSTER_SIZE) block=(BLOCK_SIZE) cluster=(CLUSTER_SIZE) dynamic shared BINS/CLUSTER_SIZE*4 bytes — the same histogram through distributed shared memory; sm_90 and newer
// clang-format on

#ifndef BINS
#error "BINS must be defined (256, 1024, 4096, 16384 or 32768)"
#endif
#ifndef BLOCK_SIZE
#error "BLOCK_SIZE must be defined (128, 256, 512 or 1024)"
#endif
#ifndef CLUSTER_SIZE
#error "CLUSTER_SIZE must be defined (2, 4 or 8)"
#endif
#if BINS % CLUSTER_SIZE != 0
#error "CLUSTER_SIZE must divide BINS: each block of a cluster owns an equal share of the bins"
#endif

#include <cooperative_groups.h>

__device__ __forceinline__ unsigned bin_of(unsigned value) { return min(value, BINS - 1u); }

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    histogram_block(const unsigned* __restrict__ values, unsigned* __restrict__ histogram,
                    long long n) {
  extern __shared__ unsigned counters[];  // BINS
  for (unsigned i = threadIdx.x; i < BINS; i += BLOCK_SIZE) counters[i] = 0;
  __syncthreads();
  const long long stride = static_cast<long long>(gridDim.x) * BLOCK_SIZE;
  for (long long i = static_cast<long long>(blockIdx.x) * BLOCK_SIZE + threadIdx.x; i < n;
       i += stride)
    atomicAdd(&counters[bin_of(values[i])], 1u);
  __syncthreads();
  for (unsigned i = threadIdx.x; i < BINS; i += BLOCK_SIZE)
    if (counters[i] != 0) atomicAdd(&histogram[i], counters[i]);
}

// Clusters exist from sm_90 on; below it the entry compiles to a trap, and ptxrt refuses a
// cluster launch there before it can run.
#if __CUDA_ARCH__ >= 900
#define CLUSTER_DIMS __cluster_dims__(CLUSTER_SIZE, 1, 1)
#else
#define CLUSTER_DIMS
#endif

extern "C" __global__ void CLUSTER_DIMS __launch_bounds__(BLOCK_SIZE)
    histogram_cluster(const unsigned* __restrict__ values, unsigned* __restrict__ histogram,
                      long long n) {
#if __CUDA_ARCH__ >= 900
  constexpr unsigned bins_per_block = BINS / CLUSTER_SIZE;
  extern __shared__ unsigned share[];  // this block's bins_per_block counters
  cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
  for (unsigned i = threadIdx.x; i < bins_per_block; i += BLOCK_SIZE) share[i] = 0;
  // Every block's share is zeroed before any block adds to it.
  cluster.sync();
  const long long stride = static_cast<long long>(gridDim.x) * BLOCK_SIZE;
  for (long long i = static_cast<long long>(blockIdx.x) * BLOCK_SIZE + threadIdx.x; i < n;
       i += stride) {
    const unsigned bin = bin_of(values[i]);
    unsigned* owner = cluster.map_shared_rank(share, bin / bins_per_block);
    atomicAdd(owner + bin % bins_per_block, 1u);
  }
  // Every add has landed, and no block leaves (taking its shared memory) while another may
  // still add to its share.
  cluster.sync();
  const unsigned first_bin = cluster.block_rank() * bins_per_block;
  for (unsigned i = threadIdx.x; i < bins_per_block; i += BLOCK_SIZE)
    if (share[i] != 0) atomicAdd(&histogram[first_bin + i], share[i]);
#else
  __trap();
#endif
}
