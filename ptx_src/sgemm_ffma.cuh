// sgemm.cu's product by FFMA (TF32X3 = 0, or before compute capability 8.0): how a block's
// threads bring A's and B's tiles to shared memory at any alignment (TileLoader), multiply them,
// and store their results to C or to a split's workspace at any alignment (store_tile_ragged).
// The block's tile, its warps, the ring, the splits of K, GROUP_M and the entries are sgemm.cu's.
namespace {

// A is staged transposed (k-major) so that a thread's TM values for one k are float4 reads.
// Four floats of padding per k row: the cp.async writes of one warp (8 k × 4 rows) then land in
// 32 distinct banks, and rows stay 16-byte aligned.
constexpr int kStrideA = kBlockM + 4;
constexpr int kStageFloats = BK * (kStrideA + kBlockN);

// Component q of `rows` consecutive float4 (one per row), as one store of `rows` floats.
template <int rows>
__device__ __forceinline__ void store_column(float* destination, const float4* values, int q) {
  const auto pick = [q](const float4& v) {
    return q == 0 ? v.x : q == 1 ? v.y : q == 2 ? v.z : v.w;
  };
  if (rows == 4)
    *reinterpret_cast<float4*>(destination) =
        make_float4(pick(values[0]), pick(values[1]), pick(values[2]), pick(values[3]));
  else if (rows == 2)
    *reinterpret_cast<float2*>(destination) = make_float2(pick(values[0]), pick(values[1]));
  else
    *destination = pick(values[0]);
}

// How B's tile reaches shared memory. by_vector: 16-byte cp.async, where B's rows are 16-byte
// aligned. At any alignment, by_float: a 4-byte cp.async per float (ncu at 1119×734×180: the L1
// at 41 % of its throughput where the aligned entry keeps it at 16 %; a ragged N lost a quarter
// of its rate at deep K where C was aligned). realigned: a row's 16-byte-aligned chunks by
// 16-byte loads into registers; after the tile's compute each lane takes the floats its unit
// needs past its chunk from the next lane's chunk by shuffle and stores the unit as one float4.
// Only the last lane of a row (or of a warp) has no next lane: it loads its own unit with 4-byte
// cp.async besides the chunk its neighbour needs.
enum class LoadB { by_float, by_vector, realigned };

// A thread's chunks of B in flight, realigned, take 4 registers each beside its TM×TN results. A
// tile with more than 4, or whose launch bound leaves fewer than 56 registers besides the two
// (the rest of the loop's state and the epilogue; both fitted to the listed configs' ptxas
// counts), would spill, and loads a ragged B a float at a time instead.
constexpr int kChunksB = (kBlockN / 4 * BK + kThreads - 1) / kThreads;
constexpr int kRegisterCap =
    65536 / (kThreads * MIN_BLOCKS) / 8 * 8 < 255 ? 65536 / (kThreads * MIN_BLOCKS) / 8 * 8 : 255;
constexpr LoadB kRaggedB = kChunksB <= 4 && 4 * kChunksB + TM * TN + 56 <= kRegisterCap
                               ? LoadB::realigned
                               : LoadB::by_float;

// Where each thread's share of a tile comes from and goes to. Rows past M are clamped to the last
// one, columns past N to the last unit of B's row (a padded B's pad holds zeros; realigned, the
// chunks past N are the next rows' floats, and those past B's end zeros): their results are
// never stored, so any finite data will do and no address leaves the matrix; k past K is
// zero-filled, since it enters every dot product.
// Per copy a thread keeps one int (its clamped row or column) and rebuilds the 64-bit address
// each tile with one wide multiply-add: 64-bit pointers per copy would cost registers that the
// TM×TN accumulators need.
template <bool vector_a, LoadB load_b>
struct TileLoader {
  // A: a unit is kRowsA consecutive rows × kWidthA consecutive k, one global load per row.
  // 8 / kWidthA threads cover 8 consecutive k of a unit's rows (one 32-byte sector per row), the
  // rest of the block the next rows: kRowsPerPassA rows per pass. kRowsPerPassA and BM are
  // powers of two, so one divides the other: either a thread visits kPassesA row groups, or it
  // stays on one and the block covers several groups of 8 k per pass.
  // Shared side (kStrideA ≡ 4 banks): a warp's 4-byte copies are 4 rows × 8 k, in banks
  // 4·k + row; a warp's vector stores of one k are 16 consecutive rows at k and at k + 4,
  // 16 banks apart. Both hit 32 distinct banks. Vector units are 2 or 4 rows tall when a
  // thread has 8 or 16 elements, so that it stores them with float2 or float4 (4 stores for
  // its 4 k) rather than one float each.
  static constexpr int kWidthA = vector_a ? 4 : 1;
  static constexpr int kElementsA = kBlockM * BK / kThreads;
  static constexpr int kRowsA = !vector_a ? 1 : kElementsA >= 16 ? 4 : kElementsA >= 8 ? 2 : 1;
  static constexpr int kLanesPerRowA = 8 / kWidthA;
  static constexpr int kRowsPerPassA = kThreads / kLanesPerRowA * kRowsA;
  static constexpr int kPassesA = kRowsPerPassA < kBlockM ? kBlockM / kRowsPerPassA : 1;
  static constexpr int kKStepA = kRowsPerPassA > kBlockM ? 8 * (kRowsPerPassA / kBlockM) : 8;
  static constexpr int kUnitsA = kBlockM * BK / (kWidthA * kRowsA);
  static constexpr int kCopiesA = (kUnitsA + kThreads - 1) / kThreads;
  static constexpr bool kExactA = kUnitsA % kThreads == 0;
  // B: row-major BK×BN in units of float4 (by_vector, realigned) or float, consecutive along n:
  // unit u of the flattened tile goes to thread u % kThreads, whether a row holds more units than
  // the block has threads (kPassesB columns each) or fewer (then kKStepB rows apart).
  static constexpr int kWidthB = load_b == LoadB::by_float ? 1 : 4;
  static constexpr int kUnitsPerRowB = kBlockN / kWidthB;
  static constexpr int kUnitsB = kUnitsPerRowB * BK;
  static constexpr int kCopiesB = (kUnitsB + kThreads - 1) / kThreads;
  static constexpr bool kExactB = kUnitsB % kThreads == 0;
  static constexpr int kPassesB = kThreads < kUnitsPerRowB ? kUnitsPerRowB / kThreads : 1;
  static constexpr int kKStepB = kThreads > kUnitsPerRowB ? kThreads / kUnitsPerRowB : 1;
  // realigned: the lanes of a warp that share a row of B (a whole warp where a row has more
  // units than 32).
  static constexpr int kLanesPerRowB = kUnitsPerRowB < 32 ? kUnitsPerRowB : 32;

