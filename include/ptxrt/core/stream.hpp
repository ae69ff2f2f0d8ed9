// Streams and events. Thread safety: a Stream orders work, so it belongs to one thread at a time
// (share it only with your own synchronization). Events may be recorded on one thread and waited
// on from another.
//
// A stream can record its work into a graph instead of running it (begin_capture ..
// end_capture): ptxrt's launches, copies and fills enqueued on it become the graph's nodes, with
// the order of the stream as their dependencies (graph.hpp).
#pragma once

#include <cuda.h>

#include "ptxrt/core/context.hpp"
#include "ptxrt/core/graph.hpp"
#include "ptxrt/core/stream_ref.hpp"
#include "ptxrt/export.hpp"

namespace ptxrt {

class Event;

// Which other calls a capture forbids while it runs (calls that would synchronize with the
// captured work, such as a synchronous copy on the legacy stream): those of every thread
// (global), of the capturing thread only (thread), or none (relaxed).
enum class CaptureMode { global, thread, relaxed };

class PTXRT_API Stream {
 public:
  // A non-blocking stream (it does not synchronize with the legacy default stream).
  explicit Stream(const Context& context);
  ~Stream();
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  CUstream handle() const noexcept { return stream_; }
  const Context& context() const noexcept { return context_; }
  void synchronize() const;
  bool is_idle() const;  // cuStreamQuery: all work done
  // Work enqueued from now on waits for `event`'s last record (cuStreamWaitEvent), on any
  // stream of any device: how work on two streams is ordered without the host waiting.
  void wait(const Event& event) const;

  // Records instead of running, until end_capture returns the graph. Error when already
  // capturing.
  void begin_capture(CaptureMode mode = CaptureMode::thread);
  Graph end_capture();
  bool is_capturing() const;

 private:
  void release() noexcept;
  Context context_;
  CUstream stream_ = nullptr;
};

class PTXRT_API Event {
 public:
  explicit Event(const Context& context);
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  // Records on `stream` (none: the context's default stream).
  void record(StreamRef stream = {});
  void synchronize() const;
  CUevent handle() const noexcept { return event_; }

  // Milliseconds between two recorded events; waits for `end` to complete.
  static float elapsed_ms(const Event& start, const Event& end);

 private:
  void release() noexcept;
  Context context_;
  CUevent event_ = nullptr;
};

// Whether `stream` (a stream of `context`'s device; none: its legacy default stream) records into
// a graph instead of running.
PTXRT_API bool stream_is_capturing(const Context& context, StreamRef stream);

// Makes the work enqueued on `consumer` from now on wait for the work enqueued so far on
// `producer` (a stream of another library that wrote the data a launch reads; 1 names the legacy
// default stream, as the CUDA array interface and DLPack do), on the device, the host not waiting.
// Nothing when both are one stream, or when `consumer` is capturing: a captured launch runs when
// its graph does, which the application orders.
PTXRT_API void wait_for_stream(const Context& context, StreamRef consumer, StreamRef producer);

}  // namespace ptxrt
