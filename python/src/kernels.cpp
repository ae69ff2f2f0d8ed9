// Kernels, their attributes, and launches whose arguments come from Python: device arrays of any
// library (DLPack, __cuda_array_interface__), ptxrt memory, and scalars sized by the kernel's own
// parameter layout, so that a Python int given for a 4-byte parameter is an int32 there.
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <cstring>
#include <limits>

#include "bindings.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/memory.hpp"
#include "ptxrt/core/stream.hpp"

namespace ptxrt::python {
namespace {

// kDLCUDA and kDLCUDAManaged: memory a kernel can address.
constexpr int dlpack_cuda = 2;
constexpr int dlpack_cuda_managed = 13;

// Each argument's bytes, kept until the launch has taken them.
struct PackedArguments {
  std::vector<std::vector<std::byte>> storage;
  std::vector<void*> pointers;
  std::vector<std::size_t> sizes;

  void add(const void* data, std::size_t bytes) {
    storage.emplace_back(bytes);
    std::memcpy(storage.back().data(), data, bytes);
    sizes.push_back(bytes);
  }
  void finish() {
    for (std::vector<std::byte>& bytes : storage) pointers.push_back(bytes.data());
  }
};

std::string python_type_name(nb::handle value) {
  return nb::cast<std::string>(nb::str(value.type().attr("__name__")));
}

std::string where(const Kernel& kernel, std::size_t index) {
  return kernel.name() + ": argument " + std::to_string(index);
}

// Where a launch goes, and the streams of other libraries that wrote its arrays: the launch
// waits for them (the CUDA array interface's "stream"; DLPack producers order their own).
struct LaunchStreams {
  const Context& context;
  StreamRef launch;
  std::vector<StreamRef> writers;
  std::optional<bool> capturing_known = std::nullopt;

