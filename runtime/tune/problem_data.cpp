// A tuning problem's data: element types, how data starts out (DataInit), the sizes, and
// make_problem_data, which makes the buffers and symbols as their DataInit says.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>

#include "ptxrt/kernel_problem.hpp"
#include "ptxrt/manifest.hpp"

namespace ptxrt {

namespace {

constexpr std::pair<ElementType, std::string_view> type_names[] = {
    {ElementType::int8, "int8"},     {ElementType::int16, "int16"},
    {ElementType::int32, "int32"},   {ElementType::int64, "int64"},
    {ElementType::uint8, "uint8"},   {ElementType::uint16, "uint16"},
    {ElementType::uint32, "uint32"}, {ElementType::uint64, "uint64"},
    {ElementType::float32, "float"}, {ElementType::float64, "double"},
};

constexpr std::pair<std::string_view, ElementType> type_aliases[] = {
    {"int", ElementType::int32},
    {"unsigned", ElementType::uint32},
    {"uint", ElementType::uint32},
    {"float32", ElementType::float32},
    {"float64", ElementType::float64},
};

std::string join(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : ", ") + word;
  return text.empty() ? "none" : text;
}

// `value` stored as `type` at `destination`; integers are rounded towards zero, as C converts.
void store(ElementType type, double value, std::byte* destination) {
  const auto put = [&](auto converted) { std::memcpy(destination, &converted, sizeof converted); };
  switch (type) {
    case ElementType::int8:
      return put(static_cast<std::int8_t>(value));
    case ElementType::int16:
      return put(static_cast<std::int16_t>(value));
    case ElementType::int32:
      return put(static_cast<std::int32_t>(value));
    case ElementType::int64:
      return put(static_cast<std::int64_t>(value));
    case ElementType::uint8:
      return put(static_cast<std::uint8_t>(value));
    case ElementType::uint16:
      return put(static_cast<std::uint16_t>(value));
    case ElementType::uint32:
      return put(static_cast<std::uint32_t>(value));
    case ElementType::uint64:
      return put(static_cast<std::uint64_t>(value));
    case ElementType::float32:
      return put(static_cast<float>(value));
    case ElementType::float64:
      return put(value);
  }
}

std::vector<std::byte> read_data_file(const std::filesystem::path& file, std::size_t bytes,
                                      const std::string& what) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(ErrorKind::io, what + ": cannot read data file " + file.string());
  std::vector<std::byte> data(bytes);
  in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(bytes));
  const auto got = static_cast<std::size_t>(in.gcount());
  const bool longer = in.peek() != std::char_traits<char>::eof();
  if (got != bytes || longer)
    throw Error(ErrorKind::invalid_argument,
                what + ": data file " + file.string() + " has " +
                    (longer ? "more than " + std::to_string(bytes) : std::to_string(got)) +
                    " bytes, expected " + std::to_string(bytes));
  return data;
}

ProblemData::Array make_array(const std::string& name, ElementType type, std::int64_t count,
                              const DataInit& init, std::uint64_t position, const std::string& what) {
  if (count < 1)
    throw Error(ErrorKind::invalid_argument,
                what + ": count " + std::to_string(count) + " (a buffer needs at least 1 element)");
  const std::size_t elements = static_cast<std::size_t>(count);
  const std::size_t size = element_bytes(type);
  ProblemData::Array array{name, type, {}};
  if (init.kind == DataInit::Kind::file) {
    array.bytes = read_data_file(init.file, elements * size, what);
    return array;
  }
  array.bytes.resize(elements * size);
  std::mt19937_64 generator(init.seed != 0 ? init.seed : position + 1);
  std::uniform_real_distribution<double> uniform(init.low, init.high);
  std::normal_distribution<double> normal(init.mean, init.deviation);
  for (std::size_t i = 0; i < elements; ++i) {
    double value = 0.0;
    switch (init.kind) {
      case DataInit::Kind::zeros:
      case DataInit::Kind::file:
        break;
      case DataInit::Kind::constant:
        value = init.value;
        break;
      case DataInit::Kind::iota:
        value = init.value + init.step * static_cast<double>(i);
        break;
      case DataInit::Kind::uniform:
        value = uniform(generator);
        break;
      case DataInit::Kind::normal:
        value = normal(generator);
        break;
    }
    // Integers from a continuous distribution: its floor, so uniform(0, 10) gives 0..9.
    if (!is_floating(type)) value = std::floor(value);
    store(type, value, array.bytes.data() + i * size);
  }
  return array;
}

}  // namespace

std::string_view to_string(ElementType type) {
  for (const auto& [value, name] : type_names)
    if (value == type) return name;
  return "unknown";
}

ElementType parse_element_type(std::string_view name) {
  for (const auto& [value, spelling] : type_names)
    if (spelling == name) return value;
  for (const auto& [spelling, value] : type_aliases)
    if (spelling == name) return value;
  std::string known;
  for (const auto& [value, spelling] : type_names) known += (known.empty() ? "" : ", ") + std::string(spelling);
  throw Error(ErrorKind::invalid_argument,
              "type '" + std::string(name) + "' is unknown: expected one of " + known);
}

std::size_t element_bytes(ElementType type) {
  switch (type) {
    case ElementType::int8:
    case ElementType::uint8:
      return 1;
    case ElementType::int16:
    case ElementType::uint16:
      return 2;
    case ElementType::int32:
    case ElementType::uint32:
    case ElementType::float32:
      return 4;
    case ElementType::int64:
    case ElementType::uint64:
    case ElementType::float64:
      return 8;
  }
  return 0;
}

