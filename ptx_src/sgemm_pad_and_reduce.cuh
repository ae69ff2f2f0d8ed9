// sgemm.cu's kernels around the product: the copy of a ragged B to padded rows, and the sum of a
// split's partial products.

// B (rows × n, any 4-byte alignment) copied to `padded`, whose rows are `pitch` floats apart
// (pitch % 4 == 0, padded 16-byte aligned), with zeros past column n, for sgemm_pitched_b: a
// ragged N would otherwise make sgemm load B 4 bytes at a time. Each thread writes float4s of the
// copy, blockIdx.y walking the rows and x their float4s.
extern "C" __global__ void __launch_bounds__(256)
    sgemm_pad_rows(const float* __restrict__ b, float* __restrict__ padded, int rows, int n,
                   int pitch) {
  const int quads = pitch / 4;
  for (long long row = blockIdx.y; row < rows; row += gridDim.y) {
    const float* source = b + row * n;
    float4* destination = reinterpret_cast<float4*>(padded + row * pitch);
    for (int quad = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); quad < quads;
         quad += static_cast<int>(gridDim.x * blockDim.x)) {
      const int column = 4 * quad;
      float values[4];
#pragma unroll
      for (int q = 0; q < 4; ++q) values[q] = column + q < n ? source[column + q] : 0.0f;
      destination[quad] = make_float4(values[0], values[1], values[2], values[3]);
    }
  }
}

// C's element (row, column) = the sum of the SPLIT_K partials of that element, always added in the
// same order, so that a split product is the same bits on every run. The workspace's slices are
// M rows of workspace_pitch(N) floats: float4 units, `count` per slice. The deep splits of a small
// C leave few units, each with many partials: a block's threads form kReduceGroups groups side by
// side, group g adding slices g, g + kReduceGroups, ... of the block's units in order, and the
// first group then adding the groups' sums in group order. A grid-stride loop over runs of
// kReduceElements units: any grid covers any count (the host launches one block a run,
// sgemm_reduce_launch). `write` puts a unit's sum in C.
constexpr int kReduceThreads = 256;
// A power of two up to 8, at most SPLIT_K (sgemm_reduce_groups on the host says the same).
constexpr int kReduceGroups = SPLIT_K >= 8 ? 8 : SPLIT_K >= 4 ? 4 : SPLIT_K >= 2 ? 2 : 1;
constexpr int kReduceElements = kReduceThreads / kReduceGroups;

__device__ inline void accumulate(float4& sum, const float4& part) {
  sum.x += part.x, sum.y += part.y, sum.z += part.z, sum.w += part.w;
}

template <typename Write>
__device__ void reduce_slices(const float4* __restrict__ slices, long long count, float4* sums,
                              Write write) {
  const int element = threadIdx.x % kReduceElements;
  const int group = threadIdx.x / kReduceElements;
  for (long long base = static_cast<long long>(blockIdx.x) * kReduceElements; base < count;
       base += static_cast<long long>(gridDim.x) * kReduceElements) {
    const long long i = base + element;
    if (i < count) {
      float4 sum = slices[group * count + i];
#pragma unroll 8
      for (int z = group + kReduceGroups; z < SPLIT_K; z += kReduceGroups)
        accumulate(sum, slices[z * count + i]);
      sums[threadIdx.x] = sum;
    }
    __syncthreads();
    if (group == 0 && i < count) {
      float4 total = sums[element];
#pragma unroll
      for (int g = 1; g < kReduceGroups; ++g)
        accumulate(total, sums[g * kReduceElements + element]);
      write(i, total);
    }
    __syncthreads();  // the sums are written again by the next run
  }
}

// `partials`: the workspace, 16-byte aligned; C: m×n at any 4-byte alignment.
extern "C" __global__ void __launch_bounds__(kReduceThreads)
    sgemm_split_reduce(const float* __restrict__ partials, float* __restrict__ c, int m, int n) {
  __shared__ float4 sums[kReduceThreads];
  wait_for_previous_grid();
  const long long units_per_row = workspace_pitch(n) / 4;
  const long long count = m * units_per_row;
  const auto* slices = reinterpret_cast<const float4*>(partials);
  if (n % 4 == 0 && reinterpret_cast<unsigned long long>(c) % 16 == 0) {
    // The pitch is N: unit i of the workspace is float4 i of C.
    reduce_slices(slices, count, sums, [c](long long i, const float4& total) {
      reinterpret_cast<float4*>(c)[i] = total;
    });
  } else {
    reduce_slices(slices, count, sums, [=](long long i, const float4& total) {
      const long long row = i / units_per_row;
      const int column = static_cast<int>(4 * (i - row * units_per_row));
      float* c_row = c + row * n;
      const float values[4] = {total.x, total.y, total.z, total.w};
#pragma unroll
      for (int q = 0; q < 4; ++q)
        if (column + q < n) c_row[column + q] = values[q];
    });
  }
}
