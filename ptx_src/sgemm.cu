// C = A·B, fp32, row-major, A is M×K, B is K×N: the fast family beside matmul_tiled.
//
// A block computes a BM×BN tile of C, BM = WARPS_M·LANES_M·TM and BN = WARPS_N·LANES_N·TN: its
// warps form a WARPS_M×WARPS_N grid, the lanes of a warp a LANES_M×LANES_N grid
// (LANES_N = 32/LANES_M), and each thread holds a TM×TN tile of C in registers. The constants are
// orthogonal, so every combination of the declared values builds (only registers and shared
// memory decide whether it is fast). K is walked BK at a time through a ring of STAGES shared
// memory buffers, filled with cp.async while the block computes on an earlier one.
//
// Per k, a thread reads TM/4 float4 of A and TN/4 float4 of B from shared memory and does TM·TN
// FFMAs: 8×8 is 4 LDS.128 for 64 FFMA. Its TM rows are TM/4 runs of 4, LANES_M·4 apart, and
// likewise its columns (8×8 is 2×2 sub-tiles of 4×4: the "warp tiling" of the fast SIMT GEMMs),
// so that the lanes of a warp read one contiguous span (conflict-free) and the sub-tiles stay
// 16-byte aligned.
//
// SPLIT_K > 1 splits K into SPLIT_K slices of whole BK tiles, one per blockIdx.z, so that a
// product with few tiles of C and a deep K fills the GPU: each slice's block writes its partial
// product to slice z of a workspace of SPLIT_K stacked M-row matrices (passed as C), and
// sgemm_split_reduce sums the slices in one fixed order into C. No atomics: the result is the same
// bits on every run. The workspace's rows are N rounded up to whole float4s apart, so that the
// partials go out by 16 bytes and the reduction reads them so whatever N's alignment.
//
// Rows of B that are not 16-byte aligned (N % 4 != 0) make `sgemm` load B by the 16-byte-aligned
// chunks around them, realigned through registers (TileLoader's LoadB::realigned in
// sgemm_ffma.cuh; a float at a time in the largest tiles); for products large enough to pay for
// it the host first copies B to padded rows (sgemm_pad_rows) and runs sgemm_pitched_b, which
// loads them by 16 bytes. Rows of C that are not 16-byte aligned go out by 16 bytes too, between
// their ragged ends (store_tile_ragged).
//
// Three switches that change no result (docs/perf-notes.md predicts each):
// - GROUP_M > 1: consecutive blocks walk down GROUP_M tile rows before the next column, so that
//   the blocks resident at one time share fewer panels of A and B in L2;
// - VECTOR_A (the entries that load B by 16 bytes, where the host also checked K % 4 == 0 and
//   A's alignment): A comes through registers with 16-byte loads and is stored transposed after
//   the tile's compute, instead of one 4-byte cp.async per element;
// - SKIP_IDLE_WARPS: in the edge tiles, a warp whose rows all lie past M (or columns past N)
//   skips its FFMAs; it still copies and waits at the barrier.
//
// TF32X3 = 1 computes the same tiles on the tensor cores at fp32 accuracy (sgemm_tf32x3.cuh,
// from compute capability 8.0; before it, where there is no TF32, the FFMA product builds): other
// bits than the FFMAs', closer to the exact product.
//
// The tuner searches 64- to 256-thread blocks with 32 to 256 rows and columns, at least 4×4
// results per thread, BK 8, 16 or 32, 3 or 4 stages, both ways of loading A, and the splits of K;
// GROUP_M 8 measured slower (perf-notes). The host narrows that per shape and adds the device's
// limits (sgemm_tuning_space in include/ptxrt/blas/sgemm_tuning.hpp): small tiles only where
// large ones cannot fill the GPU, splits only where K is deep enough to share, BK 8 only at
// short K.
//
// clang-format off
// ptxrt: define WARPS_M in {1, 2, 4, 8} default 4
// ptxrt: define WARPS_N in {1, 2, 4, 8} default 2
// ptxrt: define LANES_M in {4, 8} default 4
// ptxrt: define TM in {4, 8, 16} default 8
// ptxrt: define TN in {4, 8, 16} default 8
// ptxrt: define BK in {8, 16, 32} default 16
// ptxrt: define STAGES in {2, 3, 4} default 3
// ptxrt: define MIN_BLOCKS in {1, 2, 3, 4} default 2
// ptxrt: define GROUP_M in {1, 8} default 1
// ptxrt: define VECTOR_A in {0, 1} default 0
// ptxrt: define SKIP_IDLE_WARPS in {0, 1} default 0
// ptxrt: define TF32X3 in {0, 1} default 0
// ptxrt: define SPLIT_K in {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128} default 1
// ptxrt: tune WARPS_M WARPS_N LANES_M TM TN BK STAGES MIN_BLOCKS VECTOR_A SPLIT_K TF32X3
// ptxrt: constraint WARPS_M * WARPS_N >= 2 && WARPS_M * WARPS_N <= 8
// ptxrt: constraint TM * TN >= 16 && STAGES >= 3
// ptxrt: constraint WARPS_M * LANES_M * TM >= 32 && WARPS_M * LANES_M * TM <= 256
// ptxrt: constraint WARPS_N * (32 / LANES_M) * TN >= 32 && WARPS_N * (32 / LANES_M) * TN <= 256
// ptxrt: entry sgemm grid=(ceil(N/BN), ceil(M/BM), SPLIT_K) block=32·WARPS_M·WARPS_N dynamic smem=STAGES·BK·(BM+4+BN)·4 — C = A·B, row-major, any M, N, K, any alignment; with SPLIT_K > 1, C is the workspace of SPLIT_K partial products (SPLIT_K·M·ceil(N/4)·4 floats, 16-byte aligned)
// ptxrt: entry sgemm_aligned same launch as sgemm — needs N % 4 == 0 and B, C 16-byte aligned (with VECTOR_A also K % 4 == 0 and A 16-byte aligned): 16-byte loads of B (and A), 16-byte stores of C
// ptxrt: entry sgemm_pitched_b same launch as sgemm, one more argument ldb — B's rows ldb floats apart, ldb % 4 == 0 and B 16-byte aligned (with VECTOR_A also K % 4 == 0 and A 16-byte aligned): 16-byte loads of B (and A), C at any alignment
// ptxrt: entry sgemm_split_reduce grid=(any) block=256 — C = the sum of the SPLIT_K partial products in the workspace, added in one fixed order: read by float4, C written by float4 where N % 4 == 0 and C is 16-byte aligned
// ptxrt: entry sgemm_pad_rows grid=(any, any) block=256 — copies a rows×n B to rows of pitch floats (pitch % 4 == 0, 16-byte aligned), zeros past n: a B that sgemm_pitched_b loads by float4
// clang-format on