  bool capturing() {
    if (!capturing_known) capturing_known = stream_is_capturing(context, launch);
    return *capturing_known;
  }
};

// The stream number DLPack's __dlpack__(stream=) takes for `stream`: 1 for the legacy default
// stream, -1 (do not synchronize) while it captures, as a captured launch runs later.
std::int64_t dlpack_stream(LaunchStreams& streams) {
  if (streams.capturing()) return -1;
  const auto handle = reinterpret_cast<std::intptr_t>(streams.launch.handle());
  return handle == 0 ? 1 : handle;
}

// The device address of an array from another library, or nothing when `value` is none.
std::optional<std::uint64_t> device_address(nb::handle value, const std::string& who,
                                            LaunchStreams& streams) {
  if (nb::hasattr(value, "__cuda_array_interface__")) {
    nb::dict interface = nb::cast<nb::dict>(value.attr("__cuda_array_interface__"));
    if (interface.contains("stream") && !interface["stream"].is_none()) {
      const auto writer = nb::cast<std::uint64_t>(interface["stream"]);
      if (writer == 0)
        throw Error(ErrorKind::invalid_argument,
                    who + " (" + python_type_name(value) +
                        "): __cuda_array_interface__ names stream 0, which the interface forbids "
                        "(1 is the legacy default stream)");
      streams.writers.emplace_back(reinterpret_cast<CUstream>(static_cast<std::uintptr_t>(writer)));
    }
    nb::tuple data = nb::cast<nb::tuple>(interface["data"]);
    return nb::cast<std::uint64_t>(data[0]);
  }
  if (!nb::hasattr(value, "__dlpack__")) return std::nullopt;
  if (nb::hasattr(value, "__dlpack_device__")) {
    nb::tuple device = nb::cast<nb::tuple>(value.attr("__dlpack_device__")());
    const int type = nb::cast<int>(device[0]);
    if (type != dlpack_cuda && type != dlpack_cuda_managed)
      throw Error(ErrorKind::invalid_argument,
                  who + " is a host array (" + python_type_name(value) +
                      "): pass a device array (CuPy, PyTorch, ptxrt.DeviceArray)");
  }
  // The producer makes the launch's stream wait for the array's writes; one that predates the
  // stream argument orders nothing.
  nb::object capsule;
  try {
    capsule = value.attr("__dlpack__")(nb::arg("stream") = dlpack_stream(streams));
  } catch (nb::python_error& error) {
    if (!error.matches(PyExc_TypeError)) throw;
    capsule = value.attr("__dlpack__")();
  }
  nb::ndarray<> array;
  if (!nb::try_cast(capsule, array))
    throw Error(ErrorKind::invalid_argument, who + " (" + python_type_name(value) +
                                                 ") offers __dlpack__ but could not be imported");
  if (array.device_type() != dlpack_cuda && array.device_type() != dlpack_cuda_managed)
    throw Error(ErrorKind::invalid_argument,
                who + " is a host array (" + python_type_name(value) +
                    "): pass a device array (CuPy, PyTorch, ptxrt.DeviceArray)");
  return reinterpret_cast<std::uintptr_t>(array.data());
}

void add_integer(PackedArguments& packed, nb::handle value, std::size_t bytes,
                 const std::string& who) {
  if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8)
    throw Error(ErrorKind::invalid_argument,
                who + " is " + std::to_string(bytes) + " bytes: an int cannot fill it");
  // Either the signed or the unsigned range of the parameter's width.
  const auto out_of_range = [&] {
    return Error(ErrorKind::invalid_argument, who + ": " + nb::cast<std::string>(nb::str(value)) +
                                                  " does not fit its " + std::to_string(bytes) +
                                                  " bytes");
  };
  int overflow = 0;
  const long long number = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  std::uint64_t bits_value = 0;
  if (overflow > 0 && bytes == 8) {
    bits_value = PyLong_AsUnsignedLongLong(value.ptr());
    if (PyErr_Occurred()) {
      PyErr_Clear();
      throw out_of_range();
    }
  } else if (overflow != 0) {
    throw out_of_range();
  } else {
    if (bytes < 8) {
      const long long low = -(1LL << (bytes * 8 - 1));
      const long long high = static_cast<long long>((1ULL << (bytes * 8)) - 1);
      if (number < low || number > high) throw out_of_range();
    }
    bits_value = static_cast<std::uint64_t>(number);
  }
  packed.add(&bits_value, bytes);  // little-endian: the low bytes first
}

void add_float(PackedArguments& packed, double value, std::size_t bytes, const std::string& who) {
  if (bytes == 8) return packed.add(&value, 8);
  if (bytes == 4) {
    const float single = static_cast<float>(value);
    return packed.add(&single, 4);
  }
  throw Error(ErrorKind::invalid_argument,
              who + " is " + std::to_string(bytes) +
                  " bytes: a float fills 4 (float) or 8 (double); pass a NumPy scalar");
}

void add_argument(PackedArguments& packed, nb::handle value, std::optional<std::size_t> bytes,
                  const std::string& who, LaunchStreams& streams) {
  const auto need = [&](std::size_t given) {
    if (bytes && *bytes != given)
      throw Error(ErrorKind::invalid_argument,
                  who + " (" + python_type_name(value) + ") is " + std::to_string(given) +
                      " bytes; the kernel's parameter is " + std::to_string(*bytes));
  };
  if (nb::isinstance<DeviceMemory>(value)) {
    const std::uint64_t address = nb::cast<const DeviceMemory&>(value).address();
    need(8);
    return packed.add(&address, 8);
  }
  if (std::optional<std::uint64_t> address = device_address(value, who, streams)) {
    need(8);
    return packed.add(&*address, 8);
  }
  if (nb::hasattr(value, "dtype") && nb::hasattr(value, "tobytes") &&
      nb::len(nb::object(value.attr("shape"))) == 0) {  // a NumPy scalar
    nb::bytes raw = nb::cast<nb::bytes>(value.attr("tobytes")());
    need(raw.size());
    return packed.add(raw.c_str(), raw.size());
  }
  if (nb::isinstance<nb::bytes>(value)) {  // a struct passed by value, as its bytes
    nb::bytes raw = nb::borrow<nb::bytes>(value);
    need(raw.size());
    return packed.add(raw.c_str(), raw.size());
  }
  const bool python_scalar = nb::isinstance<nb::bool_>(value) || nb::isinstance<nb::int_>(value) ||
                             nb::isinstance<nb::float_>(value);
  if (python_scalar && !bytes)
    throw Error(ErrorKind::invalid_argument,
                who + ": the kernel's parameter layout is unknown, so a Python " +
                    python_type_name(value) + " has no size: pass a NumPy scalar (numpy.int32(7))");
  if (nb::isinstance<nb::bool_>(value)) {
    if (*bytes != 1 && *bytes != 4)
      throw Error(ErrorKind::invalid_argument,
                  who + " is " + std::to_string(*bytes) + " bytes: a bool fills 1 or 4");
    const std::uint32_t truth = nb::cast<bool>(value) ? 1 : 0;
    return packed.add(&truth, *bytes);
  }
  if (nb::isinstance<nb::int_>(value)) return add_integer(packed, value, *bytes, who);
  if (nb::isinstance<nb::float_>(value))
    return add_float(packed, nb::cast<double>(value), *bytes, who);
  if (value.is_none())
    throw Error(ErrorKind::invalid_argument, who + " is None: pass 0 for a null pointer");
  throw Error(ErrorKind::invalid_argument,
              who + " is a " + python_type_name(value) +
                  ": pass a device array, ptxrt memory, a number, a NumPy scalar or bytes");
}

PackedArguments pack(const Kernel& kernel, nb::handle arguments, LaunchStreams& streams) {
  if (!nb::isinstance<nb::tuple>(arguments) && !nb::isinstance<nb::list>(arguments))
    throw Error(ErrorKind::invalid_argument,
                kernel.name() + ": the arguments must be a tuple or a list");
  const std::size_t count = nb::len(arguments);
  const bool known = kernel.has_parameter_layout();
  const std::vector<ParameterInfo>& layout = kernel.parameters();
  if (known && count != layout.size())
    throw Error(ErrorKind::invalid_argument, kernel.name() + " takes " +
                                                 std::to_string(layout.size()) + " arguments, " +
                                                 std::to_string(count) + " given");
  PackedArguments packed;
  std::size_t index = 0;
  for (nb::handle value : arguments) {
    add_argument(packed, value, known ? std::optional(layout[index].bytes) : std::nullopt,
                 where(kernel, index), streams);
    ++index;
  }
  packed.finish();
  return packed;
}

LaunchConfig launch_config(nb::handle grid, nb::handle block, std::size_t shared_bytes,
                           nb::handle stream, nb::handle cluster, bool cooperative,
                           std::optional<int> priority) {
  LaunchConfig config;
  config.grid = dim3_from(grid, "grid");
  config.block = dim3_from(block, "block");
  config.dynamic_shared_bytes = shared_bytes;
  config.stream = stream_from(stream);
  if (!cluster.is_none()) config.cluster = dim3_from(cluster, "cluster");
  config.cooperative = cooperative;
  config.priority = priority;
  return config;
}

void launch(const Kernel& kernel, nb::handle grid, nb::handle block, nb::handle arguments,
            std::size_t shared_bytes, nb::handle stream, nb::handle cluster, bool cooperative,
            std::optional<int> priority) {
  launch_with(kernel,
              launch_config(grid, block, shared_bytes, stream, cluster, cooperative, priority),
              arguments);
}

}  // namespace

