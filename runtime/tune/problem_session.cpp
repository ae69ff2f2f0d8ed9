#include "ptxrt/tune/problem_session.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>

#include "ptxrt/core/error.hpp"
#include "ptxrt/core/memory.hpp"
#include "ptxrt/tune/launch_timer.hpp"
#include "tune/energy_window.hpp"
#include "tune/nvml_device.hpp"
#include "tune/output_checks.hpp"
#include "tune/problem_checks.hpp"
#include "tune/seconds_since.hpp"

namespace ptxrt {

namespace {

using detail::PackedArguments;

// Output elements a correct kernel overwrites; NaN for floats (all bits set), a pattern for
// integers.
std::uint8_t poison_byte(ElementType type) { return is_floating(type) ? 0xFF : 0xA5; }

}  // namespace

struct ProblemSession::State {
  KernelProblem problem;
  ProblemSizes sizes;
  Jit& jit;
  Context context;
  CompileOptions base;
  ProblemData initial;
  std::vector<std::optional<DeviceMemory>> buffers;  // by argument position; none for scalars
  // The inputs as made, on the device where it has room for a second copy: every verified run
  // restores them, and a device copy of an input of hundreds of megabytes takes a fraction of a
  // millisecond where its upload from pageable memory takes a tenth of a second. By argument
  // position; none where an input is uploaded instead.
  std::vector<std::optional<DeviceMemory>> pristine;
  std::vector<ProblemData::Array> expected;          // the reference's outputs, by name
  std::string reference_name;
  TuningConfig reference_config;  // the reference kernel's or config's: its aggregates' lengths
  std::optional<detail::OutputChecks> checks;  // aggregates and a check kernel, when given
  LaunchTimer timer;
  std::optional<detail::NvmlDevice> nvml;  // once a measurement observes power
  ConfigRunner launch;                     // the problem's launcher's, when it has one
  TunePhases phases;  // the reference's, the verifications' and the timings' seconds

  State(KernelProblem problem_, ProblemSizes sizes_, Jit& jit_, const Context& context_)
      : problem(std::move(problem_)),
        sizes(problem.complete_sizes(sizes_)),
        jit(jit_),
        context(context_),
        base(problem.compile_options_at(sizes)),
        initial(detail::make_problem_data_with(
            problem, sizes, max_problem_data_bytes,
            [this](std::size_t position, ProblemData& data) { generate(position, data); })),
        timer(context) {
    for (const ProblemArgument& argument : problem.arguments()) {
      if (argument.kind != ProblemArgument::Kind::buffer) {
        buffers.emplace_back();
        continue;
      }
      buffers.emplace_back(std::in_place, context, initial.at(argument.name).bytes.size());
    }
    pristine.resize(buffers.size());
  }

  // The buffers by name, for the problem's C++ callbacks.
  ProblemDevice device_view() {
    std::vector<std::pair<std::string_view, DeviceRange*>> named;
    for (std::size_t i = 0; i < buffers.size(); ++i)
      if (buffers[i]) named.emplace_back(problem.arguments()[i].name, &*buffers[i]);
    return ProblemDevice(jit, context, sizes, std::move(named));
  }

  // One run of `config`: the problem's launcher, else its entry launched with the arguments.
  std::function<void()> runner(const TuningConfig& config) {
    if (launch) return [this, config] { launch(config); };
    // Shared, because the packed pointers point into the values.
    const auto kernel = std::make_shared<const Kernel>(kernel_for(config));
    const auto packed = std::make_shared<const PackedArguments>(pack(config, all_positions()));
    return [kernel, packed, launch = problem.launch_at(config, sizes)] {
      kernel->launch_untyped(launch, packed->pointers, packed->sizes);
    };
  }

  std::size_t index_of(std::string_view name) const {
    const auto& arguments = problem.arguments();
    for (std::size_t i = 0; i < arguments.size(); ++i)
      if (arguments[i].name == name) return i;
    throw Error(ErrorKind::not_found, problem.name() + ": no argument " + std::string(name));
  }

  // The second restore makes the device copies of the inputs (keep_pristine_inputs): it tells a
  // session that restores again and again (a verified tune, a peer) from one that needs its inputs
  // once. Counted up to 2 only.
  int restores = 0;

