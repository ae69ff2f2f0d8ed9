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

// C[i] = the sum of the SPLIT_K partials of element i, always added in the same order, so that a
// split product is the same bits on every run. The deep splits of a small C leave few elements,
// each with many partials: a block's threads form kReduceGroups groups side by side, group g
// adding slices g, g + kReduceGroups, ... of the block's elements in order, and the first group
// then adding the groups' sums in group order. A grid-stride loop over runs of
// kReduceElements elements: any grid covers any count (the host launches one block a run,
// sgemm_reduce_launch). By float4 where count % 4 == 0 and C and the workspace are 16-byte
// aligned (a uniform branch), else by float.
constexpr int kReduceThreads = 256;
// A power of two up to 8, at most SPLIT_K (sgemm_reduce_groups on the host says the same).
constexpr int kReduceGroups = SPLIT_K >= 8 ? 8 : SPLIT_K >= 4 ? 4 : SPLIT_K >= 2 ? 2 : 1;
constexpr int kReduceElements = kReduceThreads / kReduceGroups;

__device__ inline void accumulate(float& sum, float part) { sum += part; }
__device__ inline void accumulate(float4& sum, const float4& part) {
  sum.x += part.x, sum.y += part.y, sum.z += part.z, sum.w += part.w;
}

template <typename Element>
__device__ void reduce_slices(const Element* __restrict__ slices, Element* __restrict__ out,
                              long long count, Element* sums) {
  const int element = threadIdx.x % kReduceElements;
  const int group = threadIdx.x / kReduceElements;
  for (long long base = static_cast<long long>(blockIdx.x) * kReduceElements; base < count;
       base += static_cast<long long>(gridDim.x) * kReduceElements) {
    const long long i = base + element;
    if (i < count) {
      Element sum = slices[group * count + i];
#pragma unroll 8
      for (int z = group + kReduceGroups; z < SPLIT_K; z += kReduceGroups)
        accumulate(sum, slices[z * count + i]);
      sums[threadIdx.x] = sum;
    }
    __syncthreads();
    if (group == 0 && i < count) {
      Element total = sums[element];
#pragma unroll
      for (int g = 1; g < kReduceGroups; ++g)
        accumulate(total, sums[g * kReduceElements + element]);
      out[i] = total;
    }
    __syncthreads();  // the sums are written again by the next run
  }
}

extern "C" __global__ void __launch_bounds__(kReduceThreads)
    sgemm_split_reduce(const float* __restrict__ partials, float* __restrict__ c, long long count) {
  __shared__ float4 sums[kReduceThreads];
  wait_for_previous_grid();
  const bool vectors = count % 4 == 0 && reinterpret_cast<unsigned long long>(c) % 16 == 0 &&
                       reinterpret_cast<unsigned long long>(partials) % 16 == 0;
  if (vectors)
    reduce_slices(reinterpret_cast<const float4*>(partials), reinterpret_cast<float4*>(c),
                  count / 4, sums);
  else
    reduce_slices(partials, c, count, reinterpret_cast<float*>(sums));
}
