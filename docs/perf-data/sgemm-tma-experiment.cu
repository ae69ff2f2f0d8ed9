// Experiment: an FFMA SGEMM whose main loop is fed by TMA (cp.async.bulk.tensor + mbarriers,
// sm_90) instead of LDGSTS + __syncthreads, timed against cuBLAS SGEMM (no TF32) in the same run.
// C = A·B, row-major, A M×K, B K×N; K % 4 == 0 and N % 4 == 0 (TMA's 16-byte row strides).
// MxNxK:S splits K S ways: partials in a workspace, summed in slice order by a second kernel.
//   nvcc -O3 -std=c++20 -arch=sm_90 -o tma_sgemm sgemm-tma-experiment.cu -lcuda -lcublas
//   ./tma_sgemm 684x684x684:4 4096x4096x4096 ...
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CHECK_CUDA(x)                                                                   \
  do {                                                                                  \
    cudaError_t e = (x);                                                                \
    if (e != cudaSuccess) {                                                             \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)
#define CHECK_CU(x)                                                                   \
  do {                                                                                \
    CUresult r = (x);                                                                 \
    if (r != CUDA_SUCCESS) {                                                          \
      const char* s = nullptr;                                                        \
      cuGetErrorName(r, &s);                                                          \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s ? s : "?");   \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#define BK 16  // A's rows in shared memory are 64 bytes: TMA's 64-byte swizzle
#ifndef STAGES
#define STAGES 4
#endif
// -DSWIZZLED=0: A unswizzled (4-way bank conflicts on its loads): to tell a wrong swizzle from
// anything else.
#ifndef SWIZZLED
#define SWIZZLED 1
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 2
#endif
// Warps of 4×8 lanes, each thread 8×8 results: a warp covers 32×64.
constexpr int WARPS_M = BM / 32, WARPS_N = BN / 64, THREADS = WARPS_M * WARPS_N * 32;
constexpr int STAGE_BYTES = (BM * BK + BK * BN) * 4;

struct alignas(1024) Shared {
  float a[STAGES][BM * BK];  // row m at m*BK, its four 16-byte chunks swizzled by (m >> 1) & 3
  float b[STAGES][BK * BN];  // row k at k*BN
  unsigned long long full[STAGES];
  unsigned long long empty[STAGES];
};

__device__ __forceinline__ unsigned smem(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void barrier_init(unsigned long long* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem(bar)), "r"(count));
}
__device__ __forceinline__ void arrive(unsigned long long* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem(bar)) : "memory");
}
__device__ __forceinline__ void arrive_expect(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem(bar)),
               "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void wait(unsigned long long* bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(smem(bar)), "r"(parity)
        : "memory");
  } while (!done);
}
__device__ __forceinline__ void load_tile(void* destination, const CUtensorMap* map, int inner,
                                          int outer, unsigned long long* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];" ::"r"(smem(destination)),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(inner), "r"(outer), "r"(smem(bar))
      : "memory");
}

