// Tuning problems (the problem file's schema, from a dict), dry-run plans that need no GPU, tunes
// whose configs run in worker processes (ptxrt-tune-worker beside this module), and the tuned
// kernel a database picks.
#include <dlfcn.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <chrono>
#include <future>

#include "bindings.hpp"
#include "ptxrt/core/architecture.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/target.hpp"
#include "ptxrt/tune/problem_tuner.hpp"
#include "ptxrt/tune/tuned_kernel.hpp"

namespace ptxrt::python {
namespace {

namespace fs = std::filesystem;

nb::object json_module() { return nb::module_::import_("json"); }

nb::dict config_dict(const TuningConfig& config) {
  nb::dict d;
  for (const Define& define : config.defines()) {
    if (const std::optional<std::int64_t> number = config.find(define.name))
      d[define.name.c_str()] = *number;
    else
      d[define.name.c_str()] = define.value;
  }
  return d;
}

// The measurement's JSON form (the database's) as a dict, its config's values as numbers.
nb::object measurement_dict(const Measurement& measurement) {
  nb::object row = json_module().attr("loads")(measurement_to_json(measurement));
  row["config"] = config_dict(measurement.config);
  return row;
}

nb::list pruned_list(const std::vector<PrunedConfig>& pruned) {
  nb::list list;
  for (const PrunedConfig& each : pruned) {
    nb::dict d;
    d["config"] = config_dict(each.config);
    d["reason"] = each.reason;
    list.append(d);
  }
  return list;
}

ProblemSizes sizes_from(nb::handle sizes) {
  ProblemSizes result;
  if (sizes.is_none()) return result;
  for (auto [name, value] : nb::cast<nb::dict>(sizes))
    result[nb::cast<std::string>(name)] = nb::cast<std::int64_t>(value);
  return result;
}

// ptxrt-tune-worker, installed beside this module.
fs::path worker_program() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<const void*>(&worker_program), &info) == 0 ||
      info.dli_fname == nullptr)
    throw Error(ErrorKind::not_found, "cannot tell where the ptxrt module was loaded from");
  return fs::path(info.dli_fname).parent_path() / "ptxrt-tune-worker";
}

KernelProblem problem_from(nb::handle spec, std::optional<fs::path> kernel_file,
                           const fs::path& base_directory) {
  std::string text;
  if (nb::isinstance<nb::str>(spec))
    text = nb::cast<std::string>(spec);
  else if (nb::isinstance<nb::dict>(spec))
    text = nb::cast<std::string>(json_module().attr("dumps")(spec));
  else
    throw Error(ErrorKind::invalid_argument,
                "a problem is a dict (the problem file's fields) or its JSON text");
  std::optional<Program> program;
  if (kernel_file) program = Program::from_file(*kernel_file);
  return KernelProblem::from_json(text, std::move(program), "problem", base_directory);
}

// The device model of a real architecture ("sm_90"), for planning without that device.
DeviceProperties model_of(const std::string& arch) {
  const std::optional<Architecture> parsed = parse_architecture(arch);
  if (!parsed || parsed->virtual_architecture)
    throw Error(ErrorKind::invalid_argument,
                "arch '" + arch + "': a plan needs a real architecture such as 'sm_90'");
  return device_model(parsed->cc_major(), parsed->cc_minor());
}

nb::dict plan(const KernelProblem& problem, nb::handle sizes, const std::string& arch,
              std::optional<double> time_limit) {
  const ProblemSizes complete = problem.complete_sizes(sizes_from(sizes));
  const DeviceProperties device = model_of(arch);
  const Target target = select_target(device.cc_major, device.cc_minor, ImageFormat::cubin);
  PlanOptions options;
  options.compile_threads = default_compile_threads();
  options.time_limit_seconds = time_limit;
  TunePlan plan;
  {
    nb::gil_scoped_release unlocked;
    check_problem(Jit::shared(), problem, complete, target, device);
    plan = plan_tune(problem_space(problem, complete, device),
                     problem_compiler(Jit::shared(), problem, complete, target, device), options);
  }
  nb::dict d;
  d["key"] = problem_key(problem, complete, device).describe();
  d["space_size"] = plan.space_size;
  d["pruned_by_constraints"] = pruned_list(plan.pruned_by_constraints);
  d["pruned_by_resources"] = pruned_list(plan.pruned_by_resources);
  d["compile_failures"] = pruned_list(plan.compile_failures);
  d["not_compiled"] = plan.not_compiled;
  nb::list ready;
  for (const Candidate& candidate : plan.ready) {
    nb::dict row;
    row["config"] = config_dict(candidate.config);
    if (candidate.resources) row["resources"] = resources_dict(*candidate.resources);
    if (candidate.occupancy && candidate.shape)
      row["occupancy"] = occupancy_dict(*candidate.occupancy, candidate.shape->block_threads,
                                        candidate.shape->dynamic_shared_bytes);
    ready.append(row);
  }
  d["ready"] = ready;
  return d;
}

