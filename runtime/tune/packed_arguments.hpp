// A kernel's argument list for one launch: each value's bytes, a pointer to each, their sizes.
#pragma once

#include <cuda.h>

#include <array>
#include <cstddef>
#include <cstring>
#include <vector>

namespace ptxrt::detail {

struct PackedArguments {
  std::vector<std::array<std::byte, 8>> values;
  std::vector<void*> pointers;
  std::vector<std::size_t> sizes;

  void add_address(CUdeviceptr address) {
    std::array<std::byte, 8> value{};
    std::memcpy(value.data(), &address, sizeof address);
    values.push_back(value);
    sizes.push_back(sizeof address);
  }
  void add(const PackedArguments& more) {
    values.insert(values.end(), more.values.begin(), more.values.end());
    sizes.insert(sizes.end(), more.sizes.begin(), more.sizes.end());
  }
  // The pointers to the values, once all are added (adding may move them).
  void point() {
    pointers.clear();
    for (auto& value : values) pointers.push_back(value.data());
  }
};

}  // namespace ptxrt::detail
