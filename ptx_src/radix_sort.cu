// Stable LSD radix sort of 32-bit keys, optionally carrying 32-bit values: 8 bits per pass, one
// kernel per pass ("onesweep", Adinets & Merrill 2022). A first kernel counts every pass's digits
// at once; then each pass ranks a tile of BLOCK_SIZE*ITEMS keys in shared memory, learns where its
// digits start from the tiles before it by a decoupled look-back, and writes each digit's keys as
// one contiguous run. Each key is read and written once per pass.
//
// Keys move as raw bits. key_is_float = 0: unsigned order; 1: floats as numbers, through the
// usual bijection (negatives: every bit flipped; positives: the sign bit set), which orders -NaN
// first, then -inf .. -0, +0 .. +inf, +NaN (-0 before +0). Equal keys keep their input order.
//
// Look-back: status[tile][digit] is one 32-bit word, flag << 30 | count (flag 1: this tile's own
// count, 2: the count of the tiles up to it), so n < 2^30. A tile takes its index from an atomic
// counter, in the order blocks start: a tile only waits for tiles that a running block holds.
// Each pass zeroes the other status array for the next pass (ping-pong), so the host clears
// status[0] once per sort.
//
// Host sequence for n keys, 1 <= n < 2^30, `passes` = ceil(bits/8) digits from bit 0:
//   zero histograms (passes*256), tile_counters (passes) and status[0] (tiles*256), tiles =
//   ceil(n/(BLOCK_SIZE*ITEMS))
//   radix_histogram grid=(G) block=(BLOCK_SIZE)
//   for p = 0 .. passes-1: radix_onesweep grid=(tiles) block=(BLOCK_SIZE) with status[p%2],
//     next_status = status[(p+1)%2] (null after the last pass); swap keys (values) in and out.
//
// clang-format off
// ptxrt: define BLOCK_SIZE in {256, 384, 512} default 384
// ptxrt: define ITEMS in {8, 12, 16, 20} default 16
// ptxrt: entry radix_histogram grid=(G) block=(BLOCK_SIZE) — histograms[p*256 + d] += keys whose digit p is d, for p < passes; grid-stride, any G >= 1
// ptxrt: entry radix_onesweep grid=(ceil(n/(BLOCK_SIZE*ITEMS))) block=(BLOCK_SIZE) — one pass: keys_out (values_out) = keys_in (values_in) ordered stably by digit `pass`; values_in may be null
// clang-format on

#ifndef BLOCK_SIZE
#error "BLOCK_SIZE must be defined (256, 384 or 512)"
#endif
#ifndef ITEMS
#error "ITEMS must be defined (8, 12, 16 or 20)"
#endif
#if BLOCK_SIZE < 256 || BLOCK_SIZE % 32 != 0
#error "BLOCK_SIZE must be a multiple of 32 of at least 256 (one thread per digit)"
#endif
#if BLOCK_SIZE * ITEMS * 4 + 4096 > 49152
#error "BLOCK_SIZE*ITEMS keys must fit the 48 KiB of static shared memory"
#endif

#define RADIX 256
#define MAX_PASSES 4
#define WARPS (BLOCK_SIZE / 32)
#define TILE (BLOCK_SIZE * ITEMS)
#define FULL_WARP 0xffffffffu
#define FLAG_AGGREGATE 1u
#define FLAG_INCLUSIVE 2u
#define COUNT_MASK 0x3fffffffu

__device__ __forceinline__ unsigned ordered_bits(unsigned bits, int key_is_float) {
  if (!key_is_float) return bits;
  return bits ^ ((bits >> 31) != 0 ? 0xffffffffu : 0x80000000u);
}