struct TuneArguments {
  std::string strategy = "model";
  std::optional<std::size_t> budget;
  std::optional<double> time_limit;
  std::uint64_t seed = 1;
  std::optional<fs::path> database;
  std::vector<int> devices;
  std::string l2 = "flush";
  std::string objective = "time";
  bool observe_power = false;
  bool resume = false;
};

fs::path database_path(const std::optional<fs::path>& asked) {
  if (asked) return *asked;
  fs::path path = TuningDatabase::default_path();
  if (path.empty())
    throw Error(ErrorKind::invalid_argument,
                "no tuning database: pass database=<path> (or set PTXRT_TUNING_DB)");
  return path;
}

nb::dict outcome_dict(const TuneOutcome& outcome) {
  const TuneReport& report = outcome.report;
  nb::dict d;
  d["key"] = outcome.key.describe();
  d["method"] = outcome.key.describe_method();
  d["space_size"] = report.space_size;
  d["compiled"] = report.compiled;
  d["not_reached"] = report.not_reached;
  d["wall_seconds"] = report.wall_seconds;
  d["measuring_seconds"] = report.measuring_seconds;
  d["stopped"] = outcome.stopped;
  d["devices"] = outcome.devices;
  d["workers_started"] = outcome.workers_started;
  d["default_config"] = config_dict(outcome.default_config);
  d["winner"] = report.winner ? measurement_dict(*report.winner) : nb::none();
  d["pruned_by_constraints"] = pruned_list(report.pruned_by_constraints);
  d["pruned_by_resources"] = pruned_list(report.pruned_by_resources);
  d["compile_failures"] = pruned_list(report.compile_failures);
  nb::list results;
  for (const TuneResult& result : report.results) {
    nb::object row = measurement_dict(result.measurement);
    if (result.resources) row["resources"] = resources_dict(*result.resources);
    if (result.occupancy && result.shape)
      row["occupancy"] = occupancy_dict(*result.occupancy, result.shape->block_threads,
                                        result.shape->dynamic_shared_bytes);
    row["elapsed_seconds"] = result.elapsed_seconds;
    results.append(row);
  }
  d["results"] = results;
  nb::dict phases;
  phases["compile_seconds"] = outcome.phases.compile_seconds;
  phases["worker_start_seconds"] = outcome.phases.worker_start_seconds;
  phases["reference_seconds"] = outcome.phases.reference_seconds;
  phases["verification_seconds"] = outcome.phases.verification_seconds;
  phases["timing_seconds"] = outcome.phases.timing_seconds;
  d["phases"] = phases;
  return d;
}

// tune_problem on a thread of its own while this one, the interpreter's, checks for Ctrl-C every
// 100 ms: then the tune stops after the config in progress (every measurement stays recorded in
// the database) and KeyboardInterrupt goes on once it has.
TuneOutcome run_interruptibly(const KernelProblem& problem, const ProblemSizes& sizes,
                              ProblemTuneOptions options) {
  std::atomic<bool> stop{false};
  options.tune.stop = &stop;
  std::future<TuneOutcome> running =
      std::async(std::launch::async, [&] { return tune_problem(problem, sizes, options); });
  std::optional<nb::python_error> interrupt;
  for (;;) {
    std::future_status status;
    {
      nb::gil_scoped_release unlocked;
      status = running.wait_for(std::chrono::milliseconds(100));
    }
    if (status == std::future_status::ready) break;
    if (!interrupt && PyErr_CheckSignals() != 0) {
      interrupt.emplace();  // takes the pending KeyboardInterrupt
      stop = true;
    }
  }
  TuneOutcome outcome = running.get();
  if (interrupt) throw *interrupt;
  return outcome;
}

