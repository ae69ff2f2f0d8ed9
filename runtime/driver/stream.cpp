#include "ptxrt/stream.hpp"

#include <utility>

#include "driver/driver_api.hpp"
#include "ptxrt/error.hpp"

namespace ptxrt {

Stream::Stream(const Context& context) : context_(context) {
  ContextGuard guard(context_);
  check(detail::driver().cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
}

Stream::~Stream() { release(); }

Stream::Stream(Stream&& other) noexcept
    : context_(other.context_), stream_(std::exchange(other.stream_, nullptr)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    release();
    context_ = other.context_;
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

void Stream::release() noexcept {
  if (!stream_) return;
  // cuStreamDestroy needs no current context, and errors cannot leave a destructor.
  detail::driver().cuStreamDestroy(std::exchange(stream_, nullptr));
}

void Stream::synchronize() const {
  check(detail::driver().cuStreamSynchronize(stream_), "cuStreamSynchronize",
        "waiting for a stream on device " + std::to_string(context_.device().ordinal()));
}

bool Stream::is_idle() const {
  CUresult result = detail::driver().cuStreamQuery(stream_);
  if (result == CUDA_ERROR_NOT_READY) return false;
  check(result, "cuStreamQuery");
  return true;
}

Event::Event(const Context& context) : context_(context) {
  ContextGuard guard(context_);
  check(detail::driver().cuEventCreate(&event_, CU_EVENT_DEFAULT), "cuEventCreate");
}

Event::~Event() { release(); }

Event::Event(Event&& other) noexcept
    : context_(other.context_), event_(std::exchange(other.event_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    release();
    context_ = other.context_;
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

void Event::release() noexcept {
  if (event_) detail::driver().cuEventDestroy(std::exchange(event_, nullptr));
}

void Event::record(CUstream stream) {
  ContextGuard guard(context_);
  check(detail::driver().cuEventRecord(event_, stream), "cuEventRecord");
}

void Event::synchronize() const {
  check(detail::driver().cuEventSynchronize(event_), "cuEventSynchronize");
}

float Event::elapsed_ms(const Event& start, const Event& end) {
  end.synchronize();
  float milliseconds = 0;
  check(detail::driver().cuEventElapsedTime(&milliseconds, start.event_, end.event_),
        "cuEventElapsedTime");
  return milliseconds;
}

}  // namespace ptxrt
