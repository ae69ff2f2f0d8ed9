// sgemm.cu's product on the tensor cores (TF32X3 = 1), at fp32 accuracy: each operand is split
// into a TF32 head and a TF32 tail, and a·b is head·head + head·tail + tail·head, three mma.sync
// m16n8k8 products accumulated in fp32 ("3xTF32"; tail·tail, below fp32's rounding, is left out).
// The tensor cores round their sums toward zero, a bias that grows with every product chained
// onto one accumulator: each k8 step's three products go into a fresh fragment instead, which an
// fp32 add (rounding to nearest) then adds to the thread's results. Its error against the exact
// product stays under fp32's rounding of the sum (docs/perf-notes.md, "3xTF32 on the tensor
// cores"). Infinities and NaN need a slower split: a block whose inputs hold one computes its
// tile again with it (split_tf32_ieee), so that the others pay one instruction an element.
//
// The block's tile, its warps, the ring, the splits of K, GROUP_M and the entries are sgemm.cu's;
// each warp computes its kWarpM×kWarpN tile of C as m16n8k8 tiles, and a thread holds TM·TN
// results as with the FFMAs. A stage holds A row-major (BK k per row) and B as it is (BN columns
// per k), both padded so that the fragment reads are conflict-free. VECTOR_A copies A by 16 bytes
// (cp.async) instead of by 4.
namespace {

constexpr int kMmaTilesM = kWarpM / 16;  // a warp's m16n8k8 tiles of C
constexpr int kMmaTilesN = kWarpN / 8;
// A row-major with 4 floats of padding per row, B as it is with 8 per k: a warp's fragment read
// of A (8 rows × 4 consecutive k) then hits banks 4·row + k, one of B (4 k × 8 columns) banks
// 8·k + column, 32 distinct banks each, and every row stays 16-byte aligned for the copies.
// SgemmConfig::shared_bytes sizes the ring by the same strides.
constexpr int kTensorStrideA = BK + 4;
constexpr int kTensorStrideB = kBlockN + 8;
constexpr int kTensorStageA = kBlockM * kTensorStrideA;
constexpr int kTensorStageFloats = kTensorStageA + BK * kTensorStrideB;
static_assert(kWarpM % 16 == 0 && kWarpN % 8 == 0, "a warp's tile is whole m16n8 tiles");

__device__ __forceinline__ int a_offset(int row, int k) { return row * kTensorStrideA + k; }
__device__ __forceinline__ int b_offset(int k, int column) {
  return kTensorStageA + k * kTensorStrideB + column;
}

// A and B at any alignment: a row of a tile arrives as the 16-byte chunks that hold it, stored
// as they lie in memory, one chunk more than an aligned row takes. Element c of a row then sits
// shifted_floats(matrix, row length, row) places past its own, the same in every tile (tiles
// start on multiples of BK, BK % 4 == 0) and for rows 4 apart, so that each lane adds it once to
// the base of its fragment reads. A 4-byte cp.async per float, the alternative, issued about four
// times the copies and held the any-alignment entry to half the aligned one's rate.
constexpr int kChunksPerRowA = BK / 4 + 1;
constexpr int kChunksPerRowB = kBlockN / 4 + 1;
static_assert(kChunksPerRowA * 4 <= kTensorStrideA && kChunksPerRowB * 4 <= kTensorStrideB,
              "a row's chunks fit its stride");

// The 16-byte chunk at `first` (16-byte aligned) into `destination`: by one copy where all of it
// lies `end` floats or fewer past `base`, and `valid`; otherwise float by float, zeros outside.
__device__ __forceinline__ void copy_chunk(float* destination, const float* first,
                                           const float* base, long long end, bool valid) {
  const long long from = first - base;
  if (valid && from >= 0 && from + 4 <= end) {
    copy_float4(destination, first, true);
    return;
  }
#pragma unroll
  for (int t = 0; t < 4; ++t) {
    const bool inside = valid && from + t >= 0 && from + t < end;
    copy_float(destination + t, inside ? first + t : base, inside);
  }
}

// Starts the tile whose first k is k_first on its way to `stage`; elements past M or the slice's
// end are zero-filled. `check_k`: the tile holds the slice's last k, or chunks that may lie
// outside A or B (unchecked_tensor_tiles). vector_a: K % 4 == 0 and A 16-byte aligned, A by
// 16-byte units of its rows (otherwise by chunks); vector_b: B's rows are ldb floats apart, ldb %
// 4 == 0, B 16-byte aligned, and columns past N up to ldb hold zeros or lie in B (otherwise ldb ==
// N, and B arrives by chunks: columns past N then hold B's next floats or zeros, whose products
// are never stored). A slice ends at K or at a multiple of BK, so a 16-byte unit of A is all
// inside it or all past.
template <bool vector_a, bool vector_b, bool check_k>
__device__ __forceinline__ void fetch_tensor_tile(float* stage, const float* a, const float* b,
                                                  int m, int n, int k, int ldb, int block_m,
                                                  int block_n, int k_first, int k_end) {
  constexpr int kUnitsPerRowA = vector_a ? BK / 4 : kChunksPerRowA;
  constexpr int kUnitsA = kBlockM * kUnitsPerRowA;
#pragma unroll
  for (int i = 0; i < (kUnitsA + kThreads - 1) / kThreads; ++i) {
    const int unit = static_cast<int>(threadIdx.x) + i * kThreads;
    if (kUnitsA % kThreads != 0 && unit >= kUnitsA) break;
    const int row = unit / kUnitsPerRowA;
    const int column = unit % kUnitsPerRowA * 4;
    const bool row_valid = block_m + row < m;
    // Rows past M are zeros; their address, never read, stays inside A.
    const float* row_start = a + static_cast<long long>(min(block_m + row, m - 1)) * k;
    if constexpr (vector_a) {
      const int k_global = k_first + column;
      const bool valid = row_valid && (!check_k || k_global < k_end);
      copy_float4(stage + a_offset(row, column), valid ? row_start + k_global : a, valid);
    } else {
      const float* first = chunk_start(row_start + k_first) + column;
      if constexpr (check_k)
        copy_chunk(stage + a_offset(row, column), first, row_start, k_end, row_valid);
      else
        copy_float4(stage + a_offset(row, column), first, row_valid);
    }
  }
  constexpr int kUnitsPerRowB = vector_b ? kBlockN / 4 : kChunksPerRowB;
  constexpr int kUnitsB = BK * kUnitsPerRowB;
#pragma unroll
  for (int i = 0; i < (kUnitsB + kThreads - 1) / kThreads; ++i) {
    const int unit = static_cast<int>(threadIdx.x) + i * kThreads;
    if (kUnitsB % kThreads != 0 && unit >= kUnitsB) break;
    const int k_in_tile = unit / kUnitsPerRowB;
    const int column = unit % kUnitsPerRowB * 4;
    const int k_global = k_first + k_in_tile;
    const bool in_slice = !check_k || k_global < k_end;
    if constexpr (vector_b) {
      const bool valid = block_n + column < ldb && in_slice;
      const float* source =
          valid ? b + static_cast<long long>(k_global) * ldb + block_n + column : b;
      copy_float4(stage + b_offset(k_in_tile, column), source, valid);
    } else {
      const float* first = chunk_start(b + static_cast<long long>(k_global) * n + block_n) + column;
      if constexpr (check_k)
        copy_chunk(stage + b_offset(k_in_tile, column), first, b, static_cast<long long>(k) * n,
                   in_slice);
      else
        copy_float4(stage + b_offset(k_in_tile, column), first, true);
    }
  }
}

// The tiles of a slice that fetch_tensor_tile may fetch unchecked: whole tiles whose chunks lie
// inside A and B. A row's chunks start at most 3 floats before its first element (before the
// matrix only in its first row, if it starts off 16 bytes: tile 0 of the first slice) and end at
// most BK + 4 (A) or BN + 4 (B) floats after it.
struct TensorTiles {
  int first_unchecked;
  int end_unchecked;
};

template <bool vector_a, bool vector_b>
__device__ __forceinline__ TensorTiles unchecked_tensor_tiles(KRange slice, int n, int k,
                                                              const float* a, const float* b,
                                                              int block_n) {
  long long end = (slice.end - slice.begin) / BK;
  // A's last row: the last tile t with slice.begin + (t + 1)·BK + 4 <= k.
  if (!vector_a) end = min(end, max(0ll, (static_cast<long long>(k) - 4 - slice.begin) / BK));
  if (!vector_b) {
    // B's last row: the last tile t with (slice.begin + (t + 1)·BK - 1)·n + block_n + BN + 4 <=
    // k·n.
    const long long room = static_cast<long long>(k) * n - block_n - kBlockN - 4 + n;
    end = min(end, max(0ll, (room / n - slice.begin) / BK));
  }
  const bool starts_off_16 = (!vector_a && off_16_bytes(a)) || (!vector_b && off_16_bytes(b));
  return {slice.begin == 0 && starts_off_16 ? 1 : 0, static_cast<int>(end)};
}

// A float's bits that TF32 keeps: sign, exponent and the top 10 bits of the mantissa.
constexpr unsigned kTf32Bits = 0xFFFFE000u;

// A finite float's bits rounded to TF32, to nearest (ties away from zero) by a carry into the
// kept bits: the toolkit's cvt.rna.tf32 takes five instructions where this takes two.
__device__ __forceinline__ unsigned rounded_to_tf32(unsigned bits) {
  return (bits + 0x1000u) & kTf32Bits;
}

// x as a TF32 head and tail, head + tail = x up to 2^-22·|x|. The head is x truncated (never
// rounded past the largest float into infinity), the tail x - head rounded to nearest.
// `probe` keeps the largest |head|: infinite where x was infinite (or a NaN whose payload lay
// only in the truncated bits), and then the block computes its tile again by split_tf32_ieee. Any
// other NaN stays a NaN head, and the products carry it.
__device__ __forceinline__ void split_tf32(float x, unsigned& head, unsigned& tail, float& probe) {
  head = __float_as_uint(x) & kTf32Bits;
  tail = rounded_to_tf32(__float_as_uint(x - __uint_as_float(head)));
  probe = fmaxf(probe, fabsf(__uint_as_float(head)));
}

// The same, as the products need it where an operand is infinite or NaN:
// - the tail has x's sign (the head is truncated), so that an infinite head times the other
//   operand's tail adds an infinity of the head product's sign, not the opposite one;
// - a nonzero x whose tail would be 0 (x exact in TF32, or infinite) gets the least normal float
//   of its sign instead (2^-126, far below x's rounding), since infinity times 0 is NaN;
// - a NaN becomes a quiet NaN whatever its payload (truncation could leave infinity's bits).
__device__ __forceinline__ void split_tf32_ieee(float x, unsigned& head, unsigned& tail) {
  const unsigned bits = __float_as_uint(x);
  const unsigned magnitude = bits & 0x7FFFFFFFu;
  const unsigned least_of_sign = (bits & 0x80000000u) | 0x00800000u;
  head = magnitude > 0x7F800000u ? 0x7FC00000u : bits & kTf32Bits;
  const unsigned rest = magnitude < 0x7F800000u
                            ? rounded_to_tf32(__float_as_uint(x - __uint_as_float(head)))
                            : least_of_sign;
  tail = (rest & 0x7FFFFFFFu) != 0 ? rest : magnitude != 0 ? least_of_sign : 0u;
}

template <bool ieee>
__device__ __forceinline__ void split_fragment(float x, unsigned& head, unsigned& tail,
                                               float& probe) {
  if constexpr (ieee)
    split_tf32_ieee(x, head, tail);
  else
    split_tf32(x, head, tail, probe);
}

__device__ __forceinline__ void mma_tf32(float (&d)[4], const unsigned (&a)[4],
                                         const unsigned (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// One float of shared memory at a 32-bit shared address: the fragment reads are then a per-thread
// base plus constants, which ptxas folds into the loads, instead of 64-bit pointers held in
// register pairs (volatile: the reads stay between the barriers that guard the stage).
__device__ __forceinline__ float shared_float(unsigned address) {
  float value;
  asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(value) : "r"(address));
  return value;
}

// The products of the 8 k from kk of the stage at shared address `stage`, for M tiles [kFirstI,
// kFirstI + kTilesI) of the warp's tile with all its N tiles: a warp tile's A fragments split in
// two such passes hold half the registers (each pass reads and splits the N tiles' B fragments
// again). Fragment layouts are PTX's for m16n8k8 .tf32: lane = 4·group + in_group; A holds rows
// group and group + 8 at k in_group and in_group + 4, B k in_group and in_group + 4 at column
// group. `a_lane` and `b_lane`: the lane's first A and B element of a stage, in bytes from its
// start.
template <bool ieee, int kk, int kFirstI, int kTilesI>
__device__ __forceinline__ void multiply_rows(unsigned stage, unsigned a_lane, unsigned b_lane,
                                              float (&sum)[kMmaTilesM][kMmaTilesN][4],
                                              float& probe) {
  constexpr unsigned kFloat = sizeof(float);
  unsigned a_head[kTilesI][4], a_tail[kTilesI][4];
#pragma unroll
  for (int i = 0; i < kTilesI; ++i) {
    const unsigned row = stage + a_lane + kFloat * a_offset((kFirstI + i) * 16, kk);
    const float values[4] = {shared_float(row), shared_float(row + kFloat * a_offset(8, 0)),
                             shared_float(row + kFloat * 4),
                             shared_float(row + kFloat * a_offset(8, 4))};
#pragma unroll
    for (int r = 0; r < 4; ++r) split_fragment<ieee>(values[r], a_head[i][r], a_tail[i][r], probe);
  }
#pragma unroll
  for (int j = 0; j < kMmaTilesN; ++j) {
    const unsigned column = stage + b_lane + kFloat * (kk * kTensorStrideB + j * 8);
    const float values[2] = {shared_float(column),
                             shared_float(column + kFloat * 4 * kTensorStrideB)};
    unsigned b_head[2], b_tail[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) split_fragment<ieee>(values[r], b_head[r], b_tail[r], probe);
#pragma unroll
    for (int i = 0; i < kTilesI; ++i) {
      float step[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      mma_tf32(step, a_tail[i], b_head);  // the small terms first, below the large one
      mma_tf32(step, a_head[i], b_tail);
      mma_tf32(step, a_head[i], b_head);
#pragma unroll
      for (int r = 0; r < 4; ++r) sum[kFirstI + i][j][r] += step[r];
    }
  }
}

// The warp's products of the 8 k from kk, in two passes over its M tiles where it has 4 or more.
template <bool ieee, int kk>
__device__ __forceinline__ void multiply_k8(unsigned stage, unsigned a_lane, unsigned b_lane,
                                            float (&sum)[kMmaTilesM][kMmaTilesN][4], float& probe) {
  constexpr int kPasses = kMmaTilesM >= 4 ? 2 : 1;
  constexpr int kTilesI = kMmaTilesM / kPasses;
  multiply_rows<ieee, kk, 0, kTilesI>(stage, a_lane, b_lane, sum, probe);
  if constexpr (kPasses == 2)
    multiply_rows<ieee, kk, kTilesI, kTilesI>(stage, a_lane, b_lane, sum, probe);
}

// The products of a whole stage, k8 step by k8 step from kk, each step's offsets constants.
template <bool ieee, int kk = 0>
__device__ __forceinline__ void multiply_stage(unsigned stage, unsigned a_lane, unsigned b_lane,
                                               float (&sum)[kMmaTilesM][kMmaTilesN][4],
                                               float& probe) {
  multiply_k8<ieee, kk>(stage, a_lane, b_lane, sum, probe);
  if constexpr (kk + 8 < BK) multiply_stage<ieee, kk + 8>(stage, a_lane, b_lane, sum, probe);
}

// The block's tile of C over its slice of K into `sum`, through the ring of stages from `shared`
// that `fetch_tile(tile, stage)` fills: `ieee` for a block that met an infinity or NaN. Returns
// whether this thread's fragments held one.
template <bool ieee, typename Fetch>
__device__ __forceinline__ bool accumulate_tile(const Fetch& fetch_tile, float* shared,
                                                unsigned a_lane, unsigned b_lane, int tiles,
                                                bool warp_computes,
                                                float (&sum)[kMmaTilesM][kMmaTilesN][4]) {
#pragma unroll
  for (int i = 0; i < kMmaTilesM; ++i)
#pragma unroll
    for (int j = 0; j < kMmaTilesN; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) sum[i][j][r] = 0.0f;
#pragma unroll
  for (int stage = 0; stage < STAGES - 1; ++stage) {
    if (stage < tiles) fetch_tile(stage, shared + stage * kTensorStageFloats);
    commit_copies();  // even when empty: group t always holds tile t
  }
  const unsigned ring = shared_address(shared);
  float probe = 0.0f;
  int read_stage = 0;
  int write_stage = STAGES - 1;
  for (int tile = 0; tile < tiles; ++tile) {
    wait_copies<STAGES - 2>();
    __syncthreads();  // tile `tile` is in; everyone is done with write_stage
    if (tile + STAGES - 1 < tiles)
      fetch_tile(tile + STAGES - 1, shared + write_stage * kTensorStageFloats);
    commit_copies();
    if (warp_computes)
      multiply_stage<ieee>(ring + sizeof(float) * read_stage * kTensorStageFloats, a_lane, b_lane,
                           sum, probe);
    read_stage = read_stage == STAGES - 1 ? 0 : read_stage + 1;
    write_stage = write_stage == STAGES - 1 ? 0 : write_stage + 1;
  }
  return isinf(probe);
}

// sgemm_block's contract (vector_b, vector_c, a split's partials) on the tensor cores.
template <bool vector_b, bool vector_c>
__device__ __forceinline__ void sgemm_tf32x3_block(const float* __restrict__ a,
                                                   const float* __restrict__ b,
                                                   float* __restrict__ c, int m, int n, int k,
                                                   int ldb) {
  constexpr bool vector_a = vector_b && VECTOR_A;
  extern __shared__ float4 shared_words[];
  float* shared = reinterpret_cast<float*>(shared_words);

  const WarpPlace place = warp_place(m, n);
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int group = lane / 4, in_group = lane % 4;
  // By chunks, the lane's rows of A (group, and 8 and 16 apart in a block that starts on a
  // multiple of 4) and of B (in_group, and 4 apart) sit shifted alike.
  const int a_shift = vector_a ? 0 : shifted_floats(a, k, group);
  const int b_shift = vector_b ? 0 : shifted_floats(b, n, in_group);
  const auto a_lane =
      static_cast<unsigned>(sizeof(float) * a_offset(place.warp_row + group, in_group + a_shift));
  const auto b_lane = static_cast<unsigned>(
      sizeof(float) * b_offset(in_group, place.warp_column + group + b_shift));

  const KRange slice = k_range(k);
  const int length = slice.end - slice.begin;
  const int tiles = length / BK + (length % BK != 0);
  const TensorTiles unchecked =
      unchecked_tensor_tiles<vector_a, vector_b>(slice, n, k, a, b, place.block_n);
  auto fetch_tile = [&](int tile, float* stage) {
    const int k_first = slice.begin + tile * BK;
    if (tile >= unchecked.first_unchecked && tile < unchecked.end_unchecked)
      fetch_tensor_tile<vector_a, vector_b, false>(stage, a, b, m, n, k, ldb, place.block_m,
                                                   place.block_n, k_first, slice.end);
    else
      fetch_tensor_tile<vector_a, vector_b, true>(stage, a, b, m, n, k, ldb, place.block_m,
                                                  place.block_n, k_first, slice.end);
  };

  float sum[kMmaTilesM][kMmaTilesN][4];
  // Every element of the block's panels passes through some warp's fragments.
  if (__syncthreads_or(
          accumulate_tile<false>(fetch_tile, shared, a_lane, b_lane, tiles, place.computes, sum)))
    accumulate_tile<true>(fetch_tile, shared, a_lane, b_lane, tiles, place.computes, sum);

  allow_next_grid();
  // A split's partial product goes to slice z of the workspace, whose rows are pitched to whole
  // float4s (sgemm_block's contract): by pairs whatever N.
  constexpr bool vector_out = vector_c || SPLIT_K > 1;
  const long long pitch = SPLIT_K == 1 ? n : workspace_pitch(n);
  float* destination = c + m * pitch * blockIdx.z;
#pragma unroll
  for (int i = 0; i < kMmaTilesM; ++i)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = place.block_m + place.warp_row + i * 16 + group + half * 8;
      if (row >= m) continue;
      float* c_row = destination + row * pitch;
#pragma unroll
      for (int j = 0; j < kMmaTilesN; ++j) {
        const int column = place.block_n + place.warp_column + j * 8 + in_group * 2;
        const float first = sum[i][j][2 * half], second = sum[i][j][2 * half + 1];
        if (vector_out) {
          // The pitch even and the column even: a pair that starts before the pitch ends within
          // it. A split's partials fill the pitch, which the reduction reads by float4.
          if (column < pitch)
            *reinterpret_cast<float2*>(c_row + column) = make_float2(first, second);
        } else {
          if (column < n) c_row[column] = first;
          if (column + 1 < n) c_row[column + 1] = second;
        }
      }
    }
}

}  // namespace