  // The inputs as made, the outputs poisoned: what every verified run starts from.
  void restore() {
    if (restores < 2 && ++restores == 2) keep_pristine_inputs();
    const auto& arguments = problem.arguments();
    for (std::size_t i = 0; i < arguments.size(); ++i) {
      if (!buffers[i]) continue;
      if (arguments[i].role == ArgumentRole::output) {
        buffers[i]->fill_bytes(poison_byte(arguments[i].type));
      } else if (pristine[i]) {
        buffers[i]->copy_from(*pristine[i], buffers[i]->bytes());
      } else {
        const std::vector<std::byte>& bytes = initial.at(arguments[i].name).bytes;
        buffers[i]->upload_bytes(bytes.data(), bytes.size());
      }
    }
  }

  // Copies of the inputs on the device, from which every later restore copies, where they take at
  // most half of its free memory (the rest is the configs' and the other processes'); else none,
  // and each restore uploads.
  void keep_pristine_inputs() {
    const auto& arguments = problem.arguments();
    std::size_t input_bytes = 0;
    for (std::size_t i = 0; i < arguments.size(); ++i)
      if (buffers[i] && arguments[i].role != ArgumentRole::output)
        input_bytes += buffers[i]->bytes();
    if (input_bytes == 0 || input_bytes > context.memory_info().first / 2) return;
    for (std::size_t i = 0; i < arguments.size(); ++i) {
      if (!buffers[i] || arguments[i].role == ArgumentRole::output) continue;
      const std::vector<std::byte>& bytes = initial.at(arguments[i].name).bytes;
      pristine[i].emplace(context, bytes.size());
      pristine[i]->upload_bytes(bytes.data(), bytes.size());
    }
  }

  // The module of `program` compiled with `options`, its symbols filled.
  // The module of `program`; an entry it lacks is not_found, named, as Module::kernel says it.
  Module compile(const Program& program, const CompileOptions& options) {
    try {
      return jit.module(program, options, context);
    } catch (const Error& error) {
      const std::optional<std::string> name = detail::unresolved_name(error);
      if (!name) throw;
      throw Error(ErrorKind::not_found,
                  (name->starts_with('&') ? "no variable named '" : "no kernel named '") + *name +
                      "' in " + program.name());
    }
  }

  Module module_of(const Program& program, const CompileOptions& options, bool own_program) {
    Module module = compile(program, options);
    for (const ProblemSymbol& symbol : problem.symbols()) {
      const ProblemData::Array& data =
          initial.at(symbol.from_argument.empty() ? symbol.name : symbol.from_argument);
      std::optional<GlobalSymbol> global;
      try {
        global = module.global(symbol.name);
      } catch (const Error& error) {
        // Another file's reference kernel need not use the problem's symbols.
        if (own_program || error.kind() != ErrorKind::not_found) throw;
        continue;
      }
      if (data.bytes.size() > global->bytes())
        throw Error(ErrorKind::invalid_argument,
                    problem.name() + ": symbol " + symbol.name + " holds " +
                        std::to_string(global->bytes()) + " bytes, fewer than the " +
                        std::to_string(data.bytes.size()) + " bytes (" +
                        std::to_string(data.count()) + " " + std::string(to_string(data.type)) +
                        ") it is to be filled with");
      detail::copy_to_device(context, global->address(), data.bytes.data(), data.bytes.size(),
                             std::nullopt, "filling symbol " + symbol.name);
    }
    return module;
  }

  CompileOptions options_for(const TuningConfig& config) const {
    CompileOptions options = base;
    options.defines.insert(options.defines.end(), config.defines().begin(), config.defines().end());
    return options;
  }

  Kernel kernel_for(const TuningConfig& config) {
    return module_of(problem.program(), options_for(config), true).kernel(problem.entry());
  }

