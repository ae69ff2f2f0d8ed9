// CUB's DeviceRadixSort of float keys (optionally carrying 32-bit values), the peer that
// ptxrt_sort_bench times the sorts of ptx_src/ against. Compiled by nvcc alone
// (cub_radix_sort.cu), so that this header needs neither CUB nor the CUDA runtime; the sorts are
// enqueued on the legacy default stream of device 0's primary context, the one ptxrt's
// Context::primary(0) shares. Errors are std::runtime_error naming the CUDA call and its error.
#pragma once

#include <cuda.h>

#include <cstddef>

namespace ptxrt::bench {

// Bytes of temporary storage one sort of n keys (pairs: with values) needs.
std::size_t cub_sort_temp_bytes(int n, bool pairs);

// Sorts keys_in[0, n) into keys_out ascending (and values_in into values_out by the same order,
// unless values_in is 0); `temp` holds cub_sort_temp_bytes(n, values_in != 0) bytes. The inputs
// are left as they were.
void cub_sort(CUdeviceptr temp, std::size_t temp_bytes, CUdeviceptr keys_in, CUdeviceptr keys_out,
              CUdeviceptr values_in, CUdeviceptr values_out, int n);

}  // namespace ptxrt::bench