void launch_with(const Kernel& kernel, const LaunchConfig& config, nb::handle arguments) {
  LaunchStreams streams{kernel.context(), config.stream, {}};
  const PackedArguments packed = pack(kernel, arguments, streams);
  nb::gil_scoped_release unlocked;
  for (const StreamRef writer : streams.writers)
    wait_for_stream(kernel.context(), config.stream, writer);
  kernel.launch_untyped(config, packed.pointers, packed.sizes);
}

namespace {

nb::dict attributes_dict(const KernelAttributes& a) {
  nb::dict d;
  d["registers"] = a.registers;
  d["max_threads_per_block"] = a.max_threads_per_block;
  d["static_shared_bytes"] = a.static_shared_bytes;
  d["constant_bytes"] = a.constant_bytes;
  d["local_bytes"] = a.local_bytes;
  d["ptx_version"] = a.ptx_version;
  d["binary_version"] = a.binary_version;
  d["max_dynamic_shared_bytes"] = a.max_dynamic_shared_bytes;
  return d;
}

constexpr const char* launch_doc =
    "Launches on `stream` (None: the context's default stream). `grid` and `block` are ints or "
    "tuples; `args` a tuple in the kernel's order: device arrays (CuPy, PyTorch, Numba, "
    "ptxrt.DeviceArray: their address), Python ints and floats (sized by the kernel's "
    "parameter: an int for a 4-byte parameter is an int32, a float a float32), NumPy scalars "
    "and bytes (their size checked). The block, grid, shared memory and argument sizes are "
    "checked against the device and the kernel first.";

}  // namespace

