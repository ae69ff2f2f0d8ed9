// __constant__ and __device__ variables of a loaded module, by name (cuModuleGetGlobal).
// Every copy is checked against the symbol's size: a mismatch is an Error naming the symbol and
// both sizes. Thread safety: as for a device buffer — reads from many threads are safe.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <type_traits>

#include "ptxrt/core/context.hpp"
#include "ptxrt/core/stream_ref.hpp"
#include "ptxrt/export.hpp"

namespace ptxrt {

namespace detail {
struct ModuleState;
}

// The untyped symbol: address, size, name, and the module that holds it (kept alive).
class PTXRT_API GlobalSymbol {
 public:
  GlobalSymbol(std::shared_ptr<const detail::ModuleState> module, CUdeviceptr address,
               std::size_t bytes, std::string name);

  CUdeviceptr address() const noexcept { return address_; }
  std::size_t bytes() const noexcept { return bytes_; }
  const std::string& name() const noexcept { return name_; }
  const Context& context() const noexcept;

  // `bytes` must equal the symbol's size. Synchronous, or with _async ordered on `stream`.
  void write(const void* source, std::size_t bytes) const;
  void read(void* destination, std::size_t bytes) const;
  void write_async(const void* source, std::size_t bytes, StreamRef stream) const;
  void read_async(void* destination, std::size_t bytes, StreamRef stream) const;

 private:
  void check_size(std::size_t bytes, const char* direction) const;
  std::shared_ptr<const detail::ModuleState> module_;
  CUdeviceptr address_;
  std::size_t bytes_;
  std::string name_;
};

// A typed view: Symbol<float> for `__constant__ float x`, Symbol<Sphere> with spans for arrays.
template <typename T>
class Symbol {
  static_assert(std::is_trivially_copyable_v<T>, "symbols hold trivially copyable types");

 public:
  explicit Symbol(GlobalSymbol symbol) : symbol_(std::move(symbol)) {}

  void set(const T& value) const { symbol_.write(&value, sizeof(T)); }
  void set(std::span<const T> values) const { symbol_.write(values.data(), values.size_bytes()); }
  void set_async(std::span<const T> values, StreamRef stream) const {
    symbol_.write_async(values.data(), values.size_bytes(), stream);
  }
  T get() const {
    T value;
    symbol_.read(&value, sizeof(T));
    return value;
  }
  void get(std::span<T> values) const { symbol_.read(values.data(), values.size_bytes()); }
  void get_async(std::span<T> values, StreamRef stream) const {
    symbol_.read_async(values.data(), values.size_bytes(), stream);
  }

  const GlobalSymbol& untyped() const noexcept { return symbol_; }
  std::size_t bytes() const noexcept { return symbol_.bytes(); }
  CUdeviceptr address() const noexcept { return symbol_.address(); }

 private:
  GlobalSymbol symbol_;
};

}  // namespace ptxrt