__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    tma_sgemm(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
              float* __restrict__ c, int m, int n, int k, int slice_tiles) {
  extern __shared__ unsigned char raw[];
  // Pointer arithmetic on the shared array itself, so that the compiler keeps LDS (not LD).
  Shared& s = *reinterpret_cast<Shared*>(raw + ((1024 - (smem(raw) & 1023)) & 1023));
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;
  const int lane_m = lane / 8, lane_n = lane % 8;
  const int tile_m = blockIdx.y * BM, tile_n = blockIdx.x * BN;
  // This block's slice of K: tiles [first, first + tiles); its partial goes to slice z of c.
  const int first = blockIdx.z * slice_tiles;
  const int tiles = min(slice_tiles, (k + BK - 1) / BK - first);
  c += static_cast<long long>(blockIdx.z) * m * n;
  const auto issue = [&](int tile, int stage) {
    arrive_expect(&s.full[stage], STAGE_BYTES);
    load_tile(s.a[stage], &map_a, (first + tile) * BK, tile_m, &s.full[stage]);
    load_tile(s.b[stage], &map_b, tile_n, (first + tile) * BK, &s.full[stage]);
  };
  if (tid == 0) {
    for (int i = 0; i < STAGES; ++i) {
      barrier_init(&s.full[i], 1);
      barrier_init(&s.empty[i], THREADS / 32);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (tid == 0)
    for (int t = 0; t < STAGES && t < tiles; ++t) issue(t, t);

  float acc[8][8] = {};
  for (int t = 0; t < tiles; ++t) {
    const int stage = t % STAGES;
    // Refill the stage the block finished last iteration, once every warp has released it.
    if (tid == 0 && t >= 1 && t - 1 + STAGES < tiles) {
      const int previous = (t - 1) % STAGES;
      wait(&s.empty[previous], ((t - 1) / STAGES) & 1);
      issue(t - 1 + STAGES, previous);
    }
    wait(&s.full[stage], (t / STAGES) & 1);
    const float* as = s.a[stage] + (warp_m * 32 + lane_m) * BK;
    const float* bs = s.b[stage];
    // Row warp_m*32 + i*4 + lane_m keeps its chunk c at c ^ (row >> 1) & 3, which is
    // c ^ 2(i & 1) ^ (lane_m >> 1): the thread's own part in `swizzled`, the rest known here.
    const float* swizzled[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) swizzled[q] = as + ((q ^ (SWIZZLED ? lane_m >> 1 : 0)) * 4);
#pragma unroll
    for (int chunk = 0; chunk < BK / 4; ++chunk) {
      float4 a4[8];
#pragma unroll
      for (int i = 0; i < 8; ++i)
        a4[i] = *reinterpret_cast<const float4*>(swizzled[chunk ^ (SWIZZLED ? (i & 1) * 2 : 0)] +
                                                 i * 4 * BK);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        const float* brow = bs + (chunk * 4 + kk) * BN + warp_n * 64 + lane_n * 4;
        const float4 b0 = *reinterpret_cast<const float4*>(brow);
        const float4 b1 = *reinterpret_cast<const float4*>(brow + 32);
        const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          const float a = kk == 0 ? a4[i].x : kk == 1 ? a4[i].y : kk == 2 ? a4[i].z : a4[i].w;
#pragma unroll
          for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a, b[j], acc[i][j]);
        }
      }
    }
    __syncwarp();
    if (lane == 0) arrive(&s.empty[stage]);
  }

#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int row = tile_m + warp_m * 32 + i * 4 + lane_m;
    if (row >= m) continue;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int col = tile_n + warp_n * 64 + h * 32 + lane_n * 4;
      float* out = c + static_cast<long long>(row) * n + col;
      if (col + 3 < n) {
        *reinterpret_cast<float4*>(out) =
            make_float4(acc[i][h * 4], acc[i][h * 4 + 1], acc[i][h * 4 + 2], acc[i][h * 4 + 3]);
      } else {
        for (int j = 0; j < 4; ++j)
          if (col + j < n) out[j] = acc[i][h * 4 + j];
      }
    }
  }
}

// c[i] = the sum of the `slices` partials of element i, in slice order.
__global__ void sum_slices(const float4* __restrict__ partials, float4* __restrict__ c,
                           long long quads, int slices) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < quads;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    float4 sum = partials[i];
    for (int z = 1; z < slices; ++z) {
      const float4 p = partials[z * quads + i];
      sum.x += p.x, sum.y += p.y, sum.z += p.z, sum.w += p.w;
    }
    c[i] = sum;
  }
}

// A row-major rows×cols float matrix as TMA tiles of box_rows×box_cols.
CUtensorMap tensor_map(const float* base, int rows, int cols, int box_rows, int box_cols,
                       CUtensorMapSwizzle swizzle) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols) * sizeof(float)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_cols), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  CHECK_CU(cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2,
                                  const_cast<float*>(base), dims, strides, box, element_strides,
                                  CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                  CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return map;
}

