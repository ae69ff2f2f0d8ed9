// What a session checks of a config's outputs besides the element-wise comparison: the
// aggregates of verify.aggregates and the check kernel of verify.check, prepared once from the
// reference and then run after each verified run.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ptxrt/core/kernel.hpp"
#include "ptxrt/core/memory.hpp"
#include "ptxrt/tune/kernel_problem.hpp"
#include "tune/packed_arguments.hpp"

namespace ptxrt::detail {

class OutputChecks {
 public:
  // The reference's aggregates and the device copies of the reference outputs the check kernel
  // reads. `reference`: the outputs it computed, named in messages by `reference_name`; its
  // aggregate lengths read `reference_config`. Throws Error for a reference aggregate that is
  // NaN (a reference that leaves part of the prefix unwritten) or an output it does not give.
  OutputChecks(const KernelProblem& problem, const ProblemSizes& sizes, const Context& context,
               const std::vector<ProblemData::Array>& reference, std::string reference_name,
               const TuningConfig& reference_config);

  bool any() const noexcept;

  // The first aggregate outside its tolerance after `config` ran; `read` downloads an output.
  using OutputReader = std::function<ProblemData::Array(const std::string& output)>;
  std::optional<std::string> aggregates(const TuningConfig& config, const OutputReader& read) const;

  // The check kernel's verdict: `kernel` (compiled with `config`) given the arguments it names,
  // `add_argument` packing a problem argument as the config's run left it.
  using ArgumentPacker = std::function<void(const std::string& name, PackedArguments& packed)>;
  std::optional<std::string> check_kernel(const Kernel& kernel, const TuningConfig& config,
                                          const ArgumentPacker& add_argument);

 private:
  std::uint64_t prefix_length(const OutputAggregate& check, const TuningConfig& config,
                              const ProblemData::Array& output, const std::string& field) const;

  const KernelProblem& problem_;
  const ProblemSizes& sizes_;
  std::string reference_name_;
  std::vector<double> reference_aggregates_;  // by aggregate; NaN where a value is expected
  std::vector<std::pair<std::string, DeviceMemory>> reference_copies_;  // "reference.NAME"
  std::optional<DeviceMemory> verdict_;  // the int verdict, then the float error
};

}  // namespace ptxrt::detail