__device__ __forceinline__ unsigned digit_of(unsigned bits, int key_is_float, int pass) {
  return (ordered_bits(bits, key_is_float) >> (8 * pass)) & (RADIX - 1);
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    radix_histogram(const unsigned* __restrict__ keys, long long n, int passes, int key_is_float,
                    unsigned* __restrict__ histograms) {
  __shared__ unsigned counts[MAX_PASSES][RADIX];
  for (int k = threadIdx.x; k < MAX_PASSES * RADIX; k += BLOCK_SIZE) (&counts[0][0])[k] = 0;
  __syncthreads();
  // 16-byte loads: cuMemAlloc'd key arrays are 256-byte aligned; the last n % 4 keys go singly.
  const uint4* quads = reinterpret_cast<const uint4*>(keys);
  const long long quad_count = n / 4;
  const long long stride = static_cast<long long>(gridDim.x) * BLOCK_SIZE;
  for (long long q = static_cast<long long>(blockIdx.x) * BLOCK_SIZE + threadIdx.x; q < quad_count;
       q += stride) {
    const uint4 four = quads[q];
    for (int p = 0; p < passes; ++p) {
      atomicAdd(&counts[p][digit_of(four.x, key_is_float, p)], 1u);
      atomicAdd(&counts[p][digit_of(four.y, key_is_float, p)], 1u);
      atomicAdd(&counts[p][digit_of(four.z, key_is_float, p)], 1u);
      atomicAdd(&counts[p][digit_of(four.w, key_is_float, p)], 1u);
    }
  }
  const long long tail =
      quad_count * 4 + static_cast<long long>(blockIdx.x) * BLOCK_SIZE + threadIdx.x;
  if (tail < n)
    for (int p = 0; p < passes; ++p)
      atomicAdd(&counts[p][digit_of(keys[tail], key_is_float, p)], 1u);
  __syncthreads();
  for (int k = threadIdx.x; k < passes * RADIX; k += BLOCK_SIZE) {
    const unsigned count = (&counts[0][0])[k];
    if (count != 0) atomicAdd(&histograms[k], count);
  }
}

__device__ __forceinline__ unsigned load_status(const unsigned* status) {
  return *static_cast<const volatile unsigned*>(status);
}

__device__ __forceinline__ void store_status(unsigned* status, unsigned flag, unsigned count) {
  *static_cast<volatile unsigned*>(status) = flag << 30 | count;
}

// The lanes whose 8-bit digit equals this lane's, by one vote per bit: cheaper than match.any.
__device__ __forceinline__ unsigned lanes_with_same_digit(unsigned digit) {
  unsigned peers = FULL_WARP;
#pragma unroll
  for (int bit = 0; bit < 8; ++bit) {
    const bool set = (digit >> bit) & 1u;
    const unsigned votes = __ballot_sync(FULL_WARP, set);
    peers &= set ? votes : ~votes;
  }
  return peers;
}

// Exclusive sums over the 256 digits of two counts at once, one digit per thread of the first 8
// warps; every thread of the block must call it (it has barriers). `warp_sums` holds 8 uint2.
__device__ __forceinline__ uint2 digit_exclusive_sums(uint2 value, uint2* warp_sums) {
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  uint2 inclusive = value;
  for (int offset = 1; offset < 32; offset *= 2) {
    const unsigned x = __shfl_up_sync(FULL_WARP, inclusive.x, offset);
    const unsigned y = __shfl_up_sync(FULL_WARP, inclusive.y, offset);
    if (lane >= offset) {
      inclusive.x += x;
      inclusive.y += y;
    }
  }
  if (lane == 31 && warp < RADIX / 32) warp_sums[warp] = inclusive;
  __syncthreads();
  uint2 before = make_uint2(0, 0);
  for (int w = 0; w < warp && w < RADIX / 32; ++w) {
    before.x += warp_sums[w].x;
    before.y += warp_sums[w].y;
  }
  return make_uint2(before.x + inclusive.x - value.x, before.y + inclusive.y - value.y);
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
    radix_onesweep(const unsigned* __restrict__ keys_in, unsigned* __restrict__ keys_out,
                   const unsigned* __restrict__ values_in, unsigned* __restrict__ values_out,
                   long long n, int pass, int key_is_float, const unsigned* __restrict__ histograms,
                   unsigned* status, unsigned* __restrict__ next_status,
                   unsigned* __restrict__ tile_counters) {
  // The warps' digit counters live only until the keys are ranked; the exchange of keys (then
  // values) into digit order reuses their space.
  __shared__ union {
    unsigned warp_counts[WARPS][RADIX];
    unsigned exchange[TILE];
  } shared;
  __shared__ unsigned digit_start[RADIX];      // where each digit's run starts in the tile
  __shared__ unsigned digit_to_output[RADIX];  // global position of the run minus digit_start
  __shared__ uint2 warp_sums[RADIX / 32];
  __shared__ unsigned tile_slot;

  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  if (threadIdx.x == 0) tile_slot = atomicAdd(&tile_counters[pass], 1u);
  for (int k = threadIdx.x; k < WARPS * RADIX; k += BLOCK_SIZE) (&shared.warp_counts[0][0])[k] = 0;
  __syncthreads();
  const long long tile = tile_slot;
  const long long tile_begin = tile * TILE;
  const int tile_count = static_cast<int>(n - tile_begin < TILE ? n - tile_begin : TILE);

  // Warp-striped: item i of a lane is at warp_begin + 32*i + lane, so a warp's items, taken in
  // order i and lane, are in input order; ranking them in that order keeps the sort stable.
  const int warp_begin = warp * 32 * ITEMS;
  const unsigned lanes_below = (1u << lane) - 1u;
  unsigned keys[ITEMS];
  unsigned ranks[ITEMS];
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int position = warp_begin + 32 * i + lane;
    keys[i] = position < tile_count ? keys_in[tile_begin + position] : 0u;
  }
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    // Every lane takes part (a partial mask makes the compiler serialize the warp); a lane past
    // the tile's end matches only lanes past it and counts nothing.
    const bool valid = warp_begin + 32 * i + lane < tile_count;
    const unsigned digit = digit_of(keys[i], key_is_float, pass);
    const unsigned valid_lanes = __ballot_sync(FULL_WARP, valid);
    const unsigned peers = lanes_with_same_digit(digit) & (valid ? valid_lanes : ~valid_lanes);
    const int leader = __ffs(peers) - 1;
    unsigned before = 0;
    if (lane == leader && valid) {
      before = shared.warp_counts[warp][digit];
      shared.warp_counts[warp][digit] = before + __popc(peers);
    }
    ranks[i] = __shfl_sync(FULL_WARP, before, leader) + __popc(peers & lanes_below);
    __syncwarp();
  }
  __syncthreads();

  // Per digit: the warps' counts become their offsets inside the digit's run of this tile.
  const unsigned digit = threadIdx.x;
  unsigned tile_digit_count = 0;
  if (digit < RADIX) {
    for (int w = 0; w < WARPS; ++w) {
      const unsigned count = shared.warp_counts[w][digit];
      shared.warp_counts[w][digit] = tile_digit_count;
      tile_digit_count += count;
    }
    // Publish early: later tiles need this tile's counts before this tile knows its own prefix.
    store_status(&status[tile * RADIX + digit], tile == 0 ? FLAG_INCLUSIVE : FLAG_AGGREGATE,
                 tile_digit_count);
    if (next_status != nullptr) next_status[tile * RADIX + digit] = 0;
  }
  const uint2 sums = digit_exclusive_sums(
      make_uint2(tile_digit_count, digit < RADIX ? histograms[pass * RADIX + digit] : 0u),
      warp_sums);
  if (digit < RADIX) {
    unsigned before_tile = 0;
    for (long long other = tile - 1; other >= 0;) {
      const unsigned word = load_status(&status[other * RADIX + digit]);
      const unsigned flag = word >> 30;
      if (flag == 0) continue;  // that tile has not counted yet
      before_tile += word & COUNT_MASK;
      if (flag == FLAG_INCLUSIVE) break;
      --other;
    }
    if (tile != 0)
      store_status(&status[tile * RADIX + digit], FLAG_INCLUSIVE, before_tile + tile_digit_count);
    digit_start[digit] = sums.x;
    digit_to_output[digit] = sums.y + before_tile - sums.x;
  }
  __syncthreads();

  unsigned positions[ITEMS];
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const unsigned d = digit_of(keys[i], key_is_float, pass);
    positions[i] = digit_start[d] + shared.warp_counts[warp][d] + ranks[i];
  }
  __syncthreads();  // the counters are read; the exchange may overwrite them
#pragma unroll
  for (int i = 0; i < ITEMS; ++i)
    if (warp_begin + 32 * i + lane < tile_count) shared.exchange[positions[i]] = keys[i];
  __syncthreads();

  // Consecutive threads take consecutive positions of the digit-ordered tile: each digit's run is
  // written contiguously.
  unsigned outputs[ITEMS];
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int position = k * BLOCK_SIZE + threadIdx.x;
    if (position < tile_count) {
      const unsigned key = shared.exchange[position];
      outputs[k] = digit_to_output[digit_of(key, key_is_float, pass)] + position;
      keys_out[outputs[k]] = key;
    }
  }
  if (values_in == nullptr) return;
  __syncthreads();
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const int position = warp_begin + 32 * i + lane;
    if (position < tile_count) shared.exchange[positions[i]] = values_in[tile_begin + position];
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int position = k * BLOCK_SIZE + threadIdx.x;
    if (position < tile_count) values_out[outputs[k]] = shared.exchange[position];
  }
}