float median_ms(cudaEvent_t start, cudaEvent_t stop, int repeats, const auto& launch) {
  std::vector<float> samples;
  launch();  // warm-up
  for (int r = 0; r < repeats; ++r) {
    CHECK_CUDA(cudaEventRecord(start));
    launch();
    CHECK_CUDA(cudaEventRecord(stop));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    samples.push_back(ms);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

int main(int argc, char** argv) {
  CHECK_CU(cuInit(0));
  CHECK_CUDA(cudaFree(nullptr));
  cublasHandle_t cublas;
  cublasCreate(&cublas);
  cublasSetMathMode(cublas, CUBLAS_DEFAULT_MATH);
  const int shared_bytes = sizeof(Shared) + 1024;
  CHECK_CUDA(cudaFuncSetAttribute(tma_sgemm, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  shared_bytes));
  cudaFuncAttributes attributes;
  CHECK_CUDA(cudaFuncGetAttributes(&attributes, tma_sgemm));
  int resident = 0;
  CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, tma_sgemm, THREADS,
                                                           shared_bytes));
  std::printf("tma_sgemm %dx%dx%d, %d stages, %d threads: %d registers, %d local bytes, "
              "%d shared bytes, %d blocks/SM\n",
              BM, BN, BK, STAGES, THREADS, attributes.numRegs,
              static_cast<int>(attributes.localSizeBytes), shared_bytes, resident);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::mt19937 generator(12345);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (int arg = 1; arg < argc; ++arg) {
    int m = 0, n = 0, k = 0, split = 1;
    if (std::sscanf(argv[arg], "%dx%dx%d:%d", &m, &n, &k, &split) < 3 || k % 4 || n % 4 ||
        split < 1) {
      std::fprintf(stderr, "%s: MxNxK[:split] with K and N multiples of 4\n", argv[arg]);
      return 2;
    }
    const int k_tiles = (k + BK - 1) / BK;
    const int slice_tiles = (k_tiles + split - 1) / split;
    split = (k_tiles + slice_tiles - 1) / slice_tiles;  // no empty slice
    std::vector<float> a(static_cast<size_t>(m) * k), b(static_cast<size_t>(k) * n);
    for (float& x : a) x = uniform(generator);
    for (float& x : b) x = uniform(generator);
    float *da, *db, *dc, *dr, *dw = nullptr;
    CHECK_CUDA(cudaMalloc(&da, a.size() * 4));
    CHECK_CUDA(cudaMalloc(&db, b.size() * 4));
    CHECK_CUDA(cudaMalloc(&dc, static_cast<size_t>(m) * n * 4));
    CHECK_CUDA(cudaMalloc(&dr, static_cast<size_t>(m) * n * 4));
    if (split > 1) CHECK_CUDA(cudaMalloc(&dw, static_cast<size_t>(split) * m * n * 4));
    CHECK_CUDA(cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(db, b.data(), b.size() * 4, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemset(dc, 0xFF, static_cast<size_t>(m) * n * 4));  // NaN: unwritten shows
    const CUtensorMap map_a = tensor_map(da, m, k, BM, BK,
                                         SWIZZLED ? CU_TENSOR_MAP_SWIZZLE_64B : CU_TENSOR_MAP_SWIZZLE_NONE);
    const CUtensorMap map_b = tensor_map(db, k, n, BK, BN, CU_TENSOR_MAP_SWIZZLE_NONE);
    const dim3 grid((n + BN - 1) / BN, (m + BM - 1) / BM, split);
    const long long quads = static_cast<long long>(m) * n / 4;
    const auto ours = [&] {
      tma_sgemm<<<grid, THREADS, shared_bytes>>>(map_a, map_b, split > 1 ? dw : dc, m, n, k,
                                                 slice_tiles);
      if (split > 1)
        sum_slices<<<static_cast<int>(std::min<long long>((quads + 255) / 256, 132 * 16)), 256>>>(
            reinterpret_cast<const float4*>(dw), reinterpret_cast<float4*>(dc), quads, split);
    };
    const float one = 1.0f, zero = 0.0f;
    const auto peer = [&] {  // row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ
      cublasSgemm(cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, db, n, da, k, &zero, dr, n);
    };
    ours();
    peer();
    CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<float> got(static_cast<size_t>(m) * n), want(got.size());
    CHECK_CUDA(cudaMemcpy(got.data(), dc, got.size() * 4, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(want.data(), dr, want.size() * 4, cudaMemcpyDeviceToHost));
    double worst = 0.0;
    for (size_t i = 0; i < got.size(); ++i) {
      const double error = std::fabs(static_cast<double>(got[i]) - want[i]);
      worst = std::isnan(error) ? INFINITY : std::max(worst, error);
    }
    // Products of k terms in [-1, 1]: fp32 rounding of order sqrt(k)·2^-24·k at most.
    const bool right = worst <= 1e-5 * k;
    double ours_ms = 1e30, peer_ms = 1e30;
    for (int round = 0; round < 3; ++round) {  // interleaved, best median of three rounds
      ours_ms = std::min<double>(ours_ms, median_ms(start, stop, 20, ours));
      peer_ms = std::min<double>(peer_ms, median_ms(start, stop, 20, peer));
    }
    const double flop = 2.0 * m * n * k;
    std::printf("%dx%dx%d split %d: tma %.2f TFLOP/s, cuBLAS %.2f TFLOP/s, %.3fx; max |error| "
                "%.3g %s\n",
                m, n, k, split, flop / ours_ms * 1e-9, flop / peer_ms * 1e-9, peer_ms / ours_ms,
                worst, right ? "ok" : "WRONG");
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    cudaFree(dr);
    cudaFree(dw);
  }
  cublasDestroy(cublas);
  return 0;
}
