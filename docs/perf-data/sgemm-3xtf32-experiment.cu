// Experiment: an SGEMM on the tensor cores at fp32 accuracy ("3xTF32": each operand split into a
// TF32 head and a TF32 tail, the product a_head·b_head + a_head·b_tail + a_tail·b_head accumulated
// in fp32 by mma.sync m16n8k8), timed against cuBLAS SGEMM (no TF32) in the same run, and both
// checked against an fp64 product on sampled elements.
// C = A·B, row-major, A M×K, B K×N; K % 4 == 0 and N % 4 == 0 (16-byte cp.async rows).
//   nvcc -O3 -std=c++20 -arch=sm_90 [-DBM=128 -DBN=256 -DMIN_BLOCKS=1 -DSPECIALS=0 -DPASSES=1
//        -DSPLIT_ACCUMULATE=0] -o sgemm_3xtf32 sgemm-3xtf32-experiment.cu -lcublas
//   ./sgemm_3xtf32 4096x4096x4096 1008x4296x3308 ...
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CHECK_CUDA(x)                                                                        \
  do {                                                                                       \
    cudaError_t e = (x);                                                                     \
    if (e != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 32
#endif
#ifndef WARPS_M
#define WARPS_M 2
#endif
#ifndef WARPS_N
#define WARPS_N 4
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef PASSES  // 3: fp32 accuracy; 1: plain TF32 (the ceiling, not fp32-accurate)
#define PASSES 3
#endif
#ifndef SPLIT_ACCUMULATE  // 1: each k8 step's products summed apart, then added in fp32
#define SPLIT_ACCUMULATE 1
#endif
#ifndef SPECIALS  // 1: infinities and the largest floats kept (split below)
#define SPECIALS 1
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 2
#endif

constexpr int THREADS = WARPS_M * WARPS_N * 32;
constexpr int WARP_M = BM / WARPS_M, WARP_N = BN / WARPS_N;
constexpr int M_TILES = WARP_M / 16, N_TILES = WARP_N / 8;
// Padding that makes the fragment reads conflict-free: A rows 4 banks apart, B rows 8.
constexpr int A_STRIDE = BK + 4, B_STRIDE = BN + 8;
constexpr int A_STAGE = BM * A_STRIDE, B_STAGE = BK * B_STRIDE;
constexpr int SHARED_BYTES = STAGES * (A_STAGE + B_STAGE) * 4;
static_assert(WARP_M % 16 == 0 && WARP_N % 8 == 0 && BK % 8 == 0);
static_assert((BM * BK / 4) % THREADS == 0 && (BK * BN / 4) % THREADS == 0);

__device__ __forceinline__ unsigned to_tf32(float x) {
  unsigned out;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(out) : "f"(x));
  return out;
}

// x as head + tail, both TF32. SPECIALS = 0: both rounded to nearest (cvt.rna), as fast as it
// gets, but an infinite x gives NaN and x near the largest float an infinite head. SPECIALS = 1:
// the head is x truncated (never rounded past the largest float into infinity) and a non-finite x
// is all head (its tail would be inf - inf).
__device__ __forceinline__ void split(float x, unsigned& head, unsigned& tail) {
#if SPECIALS
  head = __float_as_uint(x) & 0xFFFFE000u;
  if (isnan(x)) head = 0x7FC00000u;  // truncation can turn a NaN's payload into infinity
  tail = isfinite(x) ? to_tf32(x - __uint_as_float(head)) : 0u;
#else
  head = to_tf32(x);
  tail = to_tf32(x - __uint_as_float(head));
#endif
}

__device__ __forceinline__ void mma(float (&c)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ void copy16(float* shared, const float* global, bool inside) {
  const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(address), "l"(global),
               "r"(inside ? 16 : 0));
}

__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    sgemm_3xtf32(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                 int m, int n, int k) {
  extern __shared__ __align__(16) float shared[];
  float* const as = shared;
  float* const bs = shared + STAGES * A_STAGE;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int group = lane / 4, in_group = lane % 4;
  const int warp_row = (warp / WARPS_N) * WARP_M, warp_col = (warp % WARPS_N) * WARP_N;
  const int block_row = blockIdx.y * BM, block_col = blockIdx.x * BN;
  const int tiles = (k + BK - 1) / BK;

  const auto load = [&](int tile, int stage) {
    const int k0 = tile * BK;
#pragma unroll
    for (int i = 0; i < BM * BK / 4 / THREADS; ++i) {
      const int quad = threadIdx.x + i * THREADS;
      const int row = quad / (BK / 4), col = quad % (BK / 4) * 4;
      const bool inside = block_row + row < m && k0 + col < k;
      copy16(as + stage * A_STAGE + row * A_STRIDE + col,
             inside ? a + static_cast<size_t>(block_row + row) * k + k0 + col : a, inside);
    }
#pragma unroll
    for (int i = 0; i < BK * BN / 4 / THREADS; ++i) {
      const int quad = threadIdx.x + i * THREADS;
      const int row = quad / (BN / 4), col = quad % (BN / 4) * 4;
      const bool inside = k0 + row < k && block_col + col < n;
      copy16(bs + stage * B_STAGE + row * B_STRIDE + col,
             inside ? b + static_cast<size_t>(k0 + row) * n + block_col + col : b, inside);
    }
  };

  float acc[M_TILES][N_TILES][4] = {};
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < tiles) load(s, s);
    asm volatile("cp.async.commit_group;");
  }
  for (int tile = 0; tile < tiles; ++tile) {
    asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 2));
    __syncthreads();
    if (tile + STAGES - 1 < tiles) load(tile + STAGES - 1, (tile + STAGES - 1) % STAGES);
    asm volatile("cp.async.commit_group;");
    const float* at = as + (tile % STAGES) * A_STAGE;
    const float* bt = bs + (tile % STAGES) * B_STAGE;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 8) {
      unsigned a_head[M_TILES][4], a_tail[M_TILES][4];
#pragma unroll
      for (int mi = 0; mi < M_TILES; ++mi) {
        const float* base = at + (warp_row + mi * 16 + group) * A_STRIDE + kk + in_group;
        const float x[4] = {base[0], base[8 * A_STRIDE], base[4], base[8 * A_STRIDE + 4]};
#pragma unroll
        for (int r = 0; r < 4; ++r) split(x[r], a_head[mi][r], a_tail[mi][r]);
      }
#pragma unroll
      for (int ni = 0; ni < N_TILES; ++ni) {
        const float* base = bt + (kk + in_group) * B_STRIDE + warp_col + ni * 8 + group;
        const float y[2] = {base[0], base[4 * B_STRIDE]};
        unsigned b_head[2], b_tail[2];
#pragma unroll
        for (int r = 0; r < 2; ++r) split(y[r], b_head[r], b_tail[r]);
#pragma unroll
        for (int mi = 0; mi < M_TILES; ++mi) {
          if (SPLIT_ACCUMULATE) {
            // The tensor cores round their sums toward zero: a bias that grows with every mma
            // chained onto one accumulator. Each k8 step's three products go into a fresh
            // fragment instead, added to the accumulator by an fp32 add that rounds to nearest.
            float step[4] = {};
            if (PASSES == 3) {
              mma(step, a_tail[mi], b_head);
              mma(step, a_head[mi], b_tail);
            }
            mma(step, a_head[mi], b_head);
#pragma unroll
            for (int r = 0; r < 4; ++r) acc[mi][ni][r] += step[r];
          } else {
            if (PASSES == 3) {  // the small terms first, so that they are not lost under the large
              mma(acc[mi][ni], a_tail[mi], b_head);
              mma(acc[mi][ni], a_head[mi], b_tail);
            }
            mma(acc[mi][ni], a_head[mi], b_head);
          }
        }
      }
    }
  }
