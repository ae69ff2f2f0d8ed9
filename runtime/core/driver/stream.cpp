#include "ptxrt/core/stream.hpp"

#include <utility>

#include "driver/driver_api.hpp"
#include "driver/graph_owner.hpp"
#include "ptxrt/core/error.hpp"

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

void Stream::wait(const Event& event) const {
  ContextGuard guard(context_);
  check(detail::driver().cuStreamWaitEvent(stream_, event.handle(), 0), "cuStreamWaitEvent",
        "ordering a stream of device " + std::to_string(context_.device().ordinal()) +
            " after an event");
}

bool Stream::is_capturing() const { return stream_is_capturing(context_, stream_); }

bool stream_is_capturing(const Context& context, StreamRef stream) {
  ContextGuard guard(context);
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  check(detail::driver().cuStreamIsCapturing(stream.handle(), &status), "cuStreamIsCapturing");
  return status != CU_STREAM_CAPTURE_STATUS_NONE;
}

void Stream::begin_capture(CaptureMode mode) {
  if (is_capturing())
    throw Error(ErrorKind::invalid_argument,
                "begin_capture on a stream that is capturing already: end_capture first");
  static constexpr CUstreamCaptureMode modes[] = {CU_STREAM_CAPTURE_MODE_GLOBAL,
                                                  CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
                                                  CU_STREAM_CAPTURE_MODE_RELAXED};
  ContextGuard guard(context_);
  check(detail::driver().cuStreamBeginCapture(stream_, modes[static_cast<int>(mode)]),
        "cuStreamBeginCapture",
        "capturing a stream of device " + std::to_string(context_.device().ordinal()));
}

Graph Stream::end_capture() {
  if (!is_capturing())
    throw Error(ErrorKind::invalid_argument,
                "end_capture on a stream that is not capturing: begin_capture first");
  ContextGuard guard(context_);
  CUgraph graph = nullptr;
  check(detail::driver().cuStreamEndCapture(stream_, &graph), "cuStreamEndCapture",
        "ending the capture of a stream of device " + std::to_string(context_.device().ordinal()) +
            " (an operation the capture does not allow invalidates it: a synchronous copy, a "
            "synchronize, or work on another stream that did not join it)");
  return Graph(std::make_shared<detail::GraphOwner>(graph, context_));
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

void Event::record(StreamRef stream) {
  ContextGuard guard(context_);
  check(detail::driver().cuEventRecord(event_, stream.handle()), "cuEventRecord");
}

void Event::synchronize() const {
  check(detail::driver().cuEventSynchronize(event_), "cuEventSynchronize");
}

namespace {

// The legacy default stream has two names: none (0) and CU_STREAM_LEGACY.
CUstream canonical(CUstream stream) { return stream == nullptr ? CU_STREAM_LEGACY : stream; }

}  // namespace

void wait_for_stream(const Context& context, StreamRef consumer, StreamRef producer) {
  if (canonical(consumer.handle()) == canonical(producer.handle())) return;
  if (stream_is_capturing(context, consumer)) return;
  Event written(context);
  written.record(producer);
  check(detail::driver().cuStreamWaitEvent(consumer.handle(), written.handle(), 0),
        "cuStreamWaitEvent", "ordering a launch after the stream that wrote its arrays");
}

float Event::elapsed_ms(const Event& start, const Event& end) {
  end.synchronize();
  float milliseconds = 0;
  check(detail::driver().cuEventElapsedTime(&milliseconds, start.event_, end.event_),
        "cuEventElapsedTime");
  return milliseconds;
}

}  // namespace ptxrt