  PackedArguments pack(const TuningConfig& config,
                       const std::vector<std::size_t>& positions) const {
    PackedArguments packed;
    packed.values.resize(positions.size());
    for (std::size_t slot = 0; slot < positions.size(); ++slot) {
      const ProblemArgument& argument = problem.arguments()[positions[slot]];
      std::byte* value = packed.values[slot].data();
      if (argument.kind == ProblemArgument::Kind::buffer) {
        const CUdeviceptr address = buffers[positions[slot]]->address();
        std::memcpy(value, &address, sizeof address);
        packed.sizes.push_back(sizeof address);
      } else if (argument.number || is_floating(argument.type)) {
        const double number =
            argument.number ? *argument.number
                            : static_cast<double>(problem.evaluate(*argument.value, sizes, config,
                                                                   "arguments." + argument.name));
        if (argument.type == ElementType::float32) {
          const auto single = static_cast<float>(number);
          std::memcpy(value, &single, sizeof single);
        } else if (argument.type == ElementType::float64) {
          std::memcpy(value, &number, sizeof number);
        } else {
          const auto whole = static_cast<std::int64_t>(number);
          std::memcpy(value, &whole, element_bytes(argument.type));
        }
      } else {
        // Little-endian: the low bytes of the 64-bit value are the narrower integer's.
        const std::int64_t exact =
            problem.evaluate(*argument.value, sizes, config, "arguments." + argument.name);
        std::memcpy(value, &exact, element_bytes(argument.type));
      }
      if (argument.kind != ProblemArgument::Kind::buffer)
        packed.sizes.push_back(element_bytes(argument.type));
    }
    for (auto& value : packed.values) packed.pointers.push_back(value.data());
    return packed;
  }

  std::vector<std::size_t> all_positions() const {
    std::vector<std::size_t> positions(problem.arguments().size());
    for (std::size_t i = 0; i < positions.size(); ++i) positions[i] = i;
    return positions;
  }

  // Count and byte sizes of the arguments against the driver's parameter layout.
  void check_layout(const Kernel& kernel) const {
    if (!kernel.has_parameter_layout()) return;
    const std::vector<ParameterInfo>& layout = kernel.parameters();
    const std::vector<std::size_t> bytes = problem.argument_bytes();
    if (layout.size() != bytes.size())
      throw Error(ErrorKind::invalid_argument, problem.name() + ": " + kernel.describe() +
                                                   " takes " + std::to_string(layout.size()) +
                                                   " parameter(s), but the problem gives " +
                                                   std::to_string(bytes.size()) + " argument(s)");
    for (std::size_t i = 0; i < bytes.size(); ++i)
      if (layout[i].bytes != bytes[i]) {
        const ProblemArgument& argument = problem.arguments()[i];
        throw Error(ErrorKind::invalid_argument,
                    problem.name() + ": argument " + std::to_string(i) + " '" + argument.name +
                        "' is " + std::to_string(bytes[i]) + " bytes (" +
                        (argument.kind == ProblemArgument::Kind::buffer
                             ? "a buffer's address"
                             : std::string(to_string(argument.type))) +
                        "), but parameter " + std::to_string(i) + " of " + kernel.describe() +
                        " is " + std::to_string(layout[i].bytes) + " bytes");
      }
  }

  // The outputs among `positions` downloaded: what the reference computed.
  void take_expected(const std::vector<std::size_t>& positions) {
    for (std::size_t position : positions) {
      const ProblemArgument& argument = problem.arguments()[position];
      if (!argument.is_output()) continue;
      ProblemData::Array array{argument.name, argument.type, {}};
      array.bytes.resize(buffers[position]->bytes());
      buffers[position]->download_bytes(array.bytes.data(), array.bytes.size());
      // An output checked by aggregates or a check kernel need not be written whole.
      if (is_floating(argument.type) && problem.verification().compares_elements_of(argument.name))
        for (std::size_t i = 0; i < array.count(); ++i)
          if (std::isnan(detail::element_value(
                  argument.type, array.bytes.data() + i * element_bytes(argument.type))))
            throw Error(ErrorKind::invalid_argument,
                        "it left " + argument.name + "[" + std::to_string(i) +
                            "] NaN: it does not write every element of its output (which was "
                            "poisoned with NaN), or computes NaN");
      expected.push_back(std::move(array));
    }
  }

  void run_reference_kernel() {
    const ReferenceKernel& reference = problem.verification().kernel;
    reference_name = "kernel " + reference.entry;
    const bool own = !reference.program;
    const Program& program = own ? problem.program() : *reference.program;
    const KernelProblem::ReferenceBuild build = problem.reference_build_at(sizes);
    reference_config = build.values;
    std::vector<std::size_t> positions;
    for (const std::string& name : reference.arguments) positions.push_back(index_of(name));
    if (positions.empty()) positions = all_positions();
    const Kernel kernel = module_of(program, build.options, own).kernel(reference.entry);
    restore();
    const PackedArguments packed = pack(build.values, positions);
    kernel.launch_untyped(
        problem.launch_at(reference.geometry, build.values, sizes, "verify.reference."),
        packed.pointers, packed.sizes);
    take_expected(positions);
  }