nb::dict tune(const KernelProblem& problem, nb::handle sizes, const TuneArguments& arguments) {
  const ProblemSizes given = sizes_from(sizes);
  ProblemTuneOptions options;
  options.tune.strategy = parse_tuning_strategy(arguments.strategy);
  options.tune.budget = arguments.budget;
  options.tune.time_limit_seconds = arguments.time_limit;
  options.tune.seed = arguments.seed;
  options.tune.timing.l2 = parse_l2_mode(arguments.l2, "l2");
  options.tune.timing.observe_power = arguments.observe_power;
  options.tune.objective = problem_objective(problem, arguments.objective, "objective");
  options.tune.resume = arguments.resume;
  options.devices = arguments.devices;
  options.worker_program = worker_program();
  const TuningDatabase database(database_path(arguments.database));
  options.tune.database = &database;
  return outcome_dict(run_interruptibly(problem, given, options));
}

void bind_problem(nb::module_& m) {
  nb::class_<KernelProblem>(
      m, "Problem",
      "A tuning problem: the kernel, its tunables and constraints, its launch, its data and its "
      "check, with the problem file's fields (docs/tuning.md).")
      .def(
          "__init__",
          [](KernelProblem* self, nb::handle spec, std::optional<fs::path> kernel_file,
             fs::path base_directory) {
            new (self) KernelProblem(problem_from(spec, kernel_file, base_directory));
          },
          nb::sig("def __init__(self, spec: dict[str, object] | str, kernel_file: str | "
                  "os.PathLike[str] | None = None, base_directory: str | os.PathLike[str] = '.') "
                  "-> None"),
          nb::arg("spec"), nb::arg("kernel_file") = nb::none(), nb::arg("base_directory") = ".",
          "From a dict of the problem file's fields (or its JSON text) for the kernel in "
          "`kernel_file` (else the spec's 'source' or 'source_text'); relative data files are "
          "found in `base_directory`. Raises ptxrt.Error naming the field at fault.")
      .def_static("from_file", &KernelProblem::from_file, nb::arg("problem_file"),
                  nb::arg("kernel_file"))
      .def_static(
          "from_manifest",
          [](const fs::path& kernel_file) {
            return KernelProblem::from_manifest(Program::from_file(kernel_file));
          },
          nb::arg("kernel_file"), "The problem of a kernel file's '// ptxrt: problem' lines.")
      .def_prop_ro("name", [](const KernelProblem& p) { return p.name(); })
      .def_prop_ro("entry", &KernelProblem::entry)
      .def_prop_ro("sizes", &KernelProblem::sizes, "(name, default or None) of each size.")
      .def_prop_ro("tunables",
                   [](const KernelProblem& p) {
                     nb::dict d;
                     for (const TuningParameter& t : p.tunables()) d[t.name.c_str()] = t.values;
                     return d;
                   })
      .def(
          "space_size",
          [](const KernelProblem& p, nb::handle sizes) {
            return p.space_at(p.complete_sizes(sizes_from(sizes))).enumerate().allowed.size();
          },
          nb::arg("sizes") = nb::none(), "The configs the constraints allow at `sizes`.")
      .def("default_config", [](const KernelProblem& p) { return config_dict(p.default_config()); })
      .def(
          "to_dict",
          [](const KernelProblem& p) { return json_module().attr("loads")(p.to_json()); },
          "The problem file's fields, which Problem() reads back the same.")
      .def("__repr__", [](const KernelProblem& p) { return "<ptxrt.Problem " + p.origin() + ">"; });
}

