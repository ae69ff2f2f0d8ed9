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
// likewise its columns, so that the lanes of a warp read one contiguous span (conflict-free)
// and the sub-tiles stay 16-byte aligned.
//
// The tuner searches 128- to 256-thread blocks with 64 to 256 rows and columns and at least 8×8
// results per thread, 3 or 4 stages: smaller tiles cannot reach the FFMA-per-load ratio that makes
// this kernel fast, and the rest of the declared space would triple the tune for nothing. The host
// adds the device's limits (sgemm_config_problem).
//
// clang-format off
// ptxrt: define WARPS_M in {1, 2, 4, 8} default 4
// ptxrt: define WARPS_N in {1, 2, 4, 8} default 2
// ptxrt: define LANES_M in {4, 8} default 4
// ptxrt: define TM in {4, 8, 16} default 8
// ptxrt: define TN in {4, 8, 16} default 8
// ptxrt: define BK in {8, 16} default 8
// ptxrt: define STAGES in {2, 3, 4} default 3
// ptxrt: define MIN_BLOCKS in {1, 2, 3, 4} default 2
// ptxrt: tune WARPS_M WARPS_N LANES_M TM TN BK STAGES MIN_BLOCKS
// ptxrt: constraint WARPS_M * WARPS_N >= 4 && WARPS_M * WARPS_N <= 8
// ptxrt: constraint TM >= 8 && TN >= 8
// ptxrt: constraint STAGES >= 3 && MIN_BLOCKS <= 2
// ptxrt: constraint WARPS_M * LANES_M * TM >= 64 && WARPS_M * LANES_M * TM <= 256
// ptxrt: constraint WARPS_N * (32 / LANES_M) * TN >= 64 && WARPS_N * (32 / LANES_M) * TN <= 256
// ptxrt: entry sgemm grid=(ceil(N/BN), ceil(M/BM)) block=32·WARPS_M·WARPS_N dynamic smem=STAGES·BK·(BM+4+BN)·4 — C = A·B, row-major, any M, N, K, any alignment
// ptxrt: entry sgemm_aligned same launch as sgemm — needs N % 4 == 0 and B, C 16-byte aligned: 16-byte loads of B, 16-byte stores of C
// clang-format on

#if !defined(WARPS_M) || !defined(WARPS_N) || !defined(LANES_M)
#error "WARPS_M, WARPS_N (warps per block along M, N) and LANES_M (lanes along M) must be defined"
#endif
#if !defined(TM) || !defined(TN) || !defined(BK) || !defined(STAGES) || !defined(MIN_BLOCKS)
#error "TM, TN, BK, STAGES and MIN_BLOCKS must be defined"
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
// A is staged transposed (k-major) so that a thread's TM values for one k are float4 reads.
// Four floats of padding per k row: the cp.async writes of one warp (8 k × 4 rows) then land in
// 32 distinct banks, and rows stay 16-byte aligned.
constexpr int kStrideA = kBlockM + 4;
constexpr int kStageFloats = BK * (kStrideA + kBlockN);

static_assert(kThreads <= 1024, "a block has at most 1024 threads");

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

// Where each thread's share of a tile comes from and goes to. Rows past M and columns past N
// are clamped to the last one (their results are never stored, so any finite data will do and
// no address leaves the matrix); k past K is zero-filled, since it enters every dot product.
// Per copy a thread keeps one int (its clamped row or column) and rebuilds the 64-bit address
// each tile with one wide multiply-add: 64-bit pointers per copy would cost registers that the
// TM×TN accumulators need.
template <bool vector_b>
struct TileLoader {
  // A: thread t copies k = t % 8 of rows t / 8, t / 8 + kRowsPerPassA, ... and then the same for
  // k + 8, k + 16, ...: a warp covers 8 consecutive k (one 32-byte sector) of 4 rows. Both
  // kRowsPerPassA and BM are powers of two, so one divides the other: either a thread visits
  // kPassesA rows, or it stays on one row and the block covers several groups of 8 k per pass.
  static constexpr int kRowsPerPassA = kThreads / 8;
  static constexpr int kPassesA = kRowsPerPassA < kBlockM ? kBlockM / kRowsPerPassA : 1;
  static constexpr int kKStepA = kRowsPerPassA > kBlockM ? 8 * (kRowsPerPassA / kBlockM) : 8;
  static constexpr int kCopiesA = (kBlockM * BK + kThreads - 1) / kThreads;
  static constexpr bool kExactA = kBlockM * BK % kThreads == 0;
  // B: row-major BK×BN in units of float4 (vector_b) or float, consecutive along n: unit u of the
  // flattened tile goes to thread u % kThreads, whether a row holds more units than the block
  // has threads (kPassesB columns each) or fewer (then kKStepB rows apart).
  static constexpr int kWidthB = vector_b ? 4 : 1;
  static constexpr int kUnitsPerRowB = kBlockN / kWidthB;
  static constexpr int kUnitsB = kUnitsPerRowB * BK;
  static constexpr int kCopiesB = (kUnitsB + kThreads - 1) / kThreads;
  static constexpr bool kExactB = kUnitsB % kThreads == 0;
  static constexpr int kPassesB = kThreads < kUnitsPerRowB ? kUnitsPerRowB / kThreads : 1;
  static constexpr int kKStepB = kThreads > kUnitsPerRowB ? kThreads / kUnitsPerRowB : 1;