  void compute_reference() {
    const ProblemVerification& verification = problem.verification();
    switch (verification.kind) {
      case ProblemVerification::Kind::none:
        return;
      case ProblemVerification::Kind::reference_kernel:
        run_reference_kernel();
        return;
      case ProblemVerification::Kind::reference_config: {
        reference_name = "config " + verification.config.describe();
        reference_config = verification.config;
        const Kernel kernel = kernel_for(verification.config);
        restore();
        const PackedArguments packed = pack(verification.config, all_positions());
        kernel.launch_untyped(problem.launch_at(verification.config, sizes), packed.pointers,
                              packed.sizes);
        take_expected(all_positions());
        return;
      }
      case ProblemVerification::Kind::files: {
        reference_name = "the data files";
        expected = read_expected_files(problem, sizes).arrays;
        return;
      }
      case ProblemVerification::Kind::device_callback: {
        reference_name = "the device reference";
        restore();
        reference_name = verification.device_callback(device_view());
        take_expected(all_positions());
        return;
      }
      case ProblemVerification::Kind::callback: {
        reference_name = "the reference callback";
        ProblemData data = initial;
        for (const ProblemArgument& argument : problem.arguments())
          if (argument.role == ArgumentRole::output)
            std::fill(data.at(argument.name).bytes.begin(), data.at(argument.name).bytes.end(),
                      std::byte{0});
        verification.callback(data);
        for (const ProblemArgument& argument : problem.arguments())
          if (argument.is_output()) expected.push_back(data.at(argument.name));
        return;
      }
    }
  }

  struct Comparison {
    double max_error = 0.0;            // max |actual - expected|
    double worst_share = 0.0;          // max |actual - expected| / (atol + rtol × |expected|)
    std::optional<std::string> fault;  // the first element outside the tolerance
  };

  // The largest |expected| of each output, where rtol is relative to it: measured once, since
  // every config is compared with the same reference. By output; none where rtol is relative to
  // each element or the output's elements are not compared.
  std::vector<std::optional<double>> scales;
  // The last output read back, kept between configs: outputs of tens of millions of elements.
  std::vector<std::byte> read_back;

  void measure_scales() {
    const ProblemVerification& verification = problem.verification();
    scales.assign(expected.size(), std::nullopt);
    if (verification.relative_to != ProblemVerification::RelativeTo::largest) return;
    for (std::size_t index = 0; index < expected.size(); ++index)
      if (verification.compares_elements_of(expected[index].name))
        scales[index] = detail::largest_magnitude(expected[index].type, expected[index].bytes);
  }

  // The outputs the reference has against it.
  Comparison compare() {
    const double atol = problem.verification().atol, rtol = problem.verification().rtol;
    Comparison comparison;
    for (std::size_t index = 0; index < expected.size(); ++index) {
      const ProblemData::Array& reference = expected[index];
      if (!problem.verification().compares_elements_of(reference.name)) continue;
      read_back.resize(reference.bytes.size());
      buffers[index_of(reference.name)]->download_bytes(read_back.data(), read_back.size());
      const std::optional<double> scale = scales[index];
      const detail::ElementComparison elements =
          detail::compare_elements(reference.type, reference.bytes, read_back, atol, rtol, scale);
      comparison.max_error = std::max(comparison.max_error, elements.max_error);
      comparison.worst_share = std::max(comparison.worst_share, elements.worst_share);
      if (!comparison.fault)
        comparison.fault = detail::element_fault(reference.name, reference.type, elements, atol,
                                                 rtol, scale, reference_name);
    }
    return comparison;
  }

  // Whether a verified run has anything to check the config's outputs against.
  bool verifies() const { return !expected.empty() || (checks && checks->any()); }