void bind_tunes(nb::module_& m) {
  m.def("plan", &plan, nb::arg("problem"), nb::arg("sizes") = nb::none(), nb::kw_only(),
        nb::arg("arch") = "sm_90", nb::arg("time_limit") = nb::none(),
        "A dry run for `arch`, no GPU needed: the problem checked, its space pruned by the "
        "constraints, every config compiled and pruned by its resources. A dict: space_size, "
        "pruned_by_constraints, pruned_by_resources, compile_failures and ready (each config "
        "with its resources and occupancy).");
  m.def(
      "tune",
      [](const KernelProblem& problem, nb::handle sizes, std::string strategy,
         std::optional<std::size_t> budget, std::optional<double> time_limit, std::uint64_t seed,
         std::optional<fs::path> database, std::vector<int> devices, std::string l2,
         std::string objective, bool observe_power, bool resume) {
        return tune(problem, sizes,
                    TuneArguments{std::move(strategy), budget, time_limit, seed,
                                  std::move(database), std::move(devices), std::move(l2),
                                  std::move(objective), observe_power, resume});
      },
      nb::arg("problem"), nb::arg("sizes") = nb::none(), nb::kw_only(),
      nb::arg("strategy") = "model", nb::arg("budget") = nb::none(),
      nb::arg("time_limit") = nb::none(), nb::arg("seed") = 1, nb::arg("database") = nb::none(),
      nb::arg("devices") = std::vector<int>{}, nb::arg("l2") = "flush",
      nb::arg("objective") = "time", nb::arg("observe_power") = false, nb::arg("resume") = false,
      "Tunes `problem` at `sizes` on `devices` (default: device 0), each config verified and "
      "timed in a worker process (a faulting config costs a worker, not this process), every "
      "measurement recorded in `database` (default: $PTXRT_TUNING_DB, else the cache folder's "
      "tuning.json). strategy: 'model' (default), 'exhaustive', 'random', 'occupancy'; l2: "
      "'flush' or 'warm'; objective: 'time', 'energy', 'power' or a metric of the problem. "
      "Ctrl-C stops it after the config in progress (KeyboardInterrupt, every measurement "
      "recorded). "
      "Returns the report as a dict: winner, results (each config's measurement, resources "
      "and occupancy), what was pruned and why, and where the time went.");
}

void bind_tuned_kernel(nb::module_& m) {
  nb::class_<TunedKernel>(m, "TunedKernel",
                          "The database's winner for this device and these sizes, compiled, "
                          "loaded and its launch computed once; then each launch is one call.")
      .def(
          "__init__",
          [](TunedKernel* self, const KernelProblem& problem, nb::handle sizes,
             std::optional<fs::path> database, nb::handle context) {
            const ProblemSizes given = problem.complete_sizes(sizes_from(sizes));
            const TuningDatabase opened(database_path(database));
            const Context target = context_or_primary(context);
            nb::gil_scoped_release unlocked;
            new (self) TunedKernel(problem, given, target, opened);
          },
          nb::arg("problem"), nb::arg("sizes") = nb::none(), nb::kw_only(),
          nb::arg("database") = nb::none(), nb::arg("context") = nb::none())
      .def_prop_ro("config", [](const TunedKernel& k) { return config_dict(k.choice().config); })
      .def_prop_ro(
          "choice", [](const TunedKernel& k) { return k.choice().describe(); },
          "The config and where it came from (exact, nearest size, same capability, "
          "the problem's default).")
      .def_prop_ro("kernel", &TunedKernel::kernel)
      .def_prop_ro("module", &TunedKernel::module)
      .def_prop_ro("grid",
                   [](const TunedKernel& k) {
                     const Dim3& g = k.launch_config().grid;
                     return std::vector<unsigned>{g.x, g.y, g.z};
                   })
      .def_prop_ro("block",
                   [](const TunedKernel& k) {
                     const Dim3& b = k.launch_config().block;
                     return std::vector<unsigned>{b.x, b.y, b.z};
                   })
      .def(
          "launch",
          [](const TunedKernel& k, nb::args arguments, nb::handle stream) {
            LaunchConfig config = k.launch_config();
            config.stream = stream_from(stream);
            launch_with(k.kernel(), config, arguments);
          },
          nb::arg("args"), nb::kw_only(), nb::arg("stream") = nb::none(),
          "Launches the tuned config with these arguments, as Kernel.launch takes them.");
}

}  // namespace

void bind_tuner(nb::module_& module) {
  bind_problem(module);
  bind_tunes(module);
  bind_tuned_kernel(module);
}

}  // namespace ptxrt::python