#if !defined(WARPS_M) || !defined(WARPS_N) || !defined(LANES_M)
#error "WARPS_M, WARPS_N (warps per block along M, N) and LANES_M (lanes along M) must be defined"
#endif
#if !defined(TM) || !defined(TN) || !defined(BK) || !defined(STAGES) || !defined(MIN_BLOCKS)
#error "TM, TN, BK, STAGES and MIN_BLOCKS must be defined"
#endif
#if !defined(GROUP_M) || !defined(VECTOR_A) || !defined(SKIP_IDLE_WARPS) || !defined(SPLIT_K)
#error "GROUP_M, VECTOR_A, SKIP_IDLE_WARPS and SPLIT_K must be defined"
#endif
#if !defined(TF32X3)
#error "TF32X3 must be defined (1: the product on the tensor cores, 0: by FFMA)"
#endif
#if TF32X3 && (!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800)
#define SGEMM_ON_TENSOR_CORES 1
#else
#define SGEMM_ON_TENSOR_CORES 0
#endif
#if SPLIT_K < 1
#error "SPLIT_K must be at least 1 (1: each block walks the whole of K)"
#endif
#if GROUP_M < 1
#error "GROUP_M must be at least 1 (1: blocks walk C row by row)"
#endif
#if TM % 4 != 0 || TN % 4 != 0
#error "TM and TN must be multiples of 4: a thread reads and writes its tile as float4"
#endif
#if LANES_M < 1 || 32 % LANES_M != 0
#error "LANES_M must divide the 32 lanes of a warp"
#endif
#if BK % 8 != 0
#error "BK must be a multiple of 8: A is staged 8 consecutive k per row and warp"
#endif
#if STAGES < 2
#error "STAGES must be at least 2: one buffer to compute on while the next one fills"
#endif