  // Runs the generator kernel of the buffer argument at `position` on the data made so far, and
  // takes what it made into `data`.
  void generate(std::size_t position, ProblemData& data) {
    const ProblemArgument& target = problem.arguments()[position];
    const GeneratorKernel& generator = target.init.kernel;
    try {
      const TuningConfig fallback = problem.fallback_config(sizes);
      CompileOptions options = options_for(fallback);
      options.name_expressions = {generator.entry};
      const Kernel kernel = compile(problem.program(), options).kernel(generator.entry);
      const std::vector<std::string> names =
          generator.arguments.empty() ? std::vector<std::string>{target.name} : generator.arguments;
      std::vector<DeviceMemory> temporaries;
      temporaries.reserve(names.size());
      std::size_t made = 0;
      PackedArguments packed;
      for (const std::string& name : names) {
        const std::size_t at = index_of(name);
        if (problem.arguments()[at].kind != ProblemArgument::Kind::buffer) {
          packed.add(pack(fallback, {at}));
          continue;
        }
        const std::vector<std::byte>& bytes = data.at(name).bytes;
        if (at == position) made = temporaries.size();
        temporaries.emplace_back(context, bytes.size()).upload_bytes(bytes.data(), bytes.size());
        packed.add_address(temporaries.back().address());
      }
      packed.point();
      const std::string field = "arguments[" + std::to_string(position) + "].init.";
      kernel.launch_untyped(problem.launch_at(generator.geometry, fallback, sizes, field),
                            packed.pointers, packed.sizes);
      std::vector<std::byte>& bytes = data.at(target.name).bytes;
      temporaries[made].download_bytes(bytes.data(), bytes.size());
    } catch (const Error& error) {
      throw Error(error.kind(), problem.name() + ": the kernel " + generator.entry + " making " +
                                    target.name + " failed: " + error.what());
    }
  }

  // The check kernel in the fallback config's module: a misnamed one fails the session at once,
  // not every config.
  void find_check_kernel() {
    if (const std::optional<CheckKernel>& check = problem.verification().check)
      module_of(problem.program(), options_for(problem.fallback_config(sizes)), true)
          .kernel(check->entry);
  }

  // What the aggregates and the check kernel compare with, from the reference computed.
  void prepare_checks() {
    const ProblemVerification& verification = problem.verification();
    if (verification.aggregates.empty() && !verification.check) return;
    const bool reference_has_config =
        verification.kind == ProblemVerification::Kind::reference_kernel ||
        verification.kind == ProblemVerification::Kind::reference_config;
    checks.emplace(problem, sizes, context, expected, reference_name,
                   reference_has_config ? reference_config : problem.fallback_config(sizes));
  }

  // Every check of the outputs after `config` ran: element by element, then the aggregates, then
  // the check kernel.
  Comparison verify(const TuningConfig& config) {
    Comparison comparison = compare();
    if (!checks) return comparison;
    if (!comparison.fault)
      comparison.fault = checks->aggregates(config, [&](const std::string& output) {
        const std::size_t position = index_of(output);
        ProblemData::Array actual{output, problem.arguments()[position].type, {}};
        actual.bytes.resize(buffers[position]->bytes());
        buffers[position]->download_bytes(actual.bytes.data(), actual.bytes.size());
        return actual;
      });
    if (!comparison.fault && problem.verification().check) {
      const Kernel kernel = module_of(problem.program(), options_for(config), true)
                                .kernel(problem.verification().check->entry);
      comparison.fault = checks->check_kernel(
          kernel, config, [&](const std::string& name, detail::PackedArguments& packed) {
            const std::size_t position = index_of(name);
            if (buffers[position])
              packed.add_address(buffers[position]->address());
            else
              packed.add(pack(config, {position}));
          });
    }
    return comparison;
  }

