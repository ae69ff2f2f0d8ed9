#include "tune/output_checks.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "support/quoted.hpp"
#include "tune/problem_checks.hpp"

namespace ptxrt::detail {

namespace {

constexpr std::string_view reference_prefix = "reference.";

std::string aggregate_field(std::size_t index) {
  return "verify.aggregates[" + std::to_string(index) + "]";
}

const ProblemData::Array& output_of(const std::vector<ProblemData::Array>& reference,
                                    const std::string& output, const std::string& reference_name,
                                    const std::string& field) {
  for (const ProblemData::Array& array : reference)
    if (array.name == output) return array;
  throw Error(ErrorKind::invalid_argument, field + ": " + reference_name + " gives no " + output);
}

}  // namespace

OutputChecks::OutputChecks(const KernelProblem& problem, const ProblemSizes& sizes,
                           const Context& context, const std::vector<ProblemData::Array>& reference,
                           std::string reference_name, const TuningConfig& reference_config)
    : problem_(problem), sizes_(sizes), reference_name_(std::move(reference_name)) {
  const ProblemVerification& verification = problem.verification();
  for (std::size_t i = 0; i < verification.aggregates.size(); ++i) {
    const OutputAggregate& check = verification.aggregates[i];
    double value = std::numeric_limits<double>::quiet_NaN();
    if (!check.expected && !check.expected_number) {
      const ProblemData::Array& output =
          output_of(reference, check.output, reference_name_, aggregate_field(i));
      const std::uint64_t length =
          prefix_length(check, reference_config, output, aggregate_field(i));
      value = aggregate_of(check.aggregate, output.type, output.bytes, length);
      if (std::isnan(value))
        throw Error(ErrorKind::invalid_argument,
                    "its " + std::string(to_string(check.aggregate)) + " of " + check.output +
                        "[0:" + std::to_string(length) +
                        "] is NaN: it does not write that much of its output (which was poisoned "
                        "with NaN), or computes NaN");
    }
    reference_aggregates_.push_back(value);
  }
  if (!verification.check) return;
  for (const std::string& name : verification.check->arguments) {
    if (!name.starts_with(reference_prefix)) continue;
    const ProblemData::Array& output = output_of(reference, name.substr(reference_prefix.size()),
                                                 reference_name_, "verify.check.arguments");
    DeviceMemory copy(context, output.bytes.size());
    copy.upload_bytes(output.bytes.data(), output.bytes.size());
    reference_copies_.emplace_back(name, std::move(copy));
  }
  verdict_.emplace(context, sizeof(std::int32_t) + sizeof(float));
}

bool OutputChecks::any() const noexcept {
  return !reference_aggregates_.empty() || verdict_.has_value();
}

std::uint64_t OutputChecks::prefix_length(const OutputAggregate& check, const TuningConfig& config,
                                          const ProblemData::Array& output,
                                          const std::string& field) const {
  if (!check.length) return output.count();
  const std::int64_t length = problem_.evaluate(*check.length, sizes_, config, field + ".length");
  if (length < 0 || static_cast<std::uint64_t>(length) > output.count())
    throw Error(ErrorKind::invalid_argument,
                problem_.origin() + ": " + field + ".length: " + std::to_string(length) + " at " +
                    config.describe() + " is not from 0 to " + output.name + "'s " +
                    std::to_string(output.count()) + " element(s)");
  return static_cast<std::uint64_t>(length);
}

std::optional<std::string> OutputChecks::aggregates(const TuningConfig& config,
                                                    const OutputReader& read) const {
  const ProblemVerification& verification = problem_.verification();
  for (std::size_t i = 0; i < verification.aggregates.size(); ++i) {
    const OutputAggregate& check = verification.aggregates[i];
    const ProblemData::Array actual = read(check.output);
    const std::uint64_t length = prefix_length(check, config, actual, aggregate_field(i));
    const double got = aggregate_of(check.aggregate, actual.type, actual.bytes, length);
    double want = reference_aggregates_[i];
    std::string against = reference_name_;
    if (check.expected_number) {
      want = *check.expected_number;
      against = "as given";
    } else if (check.expected) {
      want = static_cast<double>(
          problem_.evaluate(*check.expected, sizes_, config, aggregate_field(i) + ".expected"));
      against = detail::quoted(check.expected->text());
    }
    if (std::optional<std::string> fault =
            aggregate_fault(check, length, got, want, check.atol.value_or(verification.atol),
                            check.rtol.value_or(verification.rtol), against))
      return fault;
  }
  return std::nullopt;
}

std::optional<std::string> OutputChecks::check_kernel(const Kernel& kernel,
                                                      const TuningConfig& config,
                                                      const ArgumentPacker& add_argument) {
  const CheckKernel& check = *problem_.verification().check;
  PackedArguments packed;
  for (const std::string& name : check.arguments) {
    const auto copy = std::find_if(reference_copies_.begin(), reference_copies_.end(),
                                   [&](const auto& named) { return named.first == name; });
    if (copy == reference_copies_.end())
      add_argument(name, packed);
    else
      packed.add_address(copy->second.address());
  }
  packed.add_address(verdict_->address());
  packed.add_address(verdict_->address() + sizeof(std::int32_t));
  packed.point();
  // 0 before it runs: a kernel that only reports failures (an atomicOr) passes by saying nothing.
  verdict_->fill_bytes(0);
  kernel.launch_untyped(problem_.launch_at(check.geometry, config, sizes_, "verify.check."),
                        packed.pointers, packed.sizes);
  std::array<std::byte, sizeof(std::int32_t) + sizeof(float)> result{};
  verdict_->download_bytes(result.data(), result.size());
  std::int32_t verdict = 0;
  float error = 0.0f;
  std::memcpy(&verdict, result.data(), sizeof verdict);
  std::memcpy(&error, result.data() + sizeof verdict, sizeof error);
  if (verdict == 0) return std::nullopt;
  return "the check kernel " + check.entry + " gave verdict " + std::to_string(verdict) +
         ", error " + number_text(error);
}

}  // namespace ptxrt::detail
