// Exclusive prefix sum of non-negative ints, for the closest-pair kernels' compactions and
// counting sorts: out[i] = in[0] + ... + in[i-1] for i < n, and out[n] = the total. Warp shuffles
// scan each warp, one warp scans the warp totals, and the block totals are scanned the same way
// by a recursive call on the host, then added back. Sums must fit in an int (totals < 2^31).
//
// Host sequence for n values (out has n+1 elements):
//   blocks = ceil(n/BLOCK_SIZE)
//   blocks == 1: scan_blocks(in, out, block_totals = out + n, n)
//   otherwise:   scan_blocks(in, out, totals, n); scan the `blocks` totals into offsets (blocks+1
//                outputs, recursively); scan_add(out, offsets, n, blocks)
//
// clang-format off
// ptxrt: define BLOCK_SIZE in {128, 256, 512, 1024} default 1024
// ptxrt: entry scan_blocks grid=(ceil(n/BLOCK_SIZE)) block=(BLOCK_SIZE) — out[i] = exclusive sum within each block of BLOCK_SIZE values; block_totals[blockIdx.x] = the block's sum
// ptxrt: entry scan_add grid=(ceil((n+1)/BLOCK_SIZE)) block=(BLOCK_SIZE) — out[i] += offsets[i/BLOCK_SIZE] for i < n; out[n] = offsets[blocks]
// clang-format on

#ifndef BLOCK_SIZE
#error "BLOCK_SIZE must be defined (128, 256, 512 or 1024)"
#endif
#if BLOCK_SIZE < 32 || BLOCK_SIZE > 1024 || BLOCK_SIZE % 32 != 0
#error "BLOCK_SIZE must be a multiple of 32 up to 1024 (one warp scans the warp totals)"
#endif

#define FULL_WARP 0xffffffffu
#define WARPS (BLOCK_SIZE / 32)

__device__ __forceinline__ int warp_inclusive_scan(int value, int lane) {
  for (int offset = 1; offset < 32; offset *= 2) {
    const int other = __shfl_up_sync(FULL_WARP, value, offset);
    if (lane >= offset) value += other;
  }
  return value;
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    scan_blocks(const int* __restrict__ in, int* __restrict__ out, int* __restrict__ block_totals,
                long long n) {
  __shared__ int warp_totals[WARPS];
  const long long i = static_cast<long long>(blockIdx.x) * BLOCK_SIZE + threadIdx.x;
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  // Past the end counts as 0, so every lane takes part in the shuffles.
  const int value = i < n ? in[i] : 0;
  const int inclusive = warp_inclusive_scan(value, lane);
  if (lane == 31) warp_totals[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    const int total = warp_inclusive_scan(lane < WARPS ? warp_totals[lane] : 0, lane);
    if (lane < WARPS) warp_totals[lane] = total;
  }
  __syncthreads();
  const int before_warp = warp == 0 ? 0 : warp_totals[warp - 1];
  if (i < n) out[i] = before_warp + inclusive - value;
  if (threadIdx.x == BLOCK_SIZE - 1) block_totals[blockIdx.x] = before_warp + inclusive;
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    scan_add(int* __restrict__ out, const int* __restrict__ offsets, long long n,
             long long blocks) {
  const long long i = static_cast<long long>(blockIdx.x) * BLOCK_SIZE + threadIdx.x;
  if (i < n) out[i] += offsets[i / BLOCK_SIZE];
  if (i == n) out[n] = offsets[blocks];
}