bool is_floating(ElementType type) {
  return type == ElementType::float32 || type == ElementType::float64;
}

DataInit DataInit::constant(double value) {
  DataInit init;
  init.kind = Kind::constant;
  init.value = value;
  return init;
}

DataInit DataInit::iota(double first, double step) {
  DataInit init;
  init.kind = Kind::iota;
  init.value = first;
  init.step = step;
  return init;
}

DataInit DataInit::uniform(double low, double high, std::uint64_t seed) {
  DataInit init;
  init.kind = Kind::uniform;
  init.low = low;
  init.high = high;
  init.seed = seed;
  return init;
}

DataInit DataInit::normal(double mean, double deviation, std::uint64_t seed) {
  DataInit init;
  init.kind = Kind::normal;
  init.mean = mean;
  init.deviation = deviation;
  init.seed = seed;
  return init;
}

DataInit DataInit::from_file(std::filesystem::path file) {
  DataInit init;
  init.kind = Kind::file;
  init.file = std::move(file);
  return init;
}

const ProblemData::Array& ProblemData::at(std::string_view name) const {
  return const_cast<ProblemData*>(this)->at(name);
}

ProblemData::Array& ProblemData::at(std::string_view name) {
  std::vector<std::string> names;
  for (Array& array : arrays) {
    if (array.name == name) return array;
    names.push_back(array.name);
  }
  throw Error(ErrorKind::not_found,
              "the problem has no data named '" + std::string(name) + "' (it has: " + join(names) + ")");
}

void ProblemData::throw_type_mismatch(const Array& array, ElementType asked) {
  throw Error(ErrorKind::invalid_argument, "'" + array.name + "' holds " +
                                               std::string(to_string(array.type)) + ", not " +
                                               std::string(to_string(asked)));
}

ProblemSizes parse_problem_sizes(std::string_view text) {
  ProblemSizes sizes;
  for (std::string_view rest = text; !rest.empty();) {
    const std::size_t comma = rest.find(',');
    const std::string_view part = rest.substr(0, comma);
    rest.remove_prefix(comma == std::string_view::npos ? rest.size() : comma + 1);
    const std::size_t equals = part.find('=');
    const std::string name(part.substr(0, equals));
    const std::string_view number =
        equals == std::string_view::npos ? std::string_view() : part.substr(equals + 1);
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (!is_identifier(name) || equals == std::string_view::npos)
      throw Error(ErrorKind::invalid_argument, "size '" + std::string(part) +
                                                   "': expected NAME=VALUE, as in W=4096,H=4096");
    if (error != std::errc() || end != number.data() + number.size() || value < 1 ||
        value > (std::int64_t{1} << 62))
      throw Error(ErrorKind::invalid_argument, "size '" + std::string(part) + "': '" +
                                                   std::string(number) +
                                                   "' is not a whole number from 1 to 2^62");
    if (!sizes.emplace(name, value).second)
      throw Error(ErrorKind::invalid_argument, "size " + name + " is given twice in '" +
                                                   std::string(text) + "'");
  }
  if (sizes.empty())
    throw Error(ErrorKind::invalid_argument, "no size given: expected NAME=VALUE[,NAME=VALUE...]");
  return sizes;
}

std::string format_problem_sizes(const ProblemSizes& sizes) {
  std::string text;
  for (const auto& [name, value] : sizes)
    text += (text.empty() ? "" : ",") + name + "=" + std::to_string(value);
  return text;
}

ProblemData make_problem_data(const KernelProblem& problem, const ProblemSizes& sizes) {
  ProblemData data;
  std::uint64_t position = 0;
  for (const ProblemArgument& argument : problem.arguments()) {
    ++position;
    if (argument.kind != ProblemArgument::Kind::buffer) continue;
    const std::string what = problem.name() + ": argument " + argument.name;
    data.arrays.push_back(make_array(
        argument.name, argument.type,
        problem.evaluate(*argument.count, sizes, {}, "arguments." + argument.name + ".count"),
        argument.init, position, what));
  }
  for (const ProblemSymbol& symbol : problem.symbols()) {
    ++position;
    if (!symbol.from_argument.empty()) continue;
    const std::string what = problem.name() + ": symbol " + symbol.name;
    data.arrays.push_back(make_array(
        symbol.name, symbol.type,
        problem.evaluate(*symbol.count, sizes, {}, "symbols." + symbol.name + ".count"),
        symbol.init, position, what));
  }
  return data;
}

ProblemData read_expected_files(const KernelProblem& problem, const ProblemSizes& sizes) {
  ProblemData expected;
  for (const auto& entry : problem.verification().files) {
    const std::string& output = entry.first;  // a lambda captures it: no structured binding
    const auto& file = entry.second;
    const auto found = std::find_if(problem.arguments().begin(), problem.arguments().end(),
                                    [&](const ProblemArgument& a) { return a.name == output; });
    const std::int64_t count =
        problem.evaluate(*found->count, sizes, {}, "arguments." + output + ".count");
    expected.arrays.push_back(make_array(output, found->type, count, DataInit::from_file(file), 0,
                                         problem.name() + ": verify.files." + output));
  }
  return expected;
}

}  // namespace ptxrt
