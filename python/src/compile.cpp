// Programs, compiling (through NVRTC, and the JIT's caches), images and their resource reports
// (no GPU needed), modules and their __constant__ / __device__ symbols.
#include <nanobind/ndarray.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "ptxrt/core/architecture.hpp"
#include "ptxrt/core/device.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/core/module.hpp"
#include "ptxrt/core/occupancy.hpp"
#include "ptxrt/core/resources.hpp"
#include "ptxrt/core/symbol.hpp"
#include "ptxrt/core/target.hpp"

namespace ptxrt::python {
namespace {

using HostArray = nb::ndarray<nb::device::cpu, nb::c_contig>;

// Python's names of the formats, as the CLI's --format takes them.
constexpr std::pair<std::string_view, ImageFormat> format_names[] = {
    {"cubin", ImageFormat::cubin},
    {"ptx", ImageFormat::ptx},
    {"fatbin", ImageFormat::fatbin},
    {"ltoir", ImageFormat::ltoir}};

ImageFormat format_from(std::string_view name) {
  for (const auto& [known, format] : format_names)
    if (known == name) return format;
  throw Error(ErrorKind::invalid_argument,
              "format '" + std::string(name) + "': one of 'cubin', 'ptx', 'fatbin', 'ltoir'");
}

std::string format_name(ImageFormat format) {
  for (const auto& [name, known] : format_names)
    if (known == format) return std::string(name);
  return std::string(to_string(format));
}

std::string define_value(nb::handle value, const std::string& name) {
  if (value.is_none()) return {};
  if (nb::isinstance<nb::bool_>(value)) return nb::cast<bool>(value) ? "1" : "0";
  if (nb::isinstance<nb::int_>(value) || nb::isinstance<nb::float_>(value) ||
      nb::isinstance<nb::str>(value))
    return nb::cast<std::string>(nb::str(value));
  throw Error(ErrorKind::invalid_argument,
              "defines['" + name + "'] must be an int, float, str, bool or None");
}

std::vector<Define> defines_from(nb::handle defines) {
  std::vector<Define> result;
  if (defines.is_none()) return result;
  if (nb::isinstance<nb::dict>(defines)) {
    for (auto [key, value] : nb::borrow<nb::dict>(defines)) {
      const std::string name = nb::cast<std::string>(nb::str(key));
      result.push_back({name, define_value(value, name)});
    }
    return result;
  }
  for (nb::handle item : defines) {
    if (!nb::isinstance<nb::str>(item))
      throw Error(ErrorKind::invalid_argument,
                  "defines must be a dict or a list of 'NAME=VALUE' strings");
    const std::string text = nb::cast<std::string>(item);
    const std::size_t equals = text.find('=');
    result.push_back(equals == std::string::npos
                         ? Define{text, {}}
                         : Define{text.substr(0, equals), text.substr(equals + 1)});
  }
  return result;
}

}  // namespace

nb::dict resources_dict(const KernelResources& r) {
  nb::dict d;
  d["name"] = r.name;
  d["sm"] = r.sm;
  d["registers"] = r.registers;
  d["barriers"] = r.barriers;
  d["max_threads_per_block"] = r.max_threads_per_block;
  d["static_shared_bytes"] = r.static_shared_bytes;
  d["reserved_shared_bytes"] = r.reserved_shared_bytes;
  d["user_constant_bytes"] = r.user_constant_bytes;
  d["param_bytes"] = r.param_bytes;
  d["stack_frame_bytes"] = r.stack_frame_bytes;
  d["cumulative_stack_bytes"] = r.cumulative_stack_bytes;
  d["spill_store_bytes"] = r.spill_store_bytes;
  d["spill_load_bytes"] = r.spill_load_bytes;
  return d;
}

nb::dict occupancy_dict(const Occupancy& o, int block_threads, std::size_t dynamic_shared_bytes) {
  nb::dict d;
  d["block_threads"] = block_threads;
  d["dynamic_shared_bytes"] = dynamic_shared_bytes;
  d["active_blocks_per_sm"] = o.active_blocks_per_sm;
  d["active_warps_per_sm"] = o.active_warps_per_sm;
  d["fraction"] = o.fraction;
  d["limit"] = std::string(to_string(o.limit));
  d["reason"] = o.reason;
  d["registers_per_block"] = o.registers_per_block;
  d["shared_bytes_per_block"] = o.shared_bytes_per_block;
  return d;
}

namespace {

std::vector<KernelResources> cubin_resources(const Image& image) {
  if (image.format != ImageFormat::cubin)
    throw Error(ErrorKind::invalid_argument,
                "resources are read from a CUBIN; image " + image.name + " is " +
                    std::string(to_string(image.format)) + " (compile with format='cubin')");
  return image_resources(image);
}

const ArchLimits& limits_of(const Image& image) {
  const std::optional<Architecture> arch = parse_architecture(image.arch);
  if (!arch || arch->virtual_architecture)
    throw Error(ErrorKind::invalid_argument,
                "image " + image.name + " is for '" + image.arch + "', not a real sm_XY");
  return arch_limits(arch->cc_major(), arch->cc_minor());
}

nb::list resource_report(const Image& image, const std::vector<int>& block_threads,
                         std::size_t dynamic_shared_bytes) {
  const ArchLimits& limits = limits_of(image);
  nb::list report;
  for (const KernelResources& kernel : cubin_resources(image)) {
    nb::dict row = resources_dict(kernel);
    nb::list occupancies;
    for (int block : block_threads)
      occupancies.append(
          occupancy_dict(compute_occupancy(limits, kernel, block, dynamic_shared_bytes), block,
                         dynamic_shared_bytes));
    row["occupancy"] = occupancies;
    report.append(row);
  }
  return report;
}

Target target_from(std::string_view arch, ImageFormat format) {
  if (!arch.empty()) return Target{.arch = std::string(arch), .format = format, .note = {}};
  const Device device = Device::get(0);
  return select_target(device.properties().cc_major, device.properties().cc_minor, format);
}

void bind_programs(nb::module_& m) {
  nb::class_<Program>(m, "Program",
                      "Kernel source: one or several files, headers by include name, device "
                      "objects to link.")
      .def(
          "__init__",
          [](Program* self, std::string source, std::string name, std::filesystem::path directory) {
            new (self) Program(
                Program::from_string(std::move(source), std::move(name), std::move(directory)));
          },
          nb::arg("source"), nb::arg("name") = "program.cu", nb::arg("directory") = "",
          "A program from source text; `directory` serves its quoted includes.")
      .def_static("from_file", &Program::from_file, nb::arg("path"),
                  "A .cu file; its folder serves its quoted includes.")
      .def_static("from_files", &Program::from_files, nb::arg("paths"),
                  "Several files compiled apart and linked (nvJitLink).")
      .def(
          "add_header",
          [](Program& p, std::string name, std::string content) -> Program& {
            return p.add_header(std::move(name), std::move(content));
          },
          nb::arg("include_name"), nb::arg("content"), nb::rv_policy::reference_internal,
          "A header the source includes by this name.")
      .def(
          "add_source",
          [](Program& p, std::string source, std::string name) -> Program& {
            return p.add_source(std::move(source), std::move(name));
          },
          nb::arg("source"), nb::arg("name"), nb::rv_policy::reference_internal)
      .def("add_source_file", &Program::add_source_file, nb::arg("path"),
           nb::rv_policy::reference_internal)
      .def(
          "add_device_object",
          [](Program& p, nb::handle object, std::string name) -> Program& {
            if (nb::isinstance<nb::bytes>(object)) {
              nb::bytes bytes = nb::borrow<nb::bytes>(object);
              return p.add_device_object(DeviceObject::from_bytes(
                  std::string(bytes.c_str(), bytes.size()), std::move(name)));
            }
            return p.add_device_object(
                DeviceObject::from_file(nb::cast<std::filesystem::path>(object)));
          },
          nb::arg("object"), nb::arg("name") = "device_object", nb::rv_policy::reference_internal,
          "A CUBIN, PTX, LTO-IR, fatbin or library (nvcc -dc, nvcc -lib) to link, from a path "
          "or bytes.")
      .def_prop_ro("name", &Program::name)
      .def_prop_ro("source", &Program::source)
      .def_prop_ro("is_linked", &Program::is_linked);
}

void bind_images(nb::module_& m) {
  nb::class_<Image>(m, "Image",
                    "What the compiler produced: PTX, a CUBIN, a fatbin or LTO-IR, with its log "
                    "and the options used.")
      .def_prop_ro("format", [](const Image& i) { return format_name(i.format); })
      .def_prop_ro("arch", [](const Image& i) { return i.arch; })
      .def_prop_ro("name", [](const Image& i) { return i.name; })
      .def_prop_ro(
          "data", [](const Image& i) { return nb::bytes(i.data.data(), i.data.size()); },
          "The image's bytes (PTX text for format 'ptx').")
      .def_prop_ro("defines",
                   [](const Image& i) {
                     nb::dict d;
                     for (const Define& define : i.defines) d[define.name.c_str()] = define.value;
                     return d;
                   })
      .def_prop_ro("options", [](const Image& i) { return i.options; })
      .def_prop_ro("log", [](const Image& i) { return i.compile_log; })
      .def_prop_ro("key", [](const Image& i) { return i.key; })
      .def_prop_ro("lowered_names",
                   [](const Image& i) {
                     nb::dict d;
                     for (const auto& [expression, lowered] : i.lowered_names)
                       d[expression.c_str()] = lowered;
                     return d;
                   })
      .def(
          "resources",
          [](const Image& i, std::vector<int> block_threads, std::size_t dynamic_shared_bytes) {
            return resource_report(i, block_threads, dynamic_shared_bytes);
          },
          nb::arg("block_threads") = std::vector<int>{}, nb::arg("dynamic_shared_bytes") = 0,
          "Each kernel's registers, shared, constant and local memory, spills and barriers (a "
          "dict per kernel), with the occupancy of each block size asked for: read from the "
          "CUBIN, no GPU needed.")
      .def("__repr__", [](const Image& i) { return "<ptxrt.Image " + describe_image(i) + ">"; });
}

void bind_compile_functions(nb::module_& m) {
  m.def(
      "compile",
      [](const Program& program, nb::handle defines, std::vector<std::string> options,
         std::vector<std::string> include_paths, std::vector<std::string> name_expressions,
         std::string arch, std::string format) {
        const CompileOptions compile_options =
            compile_options_from(defines, options, include_paths, name_expressions, arch, format);
        nb::gil_scoped_release unlocked;
        return compile(program, compile_options);
      },
      nb::arg("program"), nb::kw_only(), nb::arg("defines") = nb::none(),
      nb::arg("options") = std::vector<std::string>{},
      nb::arg("include_paths") = std::vector<std::string>{},
      nb::arg("name_expressions") = std::vector<std::string>{}, nb::arg("arch") = "",
      nb::arg("format") = "cubin",
      "Compiles `program` with NVRTC, without caches: for `arch` ('sm_90', 'compute_90', "
      "'sm_80,sm_90' for a fatbin), else device 0's. Raises ptxrt.Error (kind 'compile') with "
      "the diagnostics and the defines in force.");
  m.def("nvrtc_version", &nvrtc_version, "NVRTC's version, major*1000 + minor*10.");
  m.def(
      "supported_architectures", [] { return supported_architectures(); },
      "The SM versions this NVRTC compiles for (90 for sm_90).");
}

void bind_jit(nb::module_& m) {
  nb::class_<Jit>(m, "Jit",
                  "Compiles through caches in memory and on disk, and loads modules once per "
                  "context. Thread-safe: threads compiling at once share one compile of a key.")
      .def(
          "__init__",
          [](Jit* self, std::optional<std::filesystem::path> cache_directory, bool disk_cache) {
            JitOptions options;
            if (cache_directory) options.cache_directory = *cache_directory;
            if (!disk_cache) options.cache_directory.clear();
            new (self) Jit(std::move(options));
          },
          nb::arg("cache_directory") = nb::none(), nb::arg("disk_cache") = true,
          "A JIT of its own; ptxrt.Jit.shared() is the process-wide one.")
      .def_static("shared", &Jit::shared, nb::rv_policy::reference,
                  "The process-wide JIT ($PTXRT_CACHE_DIR, else ~/.cache/ptxrt).")
      .def(
          "image",
          [](Jit& jit, const Program& program, nb::handle defines, std::vector<std::string> options,
             std::vector<std::string> include_paths, std::vector<std::string> name_expressions,
             std::string arch, std::string format) {
            const CompileOptions compile_options = compile_options_from(
                defines, options, include_paths, name_expressions, arch, format);
            nb::gil_scoped_release unlocked;
            return Image(*jit.image(program, compile_options));
          },
          nb::arg("program"), nb::kw_only(), nb::arg("defines") = nb::none(),
          nb::arg("options") = std::vector<std::string>{},
          nb::arg("include_paths") = std::vector<std::string>{},
          nb::arg("name_expressions") = std::vector<std::string>{}, nb::arg("arch") = "",
          nb::arg("format") = "cubin", "The image, compiled or from a cache.")
      .def(
          "module",
          [](Jit& jit, const Program& program, nb::handle context, nb::handle defines,
             std::vector<std::string> options, std::vector<std::string> include_paths,
             std::vector<std::string> name_expressions) {
            const Context target_context = context_or_primary(context);
            const CompileOptions compile_options =
                compile_options_from(defines, options, include_paths, name_expressions, "", "");
            nb::gil_scoped_release unlocked;
            return jit.module(program, compile_options, target_context);
          },
          nb::arg("program"), nb::kw_only(), nb::arg("context") = nb::none(),
          nb::arg("defines") = nb::none(), nb::arg("options") = std::vector<std::string>{},
          nb::arg("include_paths") = std::vector<std::string>{},
          nb::arg("name_expressions") = std::vector<std::string>{},
          "Compiled for the context's device (the primary context of device 0 by default) and "
          "loaded into it.")
      .def(
          "kernel",
          [](Jit& jit, const Program& program, std::string entry, nb::handle context,
             nb::handle defines, std::vector<std::string> options,
             std::vector<std::string> include_paths) {
            const Context target_context = context_or_primary(context);
            const CompileOptions compile_options =
                compile_options_from(defines, options, include_paths, {}, "", "");
            nb::gil_scoped_release unlocked;
            return jit.kernel(program, compile_options, target_context, entry);
          },
          nb::arg("program"), nb::arg("entry"), nb::kw_only(), nb::arg("context") = nb::none(),
          nb::arg("defines") = nb::none(), nb::arg("options") = std::vector<std::string>{},
          nb::arg("include_paths") = std::vector<std::string>{},
          "One kernel: an extern \"C\" name, a C++ name or a template instantiation "
          "('scale<float>').")
      .def("forget", &Jit::forget, nb::arg("context"),
           "Drops the modules loaded into `context` (before destroying it).")
      .def("stats", [](const Jit& jit) {
        const JitStats s = jit.stats();
        nb::dict d;
        d["image_memory_hits"] = s.image_memory_hits;
        d["disk_hits"] = s.disk_hits;
        d["compiles"] = s.compiles;
        d["module_hits"] = s.module_hits;
        d["module_loads"] = s.module_loads;
        return d;
      });
}

void bind_modules(nb::module_& m) {
  nb::class_<GlobalSymbol>(m, "Symbol",
                           "A __constant__ or __device__ variable of a loaded module, by name.")
      .def_prop_ro("name", &GlobalSymbol::name)
      .def_prop_ro("bytes", &GlobalSymbol::bytes)
      .def_prop_ro("address", &GlobalSymbol::address)
      .def(
          "set",
          [](const GlobalSymbol& symbol, HostArray values) {
            symbol.write(values.data(), values.nbytes());
          },
          nb::arg("values"), nb::call_guard<nb::gil_scoped_release>(),
          "Writes a host array whose bytes are the variable's size (checked).")
      .def(
          "get",
          [](const GlobalSymbol& symbol, nb::handle dtype) {
            nb::object numpy = nb::module_::import_("numpy");
            const std::size_t item =
                nb::cast<std::size_t>(numpy.attr("dtype")(dtype).attr("itemsize"));
            if (item == 0 || symbol.bytes() % item != 0)
              throw Error(ErrorKind::invalid_argument, "symbol " + symbol.name() + " holds " +
                                                           std::to_string(symbol.bytes()) +
                                                           " bytes, not a whole number of " +
                                                           std::to_string(item) + "-byte elements");
            nb::object values = numpy.attr("empty")(symbol.bytes() / item, dtype);
            HostArray host = nb::cast<HostArray>(values);
            {
              nb::gil_scoped_release unlocked;
              symbol.read(host.data(), host.nbytes());
            }
            return values;
          },
          nb::arg("dtype"), "The variable's bytes as a 1-D NumPy array of `dtype`.");

  nb::class_<Module>(m, "Module", "A loaded image: its kernels and variables by name.")
      .def_static(
          "load",
          [](const Image& image, nb::handle context) {
            const Context target = context_or_primary(context);
            nb::gil_scoped_release unlocked;
            return Module::load(target, image);
          },
          nb::arg("image"), nb::arg("context") = nb::none(),
          "Loads an image (checked against the device and driver first).")
      .def("kernel", &Module::kernel, nb::arg("name"))
      .def("entry_points", &Module::entry_points)
      .def("symbol", &Module::global, nb::arg("name"),
           "A __constant__ or __device__ variable; raises ptxrt.Error (not_found) listing none.")
      .def_prop_ro("context", &Module::context)
      .def_prop_ro("info_log", &Module::info_log);
}

}  // namespace

CompileOptions compile_options_from(nb::handle defines, const std::vector<std::string>& options,
                                    const std::vector<std::string>& include_paths,
                                    const std::vector<std::string>& name_expressions,
                                    std::string_view arch, std::string_view format) {
  CompileOptions result;
  result.defines = defines_from(defines);
  result.extra_options = options;
  result.include_paths.assign(include_paths.begin(), include_paths.end());
  result.name_expressions = name_expressions;
  if (!format.empty()) result.target = target_from(arch, format_from(format));
  return result;
}

void bind_compile(nb::module_& module) {
  bind_programs(module);
  bind_images(module);
  bind_compile_functions(module);
  bind_jit(module);
  bind_modules(module);
}

}  // namespace ptxrt::python