namespace {

constexpr int kLanesN = 32 / LANES_M;
constexpr int kThreads = 32 * WARPS_M * WARPS_N;
constexpr int kWarpM = LANES_M * TM;  // the warp's tile of C
constexpr int kWarpN = kLanesN * TN;
constexpr int kBlockM = WARPS_M * kWarpM;
constexpr int kBlockN = WARPS_N * kWarpN;

static_assert(kThreads <= 1024, "a block has at most 1024 threads");

// The workspace of a split K: row r of slice z's partial product starts (z·M + r)·pitch floats
// in, N rounded up to whole float4s (sgemm_workspace_floats on the host says the same).
__device__ __forceinline__ long long workspace_pitch(int n) {
  return (static_cast<long long>(n) + 3) / 4 * 4;
}

__device__ __forceinline__ unsigned shared_address(const void* pointer) {
  return static_cast<unsigned>(__cvta_generic_to_shared(pointer));
}

// One float from global to shared memory, zero when !valid (then `source` is not read). Before
// sm_80 there is no cp.async: a plain load and store, so the pipeline degenerates to synchronous.
__device__ __forceinline__ void copy_float(float* destination, const float* source, bool valid) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(shared_address(destination)),
               "l"(source), "r"(valid ? 4 : 0)
               : "memory");
#else
  *destination = valid ? *source : 0.0f;
#endif
}

// Four floats, both addresses 16-byte aligned; .cg: B is reused from shared memory, not from L1.
__device__ __forceinline__ void copy_float4(float* destination, const float* source, bool valid) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(destination)),
               "l"(source), "r"(valid ? 16 : 0)
               : "memory");
#else
  *reinterpret_cast<float4*>(destination) =
      valid ? *reinterpret_cast<const float4*>(source) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#endif
}

// A matrix whose rows are not all 16-byte aligned arrives by the 16-byte chunks that hold them:
// row r's floats at multiples of 4 columns sit shifted_floats(matrix, row length, r) floats past
// the start of their chunk. Unsigned arithmetic, whose wrap keeps the residue mod 4.
__device__ __forceinline__ int shifted_floats(const float* matrix, int row_length, int row) {
  const auto word = static_cast<unsigned>(reinterpret_cast<unsigned long long>(matrix) / 4 % 4);
  return static_cast<int>((word + static_cast<unsigned>(row) * static_cast<unsigned>(row_length)) %
                          4);
}

// The 16-byte-aligned address at or before `element`.
__device__ __forceinline__ const float* chunk_start(const float* element) {
  return reinterpret_cast<const float*>(reinterpret_cast<unsigned long long>(element) & ~15ull);
}

// A matrix that does not start on 16 bytes: its first chunk starts before it.
__device__ __forceinline__ bool off_16_bytes(const float* matrix) {
  return reinterpret_cast<unsigned long long>(matrix) % 16 != 0;
}

__device__ __forceinline__ void commit_copies() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Waits until at most `pending` committed groups are still in flight.
template <int pending>
__device__ __forceinline__ void wait_copies() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(pending) : "memory");
#endif
}