  int row_a[kPassesA];     // clamped global rows
  int k_a;                 // the thread's first k within a tile
  int shared_a;            // where that k and its first row sit in a stage
  int column_b[kPassesB];  // clamped global columns
  int k_b;
  int shared_b;

  __device__ TileLoader(int m, int n, int block_m, int block_n) {
    const int thread = static_cast<int>(threadIdx.x);
    const int first_row = thread / 8;  // < kRowsPerPassA
    const int tile_row = first_row % kBlockM;
    k_a = thread % 8 + (first_row / kBlockM) * 8;
    shared_a = k_a * kStrideA + tile_row;
#pragma unroll
    for (int pass = 0; pass < kPassesA; ++pass)
      row_a[pass] = min(block_m + tile_row + pass * kRowsPerPassA, m - 1);

    const int unit = thread % kUnitsPerRowB;
    k_b = thread / kUnitsPerRowB;
    shared_b = BK * kStrideA + k_b * kBlockN + unit * kWidthB;
#pragma unroll
    for (int pass = 0; pass < kPassesB; ++pass)
      column_b[pass] = min(block_n + (unit + pass * kThreads) * kWidthB, n - kWidthB);
  }

  // Issues the copies of the tile whose first k is k_first into `stage`; `check_k` only for the
  // last tile, where k may run past K.
  template <bool check_k>
  __device__ __forceinline__ void load(float* stage, const float* a, const float* b, int n, int k,
                                       int k_first) const {
#pragma unroll
    for (int i = 0; i < kCopiesA; ++i) {
      const int pass = i % kPassesA;
      const int k_offset = (i / kPassesA) * kKStepA;
      if (kExactA || k_a + k_offset < BK) {
        const int k_global = k_first + k_a + k_offset;
        const bool valid = !check_k || k_global < k;
        const float* source = a + static_cast<long long>(row_a[pass]) * k + k_global;
        copy_float(stage + shared_a + k_offset * kStrideA + pass * kRowsPerPassA,
                   valid ? source : a, valid);
      }
    }
#pragma unroll
    for (int i = 0; i < kCopiesB; ++i) {
      const int pass = i % kPassesB;
      const int k_offset = (i / kPassesB) * kKStepB;
      if (kExactB || k_b + k_offset < BK) {
        const int k_global = k_first + k_b + k_offset;
        const bool valid = !check_k || k_global < k;
        const float* source = b + static_cast<long long>(k_global) * n + column_b[pass];
        float* destination = stage + shared_b + k_offset * kBlockN + pass * kThreads * kWidthB;
        if (vector_b)
          copy_float4(destination, valid ? source : b, valid);
        else
          copy_float(destination, valid ? source : b, valid);
      }
    }
  }
};

// The TM×TN products of one k: reads the thread's A and B fragments of k from the stage.
__device__ __forceinline__ void multiply_k(const float* stage_a, const float* stage_b,
                                           float (&sum)[TM][TN]) {
  float a[TM];
  float b[TN];
#pragma unroll
  for (int i = 0; i < TM / 4; ++i) {
    const float4 v = *reinterpret_cast<const float4*>(stage_a + i * LANES_M * 4);
    a[4 * i] = v.x, a[4 * i + 1] = v.y, a[4 * i + 2] = v.z, a[4 * i + 3] = v.w;
  }
#pragma unroll
  for (int j = 0; j < TN / 4; ++j) {
    const float4 v = *reinterpret_cast<const float4*>(stage_b + j * kLanesN * 4);
    b[4 * j] = v.x, b[4 * j + 1] = v.y, b[4 * j + 2] = v.z, b[4 * j + 3] = v.w;
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) sum[i][j] = fmaf(a[i], b[j], sum[i][j]);
}

