// Devices and their properties, contexts, streams (ptxrt's and other libraries'), events, graphs
// captured from launches, and device memory.
#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <limits>

#include "bindings.hpp"
#include "ptxrt/core/device.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/graph.hpp"
#include "ptxrt/core/memory.hpp"
#include "ptxrt/core/stream.hpp"

namespace ptxrt::python {
namespace {

using HostArray = nb::ndarray<nb::device::cpu, nb::c_contig>;

nb::dict properties_dict(const DeviceProperties& p) {
  nb::dict d;
  d["ordinal"] = p.ordinal;
  d["name"] = p.name;
  d["pci_bus_id"] = p.pci_bus_id;
  d["compute_capability"] = p.compute_capability();
  d["arch"] = p.arch();
  d["sm_count"] = p.sm_count;
  d["global_memory_bytes"] = p.global_memory_bytes;
  d["l2_cache_bytes"] = p.l2_cache_bytes;
  d["shared_memory_per_block"] = p.shared_memory_per_block;
  d["shared_memory_per_block_optin"] = p.shared_memory_per_block_optin;
  d["shared_memory_per_sm"] = p.shared_memory_per_sm;
  d["reserved_shared_memory_per_block"] = p.reserved_shared_memory_per_block;
  d["registers_per_block"] = p.registers_per_block;
  d["registers_per_sm"] = p.registers_per_sm;
  d["max_threads_per_block"] = p.max_threads_per_block;
  d["max_threads_per_sm"] = p.max_threads_per_sm;
  d["max_blocks_per_sm"] = p.max_blocks_per_sm;
  d["warp_size"] = p.warp_size;
  d["max_block_dim"] = p.max_block_dim;
  d["max_grid_dim"] = p.max_grid_dim;
  d["clock_khz"] = p.clock_khz;
  d["memory_clock_khz"] = p.memory_clock_khz;
  d["memory_bus_width_bits"] = p.memory_bus_width_bits;
  d["driver_version"] = p.driver_version;
  d["cooperative_launch"] = p.cooperative_launch;
  d["cluster_launch"] = p.cluster_launch;
  d["managed_memory"] = p.managed_memory;
  d["concurrent_managed_access"] = p.concurrent_managed_access;
  d["memory_pools"] = p.memory_pools;
  d["theoretical_bandwidth_gb_per_s"] = p.theoretical_bandwidth_gb_per_s();
  return d;
}

std::uint64_t handle_value(nb::handle value, std::string_view what) {
  if (!nb::isinstance<nb::int_>(value))
    throw Error(ErrorKind::invalid_argument,
                std::string(what) + " must be an int handle, not " +
                    nb::cast<std::string>(nb::str(value.type().attr("__name__"))));
  return nb::cast<std::uint64_t>(value);
}

// Device memory of a host array's size, uploaded from it; the array must be C-contiguous.
void upload(DeviceMemory& memory, const HostArray& host, std::size_t offset) {
  memory.upload_bytes(host.data(), host.nbytes(), offset);
}

void bind_device_and_context(nb::module_& m) {
  m.def("device_count", &Device::count,
        "The CUDA devices this process sees (raises ptxrt.Error, kind 'no_driver', without a "
        "driver).");
  nb::class_<Device>(m, "Device", "A CUDA device and what it can do.")
      .def(
          "__init__", [](Device* self, int ordinal) { new (self) Device(Device::get(ordinal)); },
          nb::arg("ordinal") = 0,
          "Device `ordinal` (raises ptxrt.Error for one that is not there).")
      .def_prop_ro("ordinal", &Device::ordinal)
      .def_prop_ro("name", [](const Device& d) { return d.properties().name; })
      .def_prop_ro(
          "arch", [](const Device& d) { return d.properties().arch(); },
          "The SM architecture NVRTC compiles for, 'sm_90'.")
      .def_prop_ro("compute_capability",
                   [](const Device& d) {
                     return std::pair(d.properties().cc_major, d.properties().cc_minor);
                   })
      .def_prop_ro(
          "properties", [](const Device& d) { return properties_dict(d.properties()); },
          "Every property as a dict (names as in ptxrt::DeviceProperties).")
      .def("__repr__", [](const Device& d) {
        return "<ptxrt.Device " + std::to_string(d.ordinal()) + ": " + d.properties().name + ", " +
               d.properties().arch() + ">";
      });

  nb::class_<Context>(m, "Context",
                      "A CUDA context. Every ptxrt call makes it current for the call and "
                      "restores the caller's, so it mixes with CuPy and PyTorch, which use the "
                      "primary context.")
      .def_static(
          "primary", [](int ordinal) { return Context::primary(ordinal); }, nb::arg("ordinal") = 0,
          "The device's primary context (CuPy's and PyTorch's).")
      .def_static(
          "create", [](int ordinal) { return Context::create(Device::get(ordinal)); },
          nb::arg("ordinal") = 0, "A context of its own, destroyed with its last user.")
      .def_prop_ro("device", &Context::device)
      .def_prop_ro("is_primary", &Context::is_primary)
      .def_prop_ro("handle",
                   [](const Context& c) { return reinterpret_cast<std::uintptr_t>(c.handle()); })
      .def("synchronize", &Context::synchronize, nb::call_guard<nb::gil_scoped_release>(),
           "Waits for all work of the context.")
      .def("memory_info", &Context::memory_info, "(free, total) bytes of the device.")
      .def("__eq__", [](const Context& a, const Context& b) { return a == b; })
      .def("__hash__",
           [](const Context& c) { return reinterpret_cast<std::uintptr_t>(c.handle()); });
}

void bind_streams(nb::module_& m) {
  nb::class_<Event>(m, "Event", "A CUDA event, for timing work on streams.")
      .def(
          "__init__",
          [](Event* self, nb::handle context) { new (self) Event(context_or_primary(context)); },
          nb::arg("context") = nb::none())
      .def(
          "record", [](Event& e, nb::handle stream) { e.record(stream_from(stream)); },
          nb::arg("stream") = nb::none())
      .def("synchronize", &Event::synchronize, nb::call_guard<nb::gil_scoped_release>())
      .def_static("elapsed_ms", &Event::elapsed_ms, nb::arg("start"), nb::arg("end"),
                  "Milliseconds between two recorded events.");

  nb::class_<GraphExec>(m, "GraphExec", "An instantiated graph, launched on any stream.")
      .def("launch", &GraphExec::launch, nb::arg("stream"),
           nb::call_guard<nb::gil_scoped_release>());
  nb::class_<Graph>(m, "Graph", "A CUDA graph, captured from a Stream's launches.")
      .def_prop_ro("node_count", [](const Graph& g) { return g.nodes().size(); })
      .def("instantiate", &Graph::instantiate);

  nb::class_<Stream>(m, "Stream",
                     "A stream of its own. Launches, copies and graphs also take CuPy's, "
                     "PyTorch's and cuda.core's streams, and raw handles.")
      .def(
          "__init__",
          [](Stream* self, nb::handle context) { new (self) Stream(context_or_primary(context)); },
          nb::arg("context") = nb::none())
      .def_prop_ro("handle",
                   [](const Stream& s) { return reinterpret_cast<std::uintptr_t>(s.handle()); })
      .def_prop_ro("context", &Stream::context)
      .def("__cuda_stream__",
           [](const Stream& s) {
             return std::pair(0, reinterpret_cast<std::uintptr_t>(s.handle()));
           })
      .def("synchronize", &Stream::synchronize, nb::call_guard<nb::gil_scoped_release>())
      .def("is_idle", &Stream::is_idle)
      .def("wait", &Stream::wait, nb::arg("event"), "Later work waits for `event`.")
      .def(
          "begin_capture",
          [](Stream& s, std::string_view mode) {
            if (mode == "thread") return s.begin_capture(CaptureMode::thread);
            if (mode == "global") return s.begin_capture(CaptureMode::global);
            if (mode == "relaxed") return s.begin_capture(CaptureMode::relaxed);
            throw Error(ErrorKind::invalid_argument, "capture mode '" + std::string(mode) +
                                                         "': one of 'thread', 'global', 'relaxed'");
          },
          nb::arg("mode") = "thread", "Launches on this stream are recorded, not run.")
      .def("end_capture", &Stream::end_capture,
           "The graph of what was launched since begin_capture.")
      .def_prop_ro("is_capturing", &Stream::is_capturing);
}

void bind_memory(nb::module_& m) {
  nb::class_<DeviceMemory>(
      m, "DeviceMemory",
      "Bytes of device memory (cuMemAlloc), freed with the object. ptxrt.DeviceArray gives it a "
      "shape, a dtype and the array interfaces.")
      .def(
          "__init__",
          [](DeviceMemory* self, std::size_t bytes, nb::handle context) {
            new (self) DeviceMemory(context_or_primary(context), bytes);
          },
          nb::arg("bytes"), nb::arg("context") = nb::none())
      .def_prop_ro("address", &DeviceMemory::address)
      .def_prop_ro("bytes", &DeviceMemory::bytes)
      .def_prop_ro("context", &DeviceMemory::context)
      .def("upload", &upload, nb::arg("host"), nb::arg("offset") = 0,
           nb::call_guard<nb::gil_scoped_release>(),
           "Copies a C-contiguous host array's bytes in, at byte `offset`.")
      .def(
          "download",
          [](const DeviceMemory& memory, HostArray host, std::size_t offset) {
            memory.download_bytes(host.data(), host.nbytes(), offset);
          },
          nb::arg("host").noconvert(), nb::arg("offset") = 0,
          nb::call_guard<nb::gil_scoped_release>(),
          "Fills a writable C-contiguous host array from byte `offset`.")
      .def(
          "fill_bytes",
          [](DeviceMemory& memory, std::uint8_t value, nb::handle stream) {
            memory.fill_bytes(value, stream_from(stream));
          },
          nb::arg("value"), nb::arg("stream") = nb::none());
}

}  // namespace

Context context_or_primary(nb::handle context) {
  if (context.is_none()) return Context::primary(0);
  return nb::cast<Context>(context);
}

StreamRef stream_from(nb::handle stream) {
  if (stream.is_none()) return {};
  if (nb::isinstance<Stream>(stream)) return StreamRef(nb::cast<const Stream&>(stream));
  std::uint64_t handle = 0;
  if (nb::hasattr(stream, "__cuda_stream__")) {
    nb::tuple answer = nb::cast<nb::tuple>(stream.attr("__cuda_stream__")());
    if (answer.size() != 2)
      throw Error(ErrorKind::invalid_argument,
                  "stream: __cuda_stream__() gave no (version, handle)");
    handle = handle_value(answer[1], "stream: __cuda_stream__()[1]");
  } else if (nb::hasattr(stream, "cuda_stream")) {
    handle = handle_value(stream.attr("cuda_stream"), "stream.cuda_stream");
  } else if (nb::hasattr(stream, "ptr")) {
    handle = handle_value(stream.attr("ptr"), "stream.ptr");
  } else {
    handle = handle_value(stream, "stream");
  }
  return StreamRef(reinterpret_cast<CUstream>(static_cast<std::uintptr_t>(handle)));
}

Dim3 dim3_from(nb::handle value, std::string_view what) {
  std::vector<std::int64_t> parts;
  if (nb::isinstance<nb::int_>(value)) {
    parts.push_back(nb::cast<std::int64_t>(value));
  } else if (nb::isinstance<nb::tuple>(value) || nb::isinstance<nb::list>(value)) {
    for (nb::handle part : value) {
      if (!nb::isinstance<nb::int_>(part))
        throw Error(ErrorKind::invalid_argument, std::string(what) + " holds a non-int");
      parts.push_back(nb::cast<std::int64_t>(part));
    }
  } else {
    throw Error(ErrorKind::invalid_argument,
                std::string(what) + " must be an int or a tuple of 1 to 3 ints");
  }
  if (parts.empty() || parts.size() > 3)
    throw Error(
        ErrorKind::invalid_argument,
        std::string(what) + " has " + std::to_string(parts.size()) + " dimensions (1 to 3)");
  for (std::int64_t part : parts)
    if (part < 1 || part > std::numeric_limits<unsigned>::max())
      throw Error(
          ErrorKind::invalid_argument,
          std::string(what) + " dimension " + std::to_string(part) + " is not from 1 to 2^32-1");
  parts.resize(3, 1);
  return Dim3(static_cast<unsigned>(parts[0]), static_cast<unsigned>(parts[1]),
              static_cast<unsigned>(parts[2]));
}

void bind_devices(nb::module_& module) {
  bind_device_and_context(module);
  bind_streams(module);
  bind_memory(module);
}

}  // namespace ptxrt::python
