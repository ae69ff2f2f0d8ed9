#include "ptxrt/core/stream_ref.hpp"

#include "ptxrt/core/stream.hpp"

namespace ptxrt {

StreamRef::StreamRef(const Stream& stream) noexcept : stream_(stream.handle()) {}

}  // namespace ptxrt
