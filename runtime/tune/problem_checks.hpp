// The parts of a tuning problem that Kernel Tuner's users bring beyond element-wise comparison:
// aggregates over an output, a check kernel, and data made from other data (derived buffers,
// offsets, generator kernels). Their validation, the order data is made in, and the pure
// functions a session verifies with, apart so that they are tested without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "ptxrt/export.hpp"
#include "ptxrt/tune/kernel_problem.hpp"

namespace ptxrt::detail {

// The name expression (an entry, or "&variable") that NVRTC could not resolve, when that is what
// made a compile fail: its log says `Input name expression was: " x"`. Nothing for any other
// error.
PTXRT_API std::optional<std::string> unresolved_name(const Error& error);

// An element of `type` at `at` as a double (64-bit integers rounded to the nearest double).
PTXRT_API double element_value(ElementType type, const std::byte* at);

// The largest |element| of `elements` (whole elements of `type`), NaN counting as none.
PTXRT_API double largest_magnitude(ElementType type, std::span<const std::byte> elements);

// `actual` against `expected` (the same count of elements of `type`), element by element: the
// largest |actual - expected| (infinite at a NaN), the largest share of its allowance
// atol + rtol × (|expected|, or `scale` for every element where one is given) an error takes
// (infinite where the allowance is 0 and the error is not), and the first element outside the
// allowance with both values. One pass over typed values: a session verifies every config this
// way, and outputs of tens of millions of elements are common.
struct ElementComparison {
  double max_error = 0.0;
  double worst_share = 0.0;
  std::optional<std::uint64_t> first_fault;
  double fault_actual = 0.0;
  double fault_expected = 0.0;
};
PTXRT_API ElementComparison compare_elements(ElementType type, std::span<const std::byte> expected,
                                             std::span<const std::byte> actual, double atol,
                                             double rtol, std::optional<double> scale);

// Why `output` fails where `comparison` found its first element outside the allowance ("y[2] =
// 2.003, expected 2 (config BLOCK=64): outside atol 0 + rtol 0.001 x |expected|"), each value in
// the shortest text that reads back as the output's type (a float's 2.003, not the 2.00300002...
// of its double), so that two values that differ never read the same; nothing when none failed.
PTXRT_API std::optional<std::string> element_fault(const std::string& output, ElementType type,
                                                   const ElementComparison& comparison, double atol,
                                                   double rtol, std::optional<double> scale,
                                                   const std::string& reference_name);

// The aggregate of the first `length` elements of `elements` (whole elements of `type`; length
// at most their count): sum, min and max are NaN when any element is, count counts NaN as not
// 0; min and max of no element are NaN.
PTXRT_API double aggregate_of(Aggregate aggregate, ElementType type,
                              std::span<const std::byte> elements, std::uint64_t length);

// Why `actual` fails against `expected` within atol + rtol × |expected|, naming the check
// ("sum of partial[0:12] = 3.5, expected 4 (config BLOCK=64): outside atol 0.001 + rtol 0 x
// |expected|"), or nothing when it passes.
PTXRT_API std::optional<std::string> aggregate_fault(const OutputAggregate& check,
                                                     std::uint64_t length, double actual,
                                                     double expected, double atol, double rtol,
                                                     const std::string& reference_name);

// Whether the expressions of a field may read the tunables.
enum class NameScope { fixed, with_config };
// Checks that `expression`'s names are known in `scope`, throwing Error naming `field`.
using NameCheck =
    std::function<void(const Expression& expression, const std::string& field, NameScope scope)>;
// The aggregates, the check kernel and the data made from other data: every name they use
// exists and is of the right kind, no data is made from itself. Throws Error (invalid_argument)
// naming the problem and the field.
PTXRT_API void validate_checks_and_sources(const KernelProblem& problem,
                                           const NameCheck& check_names);

// The buffer arguments whose data `init` is made from (by position), besides its own.
std::vector<std::size_t> data_sources(const KernelProblem& problem, const DataInit& init,
                                      std::size_t own_position);

// The buffer arguments by position in an order that makes each after the buffers it is made
// from. Throws Error (invalid_argument) naming a cycle ("arguments[0].init: its data is made from
// itself: x -> noisy -> x").
PTXRT_API std::vector<std::size_t> making_order(const KernelProblem& problem);

// `count` offsets non-decreasing from 0 to `total`, seeded: what DataInit::offsets makes.
PTXRT_API std::vector<std::uint64_t> sorted_offsets(std::uint64_t count, std::uint64_t total,
                                                    std::mt19937_64& generator);

// `source`'s first count elements plus uniform noise in [-noise, noise], their absolute values
// when `absolute`: what DataInit::derived makes, before conversion to the buffer's type.
PTXRT_API std::vector<double> derived_values(const ProblemData::Array& source, std::uint64_t count,
                                             const DataInit& init, std::mt19937_64& generator);

// Makes the data of a buffer argument whose init is a kernel, given the data made so far (its
// sources among it), writing it into data.at(its name).
using DataGenerator = std::function<void(std::size_t position, ProblemData& data)>;
// make_problem_data, with `generate` making what kernels make (without it, zeros), each item
// after the buffers it is made from.
PTXRT_API ProblemData make_problem_data_with(const KernelProblem& problem,
                                             const ProblemSizes& sizes, std::uint64_t memory_bytes,
                                             const DataGenerator& generate);

}  // namespace ptxrt::detail