// Programmatic dependent launch (sm_90 and newer): the host launches the reduction, which reads
// the product's output, with programmatic stream serialization, so that its blocks are set up
// while the product still runs.
// Waits until the grid before has completed and its writes are visible; at once where the launch
// had no such dependency.
__device__ __forceinline__ void wait_for_previous_grid() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// Lets the next grid's blocks start once every block of this grid has said so or exited: their
// wait above still holds them until this grid has completed.
__device__ __forceinline__ void allow_next_grid() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

// The tile of C this block computes, as (tile row, tile column). Blocks start roughly in the
// order of their linear index (x fastest). With GROUP_M > 1 that order walks down GROUP_M tile
// rows, then the next column of the same rows: the blocks resident together then read a few
// panels of A and many of B, instead of one panel of A and every panel of B.
__device__ __forceinline__ int2 block_tile() {
  if (GROUP_M == 1) return make_int2(static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.x));
  const long long columns = gridDim.x;
  const long long linear = static_cast<long long>(blockIdx.y) * columns + blockIdx.x;
  const long long per_group = GROUP_M * columns;
  const long long first_row = linear / per_group * GROUP_M;
  const long long rows =
      min(static_cast<long long>(gridDim.y) - first_row, static_cast<long long>(GROUP_M));
  const long long within = linear % per_group;
  return make_int2(static_cast<int>(first_row + within % rows), static_cast<int>(within / rows));
}

// Where this block's tile of C starts, and where this thread's warp sits in it.
struct WarpPlace {
  int block_m;
  int block_n;
  int warp_row;
  int warp_column;
  // Warp-uniform: only edge tiles have warps whose every result would be discarded.
  bool computes;
};

__device__ __forceinline__ WarpPlace warp_place(int m, int n) {
  const int2 tile_position = block_tile();
  const int warp = static_cast<int>(threadIdx.x) / 32;
  WarpPlace place{tile_position.x * kBlockM, tile_position.y * kBlockN, (warp / WARPS_N) * kWarpM,
                  (warp % WARPS_N) * kWarpN, true};
  place.computes = !SKIP_IDLE_WARPS ||
                   (place.block_m + place.warp_row < m && place.block_n + place.warp_column < n);
  return place;
}

// The part of K this block walks: with SPLIT_K > 1, slice blockIdx.z of SPLIT_K slices of whole
// BK tiles, as even as that allows (so that only the last tile of K is ever partial); the last
// slices may be short or empty, and an empty one still writes its zeros for the reduction.
struct KRange {
  int begin;
  int end;
};

__device__ __forceinline__ KRange k_range(int k) {
  if (SPLIT_K == 1) return {0, k};
  // In 64 bits: SPLIT_K slices of up to K rounded up to BK may pass INT_MAX.
  const long long tiles = k / BK + (k % BK != 0);
  const long long per_slice = (tiles + SPLIT_K - 1) / SPLIT_K * BK;
  const long long begin =
      min(static_cast<long long>(blockIdx.z) * per_slice, static_cast<long long>(k));
  return {static_cast<int>(begin),
          static_cast<int>(min(begin + per_slice, static_cast<long long>(k)))};
}

}  // namespace

#if SGEMM_ON_TENSOR_CORES
#include "sgemm_tf32x3.cuh"
#define SGEMM_BLOCK sgemm_tf32x3_block
#else
#include "sgemm_ffma.cuh"
#define SGEMM_BLOCK sgemm_block
#endif

extern "C" __global__ void __launch_bounds__(kThreads, MIN_BLOCKS)
    sgemm(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m,
          int n, int k) {
  SGEMM_BLOCK<false, false>(a, b, c, m, n, k, n);
}

extern "C" __global__ void __launch_bounds__(kThreads, MIN_BLOCKS)
    sgemm_aligned(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                  int m, int n, int k) {
  SGEMM_BLOCK<true, true>(a, b, c, m, n, k, n);
}

extern "C" __global__ void __launch_bounds__(kThreads, MIN_BLOCKS)
    sgemm_pitched_b(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                    int m, int n, int k, int ldb) {
  SGEMM_BLOCK<true, false>(a, b, c, m, n, k, ldb);
}

#include "sgemm_pad_and_reduce.cuh"
