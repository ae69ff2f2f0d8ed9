// ptxrt._ptxrt: the runtime and the tuner for Python. The package (python/ptxrt/__init__.py)
// re-exports it with the Kernel Tuner interface beside it.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "bindings.hpp"
#include "ptxrt/core/error.hpp"

namespace ptxrt::python {
namespace {

// One Python type for every ptxrt::Error, a RuntimeError carrying the same fields.
void translate_error(const std::exception_ptr& thrown, void* error_type) {
  try {
    std::rethrow_exception(thrown);
  } catch (const Error& error) {
    nb::handle type(static_cast<PyObject*>(error_type));
    nb::object instance = type(error.what());
    instance.attr("kind") = std::string(to_string(error.kind()));
    instance.attr("call") = error.call();
    instance.attr("code") = error.code();
    instance.attr("code_name") = error.code_name();
    instance.attr("context") = error.context();
    PyErr_SetObject(type.ptr(), instance.ptr());
  }
}

}  // namespace

void bind_errors(nb::module_& module) {
  PyObject* type = PyErr_NewExceptionWithDoc(
      "ptxrt.Error",
      "What ptxrt raises. str() is the whole message; the fields say what failed:\n"
      "kind ('driver', 'sticky', 'no_driver', 'no_device', 'nvrtc', 'compile', 'link',\n"
      "'invalid_argument', 'not_found', 'io'), call (the API call, '' when none), code (its\n"
      "result code, 0 when none), code_name ('CUDA_ERROR_ILLEGAL_ADDRESS', ...) and context\n"
      "(what ptxrt was doing: the kernel, its configuration, the device).",
      PyExc_RuntimeError, nullptr);
  if (type == nullptr) throw nb::python_error();
  for (const char* field : {"kind", "call", "code_name", "context"})
    PyObject_SetAttrString(type, field, nb::str("").ptr());
  PyObject_SetAttrString(type, "code", nb::int_(0).ptr());
  module.attr("Error") = nb::steal(type);
  nb::register_exception_translator(translate_error, type);
}

}  // namespace ptxrt::python

NB_MODULE(_ptxrt, module) {
  module.doc() = "ptxrt's runtime and tuner (import ptxrt, not this module)";
  using namespace ptxrt::python;
  bind_errors(module);
  bind_devices(module);
  bind_compile(module);
  bind_kernels(module);
  bind_tuner(module);
}
