// Data made from other data: a buffer derived from another (with noise, absolute), offsets with
// a given total (a CSR matrix's row offsets), and data a kernel makes on the GPU.
#include <algorithm>
#include <cmath>

#include "tune/problem_checks.hpp"

namespace ptxrt {

DataInit DataInit::derived(std::string source, double noise, std::uint64_t seed) {
  DataInit init;
  init.kind = Kind::derived;
  init.source = std::move(source);
  init.noise = noise;
  init.seed = seed;
  return init;
}

DataInit DataInit::absolute_of(std::string source, double noise, std::uint64_t seed) {
  DataInit init = derived(std::move(source), noise, seed);
  init.absolute = true;
  return init;
}

DataInit DataInit::offsets(std::string_view total, std::uint64_t seed) {
  DataInit init;
  init.kind = Kind::offsets;
  try {
    init.total = Expression::parse(total);
  } catch (const Error& error) {
    throw Error(ErrorKind::invalid_argument, std::string("total: ") + error.what());
  }
  init.seed = seed;
  return init;
}

DataInit DataInit::generated(GeneratorKernel kernel) {
  DataInit init;
  init.kind = Kind::kernel;
  init.kernel = std::move(kernel);
  return init;
}

namespace detail {

std::vector<std::uint64_t> sorted_offsets(std::uint64_t count, std::uint64_t total,
                                          std::mt19937_64& generator) {
  std::vector<std::uint64_t> offsets(count, 0);
  if (count < 2) return offsets;
  // The inner offsets drawn uniformly and sorted: the rows' lengths then sum to the total by
  // construction, and vary as a sparse matrix's do.
  std::uniform_int_distribution<std::uint64_t> pick(0, total);
  for (std::uint64_t i = 1; i + 1 < count; ++i) offsets[i] = pick(generator);
  offsets.back() = total;
  std::sort(offsets.begin() + 1, offsets.end() - 1);
  return offsets;
}

std::vector<double> derived_values(const ProblemData::Array& source, std::uint64_t count,
                                   const DataInit& init, std::mt19937_64& generator) {
  std::vector<double> values(count);
  const std::size_t size = element_bytes(source.type);
  std::uniform_real_distribution<double> noise(-init.noise, init.noise);
  for (std::uint64_t i = 0; i < count; ++i) {
    double value = element_value(source.type, source.bytes.data() + i * size);
    if (init.noise > 0.0) value += noise(generator);
    values[i] = init.absolute ? std::abs(value) : value;
  }
  return values;
}

}  // namespace detail

}  // namespace ptxrt
