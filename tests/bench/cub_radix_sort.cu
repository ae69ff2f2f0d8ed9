#include <cub/device/device_radix_sort.cuh>
#include <stdexcept>
#include <string>

#include "cub_radix_sort.hpp"

namespace ptxrt::bench {

namespace {

void check(cudaError_t result, const char* call) {
  if (result != cudaSuccess)
    throw std::runtime_error(std::string(call) + " failed: " + cudaGetErrorName(result) + " (" +
                             cudaGetErrorString(result) + ")");
}

float* floats(CUdeviceptr address) { return reinterpret_cast<float*>(address); }
unsigned* words(CUdeviceptr address) { return reinterpret_cast<unsigned*>(address); }

}  // namespace

std::size_t cub_sort_temp_bytes(int n, bool pairs) {
  std::size_t bytes = 0;
  if (pairs)
    check(cub::DeviceRadixSort::SortPairs(
              nullptr, bytes, static_cast<const float*>(nullptr), static_cast<float*>(nullptr),
              static_cast<const unsigned*>(nullptr), static_cast<unsigned*>(nullptr), n),
          "cub::DeviceRadixSort::SortPairs (temporary storage size)");
  else
    check(cub::DeviceRadixSort::SortKeys(nullptr, bytes, static_cast<const float*>(nullptr),
                                         static_cast<float*>(nullptr), n),
          "cub::DeviceRadixSort::SortKeys (temporary storage size)");
  return bytes;
}

void cub_sort(CUdeviceptr temp, std::size_t temp_bytes, CUdeviceptr keys_in, CUdeviceptr keys_out,
              CUdeviceptr values_in, CUdeviceptr values_out, int n) {
  void* storage = reinterpret_cast<void*>(temp);
  if (values_in != 0)
    check(cub::DeviceRadixSort::SortPairs(storage, temp_bytes, floats(keys_in), floats(keys_out),
                                          words(values_in), words(values_out), n),
          "cub::DeviceRadixSort::SortPairs");
  else
    check(cub::DeviceRadixSort::SortKeys(storage, temp_bytes, floats(keys_in), floats(keys_out), n),
          "cub::DeviceRadixSort::SortKeys");
}

}  // namespace ptxrt::bench