  double work(const TuningConfig& config) const {
    if (problem.rate().unit.empty()) return 0.0;
    return static_cast<double>(problem.evaluate(problem.rate().work, sizes, config, "rate"));
  }
};

ProblemSession::ProblemSession(KernelProblem problem, ProblemSizes sizes, Jit& jit,
                               const Context& context)
    : state_(std::make_unique<State>(std::move(problem), std::move(sizes), jit, context)) {
  State& state = *state_;
  if (state.problem.launcher()) {
    state.restore();
    state.launch = state.problem.launcher()(state.device_view());
  } else {
    state.check_layout(state.kernel_for(state.problem.fallback_config(state.sizes)));
  }
  state.find_check_kernel();
  try {
    const auto start = std::chrono::steady_clock::now();
    state.compute_reference();
    state.prepare_checks();
    state.measure_scales();
    state.phases.reference_seconds = detail::seconds_since(start);
  } catch (const Error& error) {
    throw Error(error.kind(), state.problem.name() + ": the reference (" + state.reference_name +
                                  ") failed: " + error.what());
  }
  // A session that neither verifies nor has a launcher still times its configs on the inputs.
  if (state.restores == 0) state.restore();
}

ProblemSession::~ProblemSession() = default;

const KernelProblem& ProblemSession::problem() const noexcept { return state_->problem; }
const ProblemSizes& ProblemSession::sizes() const noexcept { return state_->sizes; }

std::optional<Measurement> ProblemSession::peer(const TimingPolicy& policy) {
  State& state = *state_;
  if (!state.problem.peer()) return std::nullopt;
  state.restore();
  const std::optional<ProblemPeerRun> peer = state.problem.peer()(state.device_view());
  if (!peer) return std::nullopt;
  const TimingResult timing =
      time_samples(policy, std::nullopt, [&] { return state.timer.sample(peer->run, policy.l2); });
  Measurement measurement =
      timed_measurement(timing, state.work(state.problem.fallback_config(state.sizes)),
                        state.problem.rate().unit_scale, state.problem.rate().unit);
  measurement.detail = peer->description;
  return measurement;
}

Measurement ProblemSession::measure(const TuningConfig& config, const TimingPolicy& policy,
                                    std::optional<double> best_ms) {
  State& state = *state_;
  const std::function<void()> run = state.runner(config);
  double max_error = 0.0;
  if (state.verifies()) {
    const auto start = std::chrono::steady_clock::now();
    state.restore();
    run();
    const State::Comparison comparison = state.verify(config);
    state.phases.verification_seconds += detail::seconds_since(start);
    if (comparison.fault) {
      Measurement wrong;
      wrong.status = MeasurementStatus::wrong;
      wrong.max_error = comparison.max_error;
      wrong.detail = *comparison.fault;
      return wrong;
    }
    max_error = comparison.max_error;
  }
  const auto timing_start = std::chrono::steady_clock::now();
  const TimingResult timing =
      time_samples(policy, best_ms, [&] { return state.timer.sample(run, policy.l2); });
  state.phases.timing_seconds += detail::seconds_since(timing_start);
  Measurement measurement = timed_measurement(
      timing, state.work(config), state.problem.rate().unit_scale, state.problem.rate().unit);
  measurement.max_error = max_error;
  if (measurement.status != MeasurementStatus::ok) return measurement;
  if (policy.observe_power) {
    if (!state.nvml) state.nvml.emplace(state.context.device(), "observing power");
    measurement.power = detail::observe_power(*state.nvml, state.timer, state.context.device(), run,
                                              measurement.median_ms, policy);
  }
  measurement.config = config;
  measurement.metrics = metric_values(state.problem, state.sizes, measurement);
  return measurement;
}

TunePhases ProblemSession::phases() const { return state_->phases; }

ProblemSession::Run ProblemSession::run(const TuningConfig& config, int repeats, bool verify) {
  State& state = *state_;
  Run result;
  const std::function<void()> run = state.runner(config);
  result.launch = state.problem.launch_at(config, state.sizes);
  if (verify && state.verifies()) {
    state.restore();
    run();
    const State::Comparison comparison = state.verify(config);
    result.verified = true;
    result.passed = !comparison.fault;
    result.max_error = comparison.max_error;
    result.worst_share = comparison.worst_share;
    result.detail = comparison.fault.value_or("");
  }
  std::vector<double> samples;
  state.timer.sample(run);  // the warm-up
  for (int i = 0; i < repeats; ++i) samples.push_back(state.timer.sample(run));
  std::sort(samples.begin(), samples.end());
  result.median_ms = samples.empty() ? 0.0 : samples[samples.size() / 2];
  result.rate_unit = state.problem.rate().unit;
  if (result.median_ms > 0.0 && !result.rate_unit.empty())
    result.rate = state.work(config) / (result.median_ms * 1e-3) / state.problem.rate().unit_scale;
  return result;
}

ProblemMeasurer::ProblemMeasurer(KernelProblem problem, ProblemSizes sizes, Jit& jit,
                                 const Context& context, TimingPolicy policy)
    : session_(std::move(problem), std::move(sizes), jit, context), policy_(policy) {}

Measurement ProblemMeasurer::measure(const Candidate& candidate, std::optional<double> best_ms) {
  try {
    return session_.measure(candidate.config, policy_, best_ms);
  } catch (const std::exception& error) {
    Measurement failed;
    failed.config = candidate.config;
    failed.status = MeasurementStatus::failed;
    failed.detail = error.what();
    return failed;
  }
}

}  // namespace ptxrt