void bind_kernels(nb::module_& m) {
  nb::class_<Kernel> kernel(m, "Kernel", "A kernel of a loaded module.");
  kernel.def_prop_ro("name", &Kernel::name)
      .def_prop_ro("context", &Kernel::context)
      .def(
          "attributes", [](const Kernel& k) { return attributes_dict(k.attributes()); },
          "The driver's figures: registers, shared, constant and local bytes, versions.")
      .def_prop_ro(
          "parameters",
          [](const Kernel& k) {
            std::vector<std::pair<std::size_t, std::size_t>> layout;
            for (const ParameterInfo& p : k.parameters()) layout.emplace_back(p.offset, p.bytes);
            return layout;
          },
          "(offset, bytes) of each parameter, read from the image.")
      .def("max_active_blocks_per_sm", &Kernel::max_active_blocks_per_sm, nb::arg("block_threads"),
           nb::arg("dynamic_shared_bytes") = 0)
      .def(
          "max_cooperative_blocks",
          [](const Kernel& k, nb::handle block, std::size_t shared) {
            return k.max_cooperative_blocks(dim3_from(block, "block"), shared);
          },
          nb::arg("block"), nb::arg("dynamic_shared_bytes") = 0)
      .def("set_max_dynamic_shared_bytes", &Kernel::set_max_dynamic_shared_bytes, nb::arg("bytes"))
      .def("__repr__", [](const Kernel& k) { return "<ptxrt.Kernel " + k.describe() + ">"; });
  // kernel.launch(...) and kernel(...), as CuPy's RawKernel is called. The signatures live as
  // long as the module: nanobind keeps the pointer.
  static const std::string parameters =
      "(self, grid: int | tuple[int, ...], block: int | tuple[int, ...], args: tuple[object, "
      "...] | list[object], *, shared_bytes: int = 0, stream: object | None = None, cluster: int "
      "| tuple[int, ...] | None = None, cooperative: bool = False, priority: int | None = None) "
      "-> None";
  static const std::string signatures[] = {"def launch" + parameters, "def __call__" + parameters};
  for (int i = 0; i < 2; ++i)
    kernel.def(i == 0 ? "launch" : "__call__", &launch, nb::sig(signatures[i].c_str()),
               nb::arg("grid"), nb::arg("block"), nb::arg("args"), nb::kw_only(),
               nb::arg("shared_bytes") = 0, nb::arg("stream") = nb::none(),
               nb::arg("cluster") = nb::none(), nb::arg("cooperative") = false,
               nb::arg("priority") = nb::none(), launch_doc);
}

}  // namespace ptxrt::python