#pragma unroll
  for (int mi = 0; mi < M_TILES; ++mi)
#pragma unroll
    for (int ni = 0; ni < N_TILES; ++ni)
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int row = block_row + warp_row + mi * 16 + group + (r >= 2 ? 8 : 0);
        const int col = block_col + warp_col + ni * 8 + in_group * 2 + (r & 1);
        if (row < m && col < n) c[static_cast<size_t>(row) * n + col] = acc[mi][ni][r];
      }
}

float batch_ms(cudaEvent_t start, cudaEvent_t stop, const auto& launch) {
  launch();  // warm-up
  CHECK_CUDA(cudaEventRecord(start));
  launch();
  CHECK_CUDA(cudaEventRecord(stop));
  CHECK_CUDA(cudaEventSynchronize(stop));
  float once = 0;
  CHECK_CUDA(cudaEventElapsedTime(&once, start, stop));
  const int launches = std::clamp(static_cast<int>(20.0f / std::max(once, 1e-3f)), 5, 200);
  std::vector<float> samples;
  for (int sample = 0; sample < 5; ++sample) {
    CHECK_CUDA(cudaEventRecord(start));
    for (int i = 0; i < launches; ++i) launch();
    CHECK_CUDA(cudaEventRecord(stop));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    samples.push_back(ms / launches);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

int main(int argc, char** argv) {
  CHECK_CUDA(cudaFree(nullptr));
  cublasHandle_t cublas;
  cublasCreate(&cublas);
  cublasSetMathMode(cublas, CUBLAS_DEFAULT_MATH);
  CHECK_CUDA(cudaFuncSetAttribute(sgemm_3xtf32, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  SHARED_BYTES));
  cudaFuncAttributes attributes;
  CHECK_CUDA(cudaFuncGetAttributes(&attributes, sgemm_3xtf32));
  int resident = 0;
  CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, sgemm_3xtf32, THREADS,
                                                           SHARED_BYTES));
  std::printf(
      "%dxTF32%s %dx%dx%d, warps %dx%d, %d stages: %d registers, %d local bytes, "
      "%d shared bytes, %d blocks/SM\n",
      PASSES, SPLIT_ACCUMULATE ? " (split accumulate)" : "", BM, BN, BK, WARPS_M, WARPS_N, STAGES,
      attributes.numRegs, static_cast<int>(attributes.localSizeBytes), SHARED_BYTES, resident);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::mt19937 generator(12345);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (int arg = 1; arg < argc; ++arg) {
    int m = 0, n = 0, k = 0;
    if (std::sscanf(argv[arg], "%dx%dx%d", &m, &n, &k) != 3 || k % 4 || n % 4) {
      std::fprintf(stderr, "%s: MxNxK with K and N multiples of 4\n", argv[arg]);
      return 2;
    }
    std::vector<float> a(static_cast<size_t>(m) * k), b(static_cast<size_t>(k) * n);
    for (float& x : a) x = uniform(generator);
    for (float& x : b) x = uniform(generator);
    float *da, *db, *dc, *dr;
    CHECK_CUDA(cudaMalloc(&da, a.size() * 4));
    CHECK_CUDA(cudaMalloc(&db, b.size() * 4));
    CHECK_CUDA(cudaMalloc(&dc, static_cast<size_t>(m) * n * 4));
    CHECK_CUDA(cudaMalloc(&dr, static_cast<size_t>(m) * n * 4));
    CHECK_CUDA(cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(db, b.data(), b.size() * 4, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemset(dc, 0xFF, static_cast<size_t>(m) * n * 4));  // NaN: unwritten shows
    const dim3 grid((n + BN - 1) / BN, (m + BM - 1) / BM);
    const auto ours = [&] { sgemm_3xtf32<<<grid, THREADS, SHARED_BYTES>>>(da, db, dc, m, n, k); };
    const float one = 1.0f, zero = 0.0f;
    const auto peer = [&] {  // row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ
      cublasSgemm(cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, db, n, da, k, &zero, dr, n);
    };
    ours();
    peer();
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<float> got(static_cast<size_t>(m) * n), want(got.size());
    CHECK_CUDA(cudaMemcpy(got.data(), dc, got.size() * 4, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(want.data(), dr, want.size() * 4, cudaMemcpyDeviceToHost));
    // Error against fp64 on 2048 sampled elements and every element of the last row and column,
    // relative to sum |a_ik·b_kj| (the scale of fp32's rounding of the sum).
    std::vector<std::pair<int, int>> samples;
    std::uniform_int_distribution<int> row_of(0, m - 1), col_of(0, n - 1);
    for (int s = 0; s < 2048; ++s) samples.emplace_back(row_of(generator), col_of(generator));
    for (int j = 0; j < n; ++j) samples.emplace_back(m - 1, j);
    for (int i = 0; i < m; ++i) samples.emplace_back(i, n - 1);
    double ours_error = 0, peer_error = 0, ours_sum = 0, peer_sum = 0;
    bool unwritten = false;
    for (const auto& [i, j] : samples) {
      double exact = 0, magnitude = 0;
      for (int p = 0; p < k; ++p) {
        const double term = static_cast<double>(a[static_cast<size_t>(i) * k + p]) *
                            b[static_cast<size_t>(p) * n + j];
        exact += term;
        magnitude += std::fabs(term);
      }
      const size_t at = static_cast<size_t>(i) * n + j;
      unwritten |= std::isnan(got[at]);
      const double e_ours = std::fabs(got[at] - exact) / magnitude;
      const double e_peer = std::fabs(want[at] - exact) / magnitude;
      ours_error = std::max(ours_error, e_ours);
      peer_error = std::max(peer_error, e_peer);
      ours_sum += e_ours;
      peer_sum += e_peer;
    }
    double ours_ms = 1e30, peer_ms = 1e30;
    for (int round = 0; round < 3; ++round) {  // interleaved, best of three rounds
      ours_ms = std::min<double>(ours_ms, batch_ms(start, stop, ours));
      peer_ms = std::min<double>(peer_ms, batch_ms(start, stop, peer));
    }
    // Infinity, NaN and the largest floats where cuBLAS has them: A's row 0 holds an infinity,
    // row 1 a NaN (when m > 2), row 2 values near FLT_MAX scaled down by B's column 0.
    bool specials_agree = true;
    if (m > 2) {
      std::vector<float> special = a;
      special[0] = INFINITY;
      special[static_cast<size_t>(k) + 1] = NAN;
      for (int p = 0; p < k; ++p) special[2 * static_cast<size_t>(k) + p] = 3.4e38f / k;
      CHECK_CUDA(
          cudaMemcpy(da, special.data(), 3 * static_cast<size_t>(k) * 4, cudaMemcpyHostToDevice));
      ours();
      peer();
      CHECK_CUDA(cudaDeviceSynchronize());
      std::vector<float> ours_rows(3 * static_cast<size_t>(n)), peer_rows(ours_rows.size());
      CHECK_CUDA(cudaMemcpy(ours_rows.data(), dc, ours_rows.size() * 4, cudaMemcpyDeviceToHost));
      CHECK_CUDA(cudaMemcpy(peer_rows.data(), dr, peer_rows.size() * 4, cudaMemcpyDeviceToHost));
      for (size_t i = 0; i < ours_rows.size(); ++i) {
        const float x = ours_rows[i], y = peer_rows[i];
        const bool same = std::isnan(x) ? std::isnan(y)
                          : std::isinf(x)
                              ? x == y
                              : std::isfinite(y) && std::fabs(x - y) <= 1e-4 * std::fabs(y) + 1e30;
        specials_agree &= same;
      }
    }
    const double flop = 2.0 * m * n * k;
    std::printf(
        "%dx%dx%d: %dxtf32 %.2f TFLOP/s, cuBLAS %.2f TFLOP/s, %.3fx; error/sum|ab| max "
        "%.2e mean %.2e (cuBLAS max %.2e mean %.2e)%s; inf/NaN/huge rows %s\n",
        m, n, k, PASSES, flop / ours_ms * 1e-9, flop / peer_ms * 1e-9, peer_ms / ours_ms,
        ours_error, ours_sum / samples.size(), peer_error, peer_sum / samples.size(),
        unwritten ? " UNWRITTEN" : "", specials_agree ? "as cuBLAS" : "DIFFER");
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    cudaFree(dr);
  }
  cublasDestroy(cublas);
  return 0;
}