  int row_a[kPassesA][kRowsA];  // clamped global rows
  int k_a;                      // the thread's first k within a tile
  int shared_a;                 // where that k and its first row sit in a stage
  // Global columns, clamped (realigned: not clamped, an unsigned int so that n + BN fits).
  unsigned column_b[kPassesB];
  int k_b;
  int shared_b;
  // realigned: B's float offset from 16 bytes in the thread's first row (mod 4), how much each
  // next row adds to it (N mod 4), and whether the thread's unit ends its row (or warp).
  int shift_b;
  int shift_per_row_b;
  bool last_in_row_b;
  // vector_a: the A of the tile in flight, between fetch() and store(); unused otherwise.
  float4 staged_a[vector_a ? kCopiesA * kRowsA : 1];
  // realigned: B's chunks in flight, likewise.
  float4 staged_b[load_b == LoadB::realigned ? kCopiesB : 1];

  // `ldb`: B's row pitch in floats (N, or a padded copy's multiple of 4).
  __device__ TileLoader(int m, const float* b, int ldb, int block_m, int block_n) {
    const int thread = static_cast<int>(threadIdx.x);
    const int first_row = thread / kLanesPerRowA * kRowsA;  // < kRowsPerPassA
    const int tile_row = first_row % kBlockM;
    k_a = kWidthA * (thread % kLanesPerRowA) + (first_row / kBlockM) * 8;
    shared_a = k_a * kStrideA + tile_row;
#pragma unroll
    for (int pass = 0; pass < kPassesA; ++pass)
#pragma unroll
      for (int r = 0; r < kRowsA; ++r)
        row_a[pass][r] = min(block_m + tile_row + pass * kRowsPerPassA + r, m - 1);

    const int unit = thread % kUnitsPerRowB;
    k_b = thread / kUnitsPerRowB;
    shared_b = BK * kStrideA + k_b * kBlockN + unit * kWidthB;
#pragma unroll
    for (int pass = 0; pass < kPassesB; ++pass)
      column_b[pass] = load_b == LoadB::realigned
                           ? static_cast<unsigned>(block_n) + (unit + pass * kThreads) * kWidthB
                           : min(block_n + (unit + pass * kThreads) * kWidthB, ldb - kWidthB);
    // Units start on multiples of 4 columns, and slices on multiples of BK rows: the offset of a
    // row's chunks is the same in every tile.
    shift_per_row_b = ldb % 4;
    shift_b = shifted_floats(b, ldb, k_b);
    last_in_row_b = thread % kLanesPerRowB == kLanesPerRowB - 1;
    // A copy that a thread skips (its row past BK) is shuffled all the same.
#pragma unroll
    for (int i = 0; i < (load_b == LoadB::realigned ? kCopiesB : 0); ++i)
      staged_b[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }

  // Starts the tile whose first k is k_first on its way to `stage`: cp.async for B, and for A
  // either cp.async too or (vector_a) loads into staged_a, which store() then puts in place.
  // `k` is A's row length, `ldb` B's; `check_k` only for a slice's last tile, where k may reach
  // k_end.
  template <bool check_k>
  __device__ __forceinline__ void fetch(float* stage, const float* a, const float* b, int ldb,
                                        int k, int k_end, int k_first) {
#pragma unroll
    for (int i = 0; i < kCopiesA; ++i) {
      const int pass = i % kPassesA;
      const int k_offset = (i / kPassesA) * kKStepA;
      if (kExactA || k_a + k_offset < BK) {
        const int k_global = k_first + k_a + k_offset;
        // k % 4 == 0 on the vector path, and a slice ends at K or at a multiple of BK, so a
        // float4 of A is all inside the slice or all past it.
        const bool valid = !check_k || k_global < k_end;
#pragma unroll
        for (int r = 0; r < kRowsA; ++r) {
          const float* source = a + static_cast<long long>(row_a[pass][r]) * k + k_global;
          if constexpr (vector_a)
            staged_a[i * kRowsA + r] = valid ? *reinterpret_cast<const float4*>(source)
                                             : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
          else
            copy_float(stage + shared_a + k_offset * kStrideA + pass * kRowsPerPassA + r,
                       valid ? source : a, valid);
        }
      }
    }
#pragma unroll
    for (int i = 0; i < kCopiesB; ++i) {
      const int pass = i % kPassesB;
      const int k_offset = (i / kPassesB) * kKStepB;
      if (kExactB || k_b + k_offset < BK) {
        const int k_global = k_first + k_b + k_offset;
        const bool valid = !check_k || k_global < k_end;
        const float* source = b + static_cast<long long>(k_global) * ldb + column_b[pass];
        float* destination = stage + shared_b + k_offset * kBlockN + pass * kThreads * kWidthB;
        if constexpr (load_b == LoadB::by_vector)
          copy_float4(destination, valid ? source : b, valid);
        else if constexpr (load_b == LoadB::by_float)
          copy_float(destination, valid ? source : b, valid);
        else
          fetch_realigned<check_k>(staged_b[i], destination, source, b, ldb, k, valid,
                                   column_b[pass]);
      }
    }
  }

  // realigned: the 16-byte chunk that holds `unit`'s first float into `chunk`, and for the last
  // lane of a row its unit's floats by cp.async. Unchecked (sgemm_block's unchecked tiles), every
  // chunk and unit lies inside B. Checked, a chunk that reaches past B (the first or last floats
  // of a B that does not start or end on 16 bytes) is read a float at a time, zeros outside, and
  // a unit's floats past N are zeros.
  template <bool checked>
  __device__ __forceinline__ void fetch_realigned(float4& chunk, float* destination,
                                                  const float* unit, const float* b, int ldb, int k,
                                                  bool valid, unsigned column) {
    const float* first = chunk_start(unit);
    if constexpr (!checked) {
      chunk = __ldcg(reinterpret_cast<const float4*>(first));
      if (last_in_row_b) {
#pragma unroll
        for (int t = 0; t < 4; ++t) copy_float(destination + t, unit + t, true);
      }
      return;
    }
    const auto begin = reinterpret_cast<unsigned long long>(b);
    const auto end = begin + static_cast<unsigned long long>(k) * ldb * sizeof(float);
    const auto address = reinterpret_cast<unsigned long long>(first);
    if (!valid) {
      chunk = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    } else if (address >= begin && address + 16 <= end) {
      chunk = __ldcg(reinterpret_cast<const float4*>(first));
    } else {
      float part[4];
#pragma unroll
      for (int t = 0; t < 4; ++t) {
        const unsigned long long at = address + t * sizeof(float);
        part[t] = at >= begin && at < end ? first[t] : 0.0f;
      }
      chunk = make_float4(part[0], part[1], part[2], part[3]);
    }
    if (last_in_row_b) {
#pragma unroll
      for (int t = 0; t < 4; ++t) {
        const bool inside = valid && column + t < static_cast<unsigned>(ldb);
        copy_float(destination + t, inside ? unit + t : b, inside);
      }
    }
  }

  // vector_a: writes staged_a transposed into `stage` (the one fetch() was given): for each of
  // the 4 k of a unit, its kRowsA rows as one store. realigned: B's units from staged_b.
  __device__ __forceinline__ void store(float* stage) const {
    if constexpr (load_b == LoadB::realigned) {
#pragma unroll
      for (int i = 0; i < kCopiesB; ++i) {
        const int pass = i % kPassesB;
        const int k_offset = (i / kPassesB) * kKStepB;
        // Every lane shuffles, so that the warp is converged; the last lane of a row reads the
        // first lane of the next row, and discards it.
        const float4 own = staged_b[i];
        const float next_x = __shfl_down_sync(0xffffffffu, own.x, 1);
        const float next_y = __shfl_down_sync(0xffffffffu, own.y, 1);
        const float next_z = __shfl_down_sync(0xffffffffu, own.z, 1);
        if ((kExactB || k_b + k_offset < BK) && !last_in_row_b) {
          const int shift = (shift_b + k_offset % 4 * shift_per_row_b) % 4;
          // By 2 floats, then by 1: the unit is floats shift to shift + 3 of own·next.
          const bool by_two = shift >= 2;
          const float x0 = by_two ? own.z : own.x, x1 = by_two ? own.w : own.y;
          const float x2 = by_two ? next_x : own.z, x3 = by_two ? next_y : own.w;
          const float x4 = by_two ? next_z : next_x;
          const bool by_one = shift % 2 == 1;
          *reinterpret_cast<float4*>(stage + shared_b + k_offset * kBlockN +
                                     pass * kThreads * kWidthB) =
              by_one ? make_float4(x1, x2, x3, x4) : make_float4(x0, x1, x2, x3);
        }
      }
    }
    if constexpr (vector_a) {
#pragma unroll
      for (int i = 0; i < kCopiesA; ++i) {
        const int pass = i % kPassesA;
        const int k_offset = (i / kPassesA) * kKStepA;
        if (kExactA || k_a + k_offset < BK) {
          float* destination = stage + shared_a + k_offset * kStrideA + pass * kRowsPerPassA;
#pragma unroll
          for (int q = 0; q < 4; ++q)
            store_column<kRowsA>(destination + q * kStrideA, &staged_a[i * kRowsA], q);
        }
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

// Float `t` of the 16-byte chunk that starts `offset` floats into `run` (a lane's four floats and
// the next lane's four): selects, not an index into the array, which would put it in local
// memory.
__device__ __forceinline__ float chunk_float(const float (&run)[8], int offset, int t) {
  return offset == 0 ? run[t] : offset == 1 ? run[t + 1] : offset == 2 ? run[t + 2] : run[t + 3];
}

// Row i of the thread's tile sits at warp_row + (i/4)·LANES_M·4 + i%4; columns likewise. C's rows
// are `pitch` floats apart. By float4 (`vector_c`: pitch % 4 == 0 and C 16-byte aligned), or a
// float at a time at any alignment.
template <bool vector_c>
__device__ __forceinline__ void store_runs(float* c, long long pitch, int m, int n, int first_row,
                                           int first_column, const float (&sum)[TM][TN]) {
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = first_row + (i / 4) * LANES_M * 4 + i % 4;
    if (row >= m) continue;
    float* c_row = c + row * pitch;
#pragma unroll
    for (int j = 0; j < TN / 4; ++j) {
      const int column = first_column + j * kLanesN * 4;
      if (vector_c) {
        // Columns start on multiples of 4 and pitch % 4 == 0: a chunk that starts before N ends
        // within the row's pitch.
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

// Rows of C that need not start on 16 bytes (N % 4 != 0, or C itself off 16 bytes). The kLanesN
// lanes of a row of lanes hold kWarpN consecutive columns of one row, 4 each, run j + 1 of the
// first lane continuing where run j of the last one ends. Each lane stores the 16-byte-aligned
// chunk that starts among its own four floats as one float4, taking the rest of it from the next
// lane by shuffle; the floats before the row's first 16-byte boundary (the first lane's) and
// after its last (the last lane's) go out as a float2 and a float. A float at a time throughout
// took four stores, each touching a cache line per row of lanes, where one does: at K under 50
// the configs run 1.2-1.7x faster (docs/perf-notes.md, "C at any alignment by 16 bytes").
__device__ __forceinline__ void store_tile_ragged(float* c, long long pitch, int m, int n,
                                                  int first_row, int first_column,
                                                  const float (&sum)[TM][TN]) {
  // Read here, not derived from threadIdx.x: a value computed before the main loop and kept
  // through it would cost the loop a register, which the tiles at their register cap spill.
  int lane;
  asm volatile("mov.u32 %0, %%laneid;\n" : "=r"(lane));
  const int in_row = lane % kLanesN;
  const int row_first_column = first_column - 4 * in_row;
  // Warp-uniform: only the warps at C's right edge have columns past N; they store a float at a
  // time, into a split's workspace up to its pitch: the reduction reads whole float4s there.
  if (row_first_column + kWarpN > n) {
    const int written = static_cast<int>(min(pitch, 0x7fffffffll));
    store_runs<false>(c, pitch, m, written, first_row, first_column, sum);
    return;
  }
  const auto c_word =
      static_cast<unsigned>(reinterpret_cast<unsigned long long>(c) / sizeof(float));
  const int next_lane = lane - in_row + (in_row + 1) % kLanesN;
  const bool first_lane = in_row == 0, last_lane = in_row == kLanesN - 1;
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = first_row + (i / 4) * LANES_M * 4 + i % 4;
    float* c_row = c + row * pitch;
    // Floats from the row's first column to its first 16-byte boundary (C is 4-byte aligned):
    // modulo 4, so 32-bit arithmetic that wraps gives it.
    const unsigned first_word = c_word + static_cast<unsigned>(row) * static_cast<unsigned>(pitch) +
                                static_cast<unsigned>(row_first_column);
    const int offset = static_cast<int>((4 - first_word % 4) % 4);
#pragma unroll
    for (int j = 0; j < TN / 4; ++j) {
      const int column = first_column + j * kLanesN * 4;
      const int chunk = column + offset;
      const bool row_start = first_lane && j == 0, row_end = last_lane && j + 1 == TN / 4;
      float run[8];
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        run[q] = sum[i][4 * j + q];
        // The last lane's run j continues in the first lane's run j + 1, which the first lane
        // offers where the others offer their run j. Every lane shuffles, whatever its row: a
        // shuffle needs the whole warp.
        const float offered = first_lane && j + 1 < TN / 4 ? sum[i][4 * (j + 1) + q] : run[q];
        run[4 + q] = __shfl_sync(0xffffffffu, offered, next_lane);
      }
      if (row >= m) continue;
      if (offset == 0 || !row_end)
        *reinterpret_cast<float4*>(c_row + chunk) =
            make_float4(chunk_float(run, offset, 0), chunk_float(run, offset, 1),
                        chunk_float(run, offset, 2), chunk_float(run, offset, 3));
      if (offset != 0 && (row_start || row_end)) {
        // The start's `offset` floats end on a boundary, the end's 4 - offset begin on one: each
        // is at most a float2 on 8 bytes and a float.
        if (row_start ? offset >= 2 : offset <= 2) {
          const int first = row_start ? offset - 2 : offset;
          *reinterpret_cast<float2*>(c_row + column + first) =
              make_float2(chunk_float(run, first, 0), chunk_float(run, first, 1));
        }
        if (offset % 2 == 1) c_row[row_start ? column : column + 3] = row_start ? run[0] : run[3];
      }
    }
  }
}

// C's tile, or with SPLIT_K > 1 slice blockIdx.z's partial product in the workspace `c`, whose
// pitched rows take float4 whatever the alignment of N. `ragged_split` (the entry that realigns
// B): the partials go through store_tile_ragged all the same, whose shuffles then find every row
// on 16 bytes. Stored by float4 straight from the accumulators there, ptxas laid out that entry's
// main loop anew: 64×128 split 16 ran 1.5× slower at 61×9097×4328 (ncu: 309 µs against 200 µs),
// and 128×128 with 256 threads spilled.
template <bool vector_c, bool ragged_split>
__device__ __forceinline__ void store_tile(float* c, int m, int n, int first_row, int first_column,
                                           const float (&sum)[TM][TN]) {
  if constexpr (SPLIT_K > 1) {
    const long long pitch = workspace_pitch(n);
    float* slice = c + m * pitch * blockIdx.z;
    if constexpr (ragged_split)
      store_tile_ragged(slice, pitch, m, n, first_row, first_column, sum);
    else
      store_runs<true>(slice, pitch, m, n, first_row, first_column, sum);
  } else if constexpr (vector_c) {
    store_runs<true>(c, n, m, n, first_row, first_column, sum);
  } else {
    store_tile_ragged(c, n, m, n, first_row, first_column, sum);
  }
}

// The tiles of a slice that TileLoader may fetch without checks: whole tiles of K, and when B is
// realigned, tiles whose chunks all lie inside B. A unit's chunk ends at most BN - 1 floats past
// its row's end (N - 1 + BN floats from the row's start), so a tile whose last row is
// ceil((BN - 1) / N) rows before K's end stays inside; and a B that does not start on 16 bytes has
// its first chunk start before it (only in the first tile).
struct UncheckedTiles {
  int first;
  int end;
};

__device__ __forceinline__ UncheckedTiles unchecked_tiles(KRange slice, int k, int n, LoadB load_b,
                                                          const float* b) {
  const int full_tiles = (slice.end - slice.begin) / BK;
  if (load_b != LoadB::realigned) return {0, full_tiles};
  const long long rows_past = (kBlockN - 2) / n + 1;
  const long long inside = (static_cast<long long>(k) - rows_past - slice.begin) / BK;
  return {slice.begin == 0 && off_16_bytes(b) ? 1 : 0,
          static_cast<int>(max(0ll, min(inside, static_cast<long long>(full_tiles))))};
}

// `vector_b`: B's rows are `ldb` floats apart, ldb % 4 == 0 and B 16-byte aligned (and with
// VECTOR_A, K % 4 == 0 and A 16-byte aligned); otherwise ldb == n and any 4-byte alignment.
// `vector_c`: N % 4 == 0 and C (or the workspace) 16-byte aligned. Both are template parameters,
// not runtime flags: with a uniform runtime branch between the two epilogues ptxas branches around
// each row's stores instead of predicating them, 5-15 % slower where the epilogue dominates.
template <bool vector_b, bool vector_c>
__device__ __forceinline__ void sgemm_block(const float* __restrict__ a,
                                            const float* __restrict__ b, float* __restrict__ c,
                                            int m, int n, int k, int ldb) {
  extern __shared__ float4 shared_words[];
  float* shared = reinterpret_cast<float*>(shared_words);

  const WarpPlace place = warp_place(m, n);
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int thread_row = place.warp_row + (lane / kLanesN) * 4;
  const int thread_column = place.warp_column + (lane % kLanesN) * 4;

  constexpr LoadB load_b = vector_b ? LoadB::by_vector : kRaggedB;
  TileLoader<vector_b && VECTOR_A, load_b> loader(m, b, ldb, place.block_m, place.block_n);
  const KRange slice = k_range(k);
  const int length = slice.end - slice.begin;
  // Written as a quotient plus a remainder test so that k close to INT_MAX cannot overflow.
  const int tiles = length / BK + (length % BK != 0);
  const UncheckedTiles unchecked = unchecked_tiles(slice, k, n, load_b, b);
  auto fetch_tile = [&](int tile, float* stage) {
    const int k_first = slice.begin + tile * BK;
    if (tile >= unchecked.first && tile < unchecked.end)
      loader.template fetch<false>(stage, a, b, ldb, k, slice.end, k_first);
    else
      loader.template fetch<true>(stage, a, b, ldb, k, slice.end, k_first);
  };

#pragma unroll
  for (int stage = 0; stage < STAGES - 1; ++stage) {
    if (stage < tiles) {
      fetch_tile(stage, shared + stage * kStageFloats);
      loader.store(shared + stage * kStageFloats);
    }
    // Committed even when empty, so that group t always holds tile t and one wait count fits all.
    commit_copies();
  }

  float sum[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) sum[i][j] = 0.0f;

  // At BK 16 the loop computes the slice's whole tiles, and a last tile that K ends inside is
  // computed after it, over its rows inside K alone: the rows of zeros past K are 15 of 128 rows'
  // FFMAs at K = 113, 11 of 64 at K = 53. The loop keeps its body (a branch there to that tile's
  // compute slowed whole tiles by up to a tenth). BK 8 leaves at most 7 rows of zeros, and BK 32
  // is for deep K, where they weigh least; in both, ptxas gave the loop more registers with the
  // cut: configs at 128 spilled, others lost a block per SM. A split's slices are whole tiles but
  // the last, and there the cut gave 32x64 tiles of 4x4 a thread 11 more registers in the
  // any-alignment entry, a block per SM fewer.
  constexpr bool last_tile_cut = BK == 16 && SPLIT_K == 1;
  int read_stage = 0;
  int write_stage = STAGES - 1;
  int tile = 0;
  for (; tile < (last_tile_cut ? length / BK : tiles); ++tile) {
    wait_copies<STAGES - 2>();
    // Makes tile `tile` visible to every thread, and tells the copies below that everyone is
    // done computing on write_stage (read in the previous iteration).
    __syncthreads();
    const bool more = tile + STAGES - 1 < tiles;
    float* write = shared + write_stage * kStageFloats;
    if (more) fetch_tile(tile + STAGES - 1, write);
    commit_copies();

    if (place.computes) {
      const float* stage_a = shared + read_stage * kStageFloats + thread_row;
      const float* stage_b = shared + read_stage * kStageFloats + BK * kStrideA + thread_column;
#pragma unroll
      for (int kk = 0; kk < BK; ++kk)
        multiply_k(stage_a + kk * kStrideA, stage_b + kk * kBlockN, sum);
    }
    // The registers' A goes in after the compute, which hid the loads' latency; the tile is
    // read STAGES - 1 >= 1 barriers later.
    if (more) loader.store(write);

    read_stage = read_stage == STAGES - 1 ? 0 : read_stage + 1;
    write_stage = write_stage == STAGES - 1 ? 0 : write_stage + 1;
  }
  if (last_tile_cut && tile < tiles) {
    // As the loop's last iteration: nothing left to fetch or store.
    wait_copies<STAGES - 2>();
    __syncthreads();
    if (place.computes) {
      const float* stage_a = shared + read_stage * kStageFloats + thread_row;
      const float* stage_b = shared + read_stage * kStageFloats + BK * kStrideA + thread_column;
#pragma unroll 2
      for (int kk = 0; kk < length % BK; ++kk)
        multiply_k(stage_a + kk * kStrideA, stage_b + kk * kBlockN, sum);
    }
  }

  // Once every block is past its main loop, the reduction's blocks are set up during the
  // epilogues.
  allow_next_grid();
  store_tile<vector_c, load_b == LoadB::realigned>(c, m, n, place.block_m + thread_row,
                                                   place.block_n + thread_column, sum);
}

}  // namespace