// Row i of the thread's tile sits at warp_row + (i/4)·LANES_M·4 + i%4; columns likewise.
template <bool vector_c>
__device__ __forceinline__ void store_tile(float* c, int m, int n, int first_row, int first_column,
                                           const float (&sum)[TM][TN]) {
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = first_row + (i / 4) * LANES_M * 4 + i % 4;
    if (row >= m) continue;
    float* c_row = c + static_cast<long long>(row) * n;
#pragma unroll
    for (int j = 0; j < TN / 4; ++j) {
      const int column = first_column + j * kLanesN * 4;
      if (vector_c) {
        // n % 4 == 0, so a chunk is all inside C or all outside.
        if (column < n)
          *reinterpret_cast<float4*>(c_row + column) =
              make_float4(sum[i][4 * j], sum[i][4 * j + 1], sum[i][4 * j + 2], sum[i][4 * j + 3]);
      } else {
#pragma unroll
        for (int q = 0; q < 4; ++q)
          if (column + q < n) c_row[column + q] = sum[i][4 * j + q];
      }
    }
  }
}

template <bool aligned>
__device__ __forceinline__ void sgemm_block(const float* __restrict__ a,
                                            const float* __restrict__ b, float* __restrict__ c,
                                            int m, int n, int k) {
  extern __shared__ float4 shared_words[];
  float* shared = reinterpret_cast<float*>(shared_words);

  const int block_m = static_cast<int>(blockIdx.y) * kBlockM;
  const int block_n = static_cast<int>(blockIdx.x) * kBlockN;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int thread_row = (warp / WARPS_N) * kWarpM + (lane / kLanesN) * 4;
  const int thread_column = (warp % WARPS_N) * kWarpN + (lane % kLanesN) * 4;

  const TileLoader<aligned> loader(m, n, block_m, block_n);
  // Written as a quotient plus a remainder test so that k close to INT_MAX cannot overflow.
  const int tiles = k / BK + (k % BK != 0);
  const int full_tiles = k / BK;
  auto load_tile = [&](int tile, int stage) {
    float* destination = shared + stage * kStageFloats;
    if (tile < full_tiles)
      loader.template load<false>(destination, a, b, n, k, tile * BK);
    else
      loader.template load<true>(destination, a, b, n, k, tile * BK);
  };

#pragma unroll
  for (int stage = 0; stage < STAGES - 1; ++stage) {
    if (stage < tiles) load_tile(stage, stage);
    // Committed even when empty, so that group t always holds tile t and one wait count fits all.
    commit_copies();
  }

  float sum[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) sum[i][j] = 0.0f;

  int read_stage = 0;
  int write_stage = STAGES - 1;
  for (int tile = 0; tile < tiles; ++tile) {
    wait_copies<STAGES - 2>();
    // Makes tile `tile` visible to every thread, and tells the loads below that everyone is done
    // computing on write_stage (read in the previous iteration).
    __syncthreads();
    if (tile + STAGES - 1 < tiles) load_tile(tile + STAGES - 1, write_stage);
    commit_copies();

    const float* stage_a = shared + read_stage * kStageFloats + thread_row;
    const float* stage_b = shared + read_stage * kStageFloats + BK * kStrideA + thread_column;
#pragma unroll
    for (int kk = 0; kk < BK; ++kk)
      multiply_k(stage_a + kk * kStrideA, stage_b + kk * kBlockN, sum);

    read_stage = read_stage == STAGES - 1 ? 0 : read_stage + 1;
    write_stage = write_stage == STAGES - 1 ? 0 : write_stage + 1;
  }

  store_tile<aligned>(c, m, n, block_m + thread_row, block_n + thread_column, sum);
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads, MIN_BLOCKS)
    sgemm(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m,
          int n, int k) {
  sgemm_block<false>(a, b, c, m, n, k);
}

extern "C" __global__ void __launch_bounds__(kThreads, MIN_BLOCKS)
    sgemm_aligned(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                  int m, int n, int k) {
  sgemm_block<true>(a, b, c, m, n, k);
}
