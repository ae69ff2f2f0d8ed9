// Where asynchronous work goes: a Stream of ptxrt's, a CUstream of the application's (a CUDA
// runtime cudaStream_t is one), or none, the context's default stream. Every call that enqueues
// work takes one, so that a caller passes whichever it holds.
#pragma once

#include <cuda.h>

#include <cstddef>

#include "ptxrt/export.hpp"

namespace ptxrt {

class Stream;

// Non-owning and cheap to copy: the stream must outlive the work enqueued on it.
class PTXRT_API StreamRef {
 public:
  constexpr StreamRef() noexcept = default;
  constexpr StreamRef(std::nullptr_t) noexcept {}
  constexpr StreamRef(CUstream stream) noexcept : stream_(stream) {}
  StreamRef(const Stream& stream) noexcept;  // implicit: a Stream is where work goes

  constexpr CUstream handle() const noexcept { return stream_; }

 private:
  CUstream stream_ = nullptr;
};

}  // namespace ptxrt
