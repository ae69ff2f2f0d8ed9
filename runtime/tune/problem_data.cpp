// A tuning problem's data: element types, how data starts out (DataInit), and
// make_problem_data, which makes the buffers and symbols as their DataInit says.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <random>
#include <type_traits>

#include "ptxrt/core/manifest.hpp"
#include "ptxrt/tune/kernel_problem.hpp"
#include "support/checked_size.hpp"
#include "support/quoted.hpp"
#include "support/regular_file.hpp"
#include "tune/problem_checks.hpp"

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
    {"int", ElementType::int32},       {"unsigned", ElementType::uint32},
    {"uint", ElementType::uint32},     {"float32", ElementType::float32},
    {"float64", ElementType::float64},
};

std::string join(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : ", ") + word;
  return text.empty() ? "none" : text;
}

template <typename Integer>
std::pair<double, double> range_of() {
  return {static_cast<double>(std::numeric_limits<Integer>::lowest()),
          static_cast<double>(std::numeric_limits<Integer>::max())};
}

// The values an integer element type holds, as doubles.
std::pair<double, double> integer_range(ElementType type) {
  switch (type) {
    case ElementType::int8:
      return range_of<std::int8_t>();
    case ElementType::int16:
      return range_of<std::int16_t>();
    case ElementType::int32:
      return range_of<std::int32_t>();
    case ElementType::int64:
      return range_of<std::int64_t>();
    case ElementType::uint8:
      return range_of<std::uint8_t>();
    case ElementType::uint16:
      return range_of<std::uint16_t>();
    case ElementType::uint32:
      return range_of<std::uint32_t>();
    case ElementType::uint64:
      return range_of<std::uint64_t>();
    case ElementType::float32:
    case ElementType::float64:
      break;
  }
  return range_of<double>();
}

// `value` converted as C converts (integers rounded towards zero), but saturating where C's
// conversion is undefined: beyond the type's range, and NaN (0) for an integer.
template <typename T>
T saturated(double value) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(std::clamp(value,
                                     -static_cast<double>(std::numeric_limits<T>::infinity()),
                                     static_cast<double>(std::numeric_limits<T>::infinity())));
  } else {
    if (std::isnan(value)) return 0;
    if (value <= static_cast<double>(std::numeric_limits<T>::lowest()))
      return std::numeric_limits<T>::lowest();
    if (value >= static_cast<double>(std::numeric_limits<T>::max()))
      return std::numeric_limits<T>::max();
    return static_cast<T>(value);
  }
}

void store(ElementType type, double value, std::byte* destination) {
  const auto put = [&](auto converted) { std::memcpy(destination, &converted, sizeof converted); };
  switch (type) {
    case ElementType::int8:
      return put(saturated<std::int8_t>(value));
    case ElementType::int16:
      return put(saturated<std::int16_t>(value));
    case ElementType::int32:
      return put(saturated<std::int32_t>(value));
    case ElementType::int64:
      return put(saturated<std::int64_t>(value));
    case ElementType::uint8:
      return put(saturated<std::uint8_t>(value));
    case ElementType::uint16:
      return put(saturated<std::uint16_t>(value));
    case ElementType::uint32:
      return put(saturated<std::uint32_t>(value));
    case ElementType::uint64:
      return put(saturated<std::uint64_t>(value));
    case ElementType::float32:
      return put(saturated<float>(value));
    case ElementType::float64:
      return put(value);
  }
}

// One buffer or symbol with data of its own (or an expected output) at given sizes, its bytes
// checked: what check_problem_data and make_problem_data share.
struct DataItem {
  std::string name;
  ElementType type = ElementType::float32;
  DataInit init;
  std::string field;  // "arguments[0]", "symbols[1]", "verify.files.out": where messages point
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
  std::uint64_t position = 0;  // the seed of random data when it has none of its own
  std::uint64_t total = 0;     // offsets: the last one
};

class DataPlan {
 public:
  DataPlan(const KernelProblem& problem, const ProblemSizes& sizes)
      : problem_(problem), sizes_(sizes), origin_(problem.origin()) {}

  [[noreturn]] void refuse(ErrorKind kind, const std::string& field,
                           const std::string& what) const {
    throw Error(kind, origin_ + ": " + field + ": " + what);
  }

  // The item `count_of` counts, its count from 1 up and its bytes without overflow.
  DataItem item(std::string name, ElementType type, DataInit init, std::string field,
                const Expression& count_of, std::uint64_t position) const {
    const std::int64_t count = problem_.evaluate(count_of, sizes_, {}, field + ".count");
    const std::string elements =
        std::to_string(count) + " " + std::string(to_string(type)) + " element(s)";
    if (count < 1)
      refuse(ErrorKind::invalid_argument, field + ".count",
             elements + ": a buffer needs at least 1");
    const std::optional<std::uint64_t> bytes =
        detail::checked_product(static_cast<std::uint64_t>(count), element_bytes(type));
    if (!bytes)
      refuse(ErrorKind::invalid_argument, field + ".count",
             elements + " take more than 2^64 bytes");
    const std::uint64_t total =
        init.kind == DataInit::Kind::offsets
            ? offsets_total(type, init, field, static_cast<std::uint64_t>(count))
            : 0;
    return {std::move(name),
            type,
            std::move(init),
            std::move(field),
            static_cast<std::uint64_t>(count),
            *bytes,
            position,
            total};
  }

  // The total of offsets: from 0 to the type's largest value, and 0 for a single offset (which is
  // both the first, 0, and the last).
  std::uint64_t offsets_total(ElementType type, const DataInit& init, const std::string& field,
                              std::uint64_t count) const {
    const std::int64_t total = problem_.evaluate(*init.total, sizes_, {}, field + ".total");
    const double highest = integer_range(type).second;
    if (total < 0 || static_cast<double>(total) > highest)
      refuse(ErrorKind::invalid_argument, field + ".total",
             std::to_string(total) + " is not from 0 to " + detail::number_text(highest) +
                 ", the " + std::string(to_string(type)) + " offsets' range");
    if (count == 1 && total != 0)
      refuse(ErrorKind::invalid_argument, field + ".total",
             "a single offset is 0, so it cannot total " + std::to_string(total));
    return static_cast<std::uint64_t>(total);
  }

  // A derived item's source holds at least as many elements as it.
  void check_source(const DataItem& derived, const std::vector<DataItem>& items) const {
    for (const DataItem& source : items)
      if (source.name == derived.init.source) {
        if (source.count < derived.count)
          refuse(ErrorKind::invalid_argument, derived.field + ".source",
                 detail::quoted(source.name) + " has " + std::to_string(source.count) +
                     " element(s), fewer than the " + std::to_string(derived.count) +
                     " made from it");
        return;
      }
  }

  // The problem's buffers and symbols with data of their own, together within `memory_bytes`.
  std::vector<DataItem> items(std::uint64_t memory_bytes) const {
    std::vector<DataItem> items;
    std::uint64_t position = 0;
    std::uint64_t total = 0;
    const auto add = [&](DataItem item) {
      const std::optional<std::uint64_t> sum = detail::checked_sum(total, item.bytes);
      if (!sum || *sum > memory_bytes)
        refuse(ErrorKind::invalid_argument, item.field + ".count",
               std::to_string(item.count) + " " + std::string(to_string(item.type)) +
                   " element(s) take " + std::to_string(item.bytes) +
                   " bytes, which brings the problem's data to more than the " +
                   std::to_string(memory_bytes) +
                   " bytes it may take (the device's memory, else 256 GiB)");
      total = *sum;
      items.push_back(std::move(item));
    };
    const std::vector<ProblemArgument>& arguments = problem_.arguments();
    for (std::size_t i = 0; i < arguments.size(); ++i) {
      ++position;
      const ProblemArgument& argument = arguments[i];
      if (argument.kind != ProblemArgument::Kind::buffer) continue;
      add(item(argument.name, argument.type, argument.init, "arguments[" + std::to_string(i) + "]",
               *argument.count, position));
    }
    const std::vector<ProblemSymbol>& symbols = problem_.symbols();
    for (std::size_t i = 0; i < symbols.size(); ++i) {
      ++position;
      const ProblemSymbol& symbol = symbols[i];
      if (!symbol.from_argument.empty()) continue;
      add(item(symbol.name, symbol.type, symbol.init, "symbols[" + std::to_string(i) + "]",
               *symbol.count, position));
    }
    for (const DataItem& made : items)
      if (made.init.kind == DataInit::Kind::derived) check_source(made, items);
    return items;
  }

  // The outputs verify.files compares with, each as its output argument counts it.
  std::vector<DataItem> expected_items() const {
    std::vector<DataItem> items;
    for (const auto& entry : problem_.verification().files) {
      const std::string& output = entry.first;  // a lambda captures it: no structured binding
      const auto& arguments = problem_.arguments();
      const auto found = std::find_if(arguments.begin(), arguments.end(),
                                      [&](const ProblemArgument& a) { return a.name == output; });
      items.push_back(item(output, found->type, DataInit::from_file(entry.second),
                           "verify.files." + detail::printable(output), *found->count, 0));
    }
    return items;
  }

  // A data file's descriptor: a regular file of exactly the item's bytes.
  detail::OpenedFile open_data_file(const DataItem& item) const {
    std::optional<detail::OpenedFile> opened;
    try {
      opened = detail::open_regular_file(item.init.file, "data file");
    } catch (const Error& error) {
      refuse(ErrorKind::io, item.field, error.what());
    }
    const std::string file = "data file " + detail::quoted(item.init.file.string());
    if (!opened) refuse(ErrorKind::io, item.field, file + " does not exist");
    const auto size = static_cast<std::uint64_t>(opened->status.st_size);
    if (size != item.bytes)
      refuse(ErrorKind::invalid_argument, item.field,
             file + " holds " + std::to_string(size) + " bytes, but " + std::to_string(item.count) +
                 " " + std::string(to_string(item.type)) + " element(s) take " +
                 std::to_string(item.bytes));
    return *std::move(opened);
  }

  // `item`'s data; a derived item's source is in `made` already.
  ProblemData::Array make(const DataItem& item, const ProblemData& made) const {
    try {
      return make_array(item, made);
    } catch (const std::bad_alloc&) {
      refuse(ErrorKind::invalid_argument, item.field,
             "cannot allocate " + std::to_string(item.bytes) + " bytes of host memory");
    }
  }

 private:
  ProblemData::Array make_array(const DataItem& item, const ProblemData& made) const {
    ProblemData::Array array{item.name, item.type, {}};
    if (item.init.kind == DataInit::Kind::file) {
      const detail::OpenedFile file = open_data_file(item);
      const std::string content =
          detail::read_opened_file(file, item.init.file, "data file", {.max_bytes = item.bytes});
      array.bytes.resize(content.size());
      std::memcpy(array.bytes.data(), content.data(), content.size());
      return array;
    }
    array.bytes.resize(static_cast<std::size_t>(item.bytes));
    std::mt19937_64 generator(item.init.seed != 0 ? item.init.seed : item.position + 1);
    const std::size_t size = element_bytes(item.type);
    if (item.init.kind == DataInit::Kind::offsets) {
      // Stored as integers: a double would round a 64-bit total.
      const std::vector<std::uint64_t> offsets =
          detail::sorted_offsets(item.count, item.total, generator);
      for (std::uint64_t i = 0; i < item.count; ++i)
        std::memcpy(array.bytes.data() + i * size, &offsets[i], size);
    } else if (item.init.kind == DataInit::Kind::derived) {
      const std::vector<double> values =
          detail::derived_values(made.at(item.init.source), item.count, item.init, generator);
      for (std::uint64_t i = 0; i < item.count; ++i)
        store(item.type, is_floating(item.type) ? values[i] : std::floor(values[i]),
              array.bytes.data() + i * size);
    } else {
      fill(item, generator, array.bytes.data());
    }
    return array;
  }

  static void fill(const DataItem& item, std::mt19937_64& generator, std::byte* elements) {
    const DataInit& init = item.init;
    const std::size_t size = element_bytes(item.type);
    std::uniform_real_distribution<double> uniform(init.low, init.high);
    std::normal_distribution<double> normal(init.mean, init.deviation);
    for (std::uint64_t i = 0; i < item.count; ++i) {
      double value = 0.0;
      switch (init.kind) {
        case DataInit::Kind::zeros:
        case DataInit::Kind::file:
        case DataInit::Kind::derived:
        case DataInit::Kind::offsets:
        case DataInit::Kind::kernel:  // made on the GPU by a session; zeros until then
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
      if (!is_floating(item.type)) value = std::floor(value);
      store(item.type, value, elements + i * size);
    }
  }

  const KernelProblem& problem_;
  const ProblemSizes& sizes_;
  std::string origin_;
};

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
  for (const auto& [value, spelling] : type_names)
    known += (known.empty() ? "" : ", ") + std::string(spelling);
  throw Error(ErrorKind::invalid_argument,
              "type " + detail::quoted(name) + " is unknown: expected one of " + known);
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

Verdict DataInit::suits(ElementType type) const {
  using detail::number_text;
  const auto finite = [](const char* name, double number) {
    if (std::isfinite(number)) return Verdict();
    return Verdict::refused(std::string(name) + " must be finite, got " + number_text(number));
  };
  // Integers take the floor of what they are given: `beyond` lets uniform's high, which is never
  // reached, lie one past the range.
  const auto within = [&](const char* name, double number, double beyond) {
    const auto [lowest, highest] = integer_range(type);
    if (is_floating(type) || (number >= lowest && number <= highest + beyond)) return Verdict();
    return Verdict::refused(std::string(name) + " " + number_text(number) +
                            " is outside the range of " + std::string(to_string(type)) + " (" +
                            number_text(lowest) + " to " + number_text(highest) + ")");
  };
  switch (kind) {
    case Kind::zeros:
    case Kind::file:
    case Kind::kernel:
      return {};
    case Kind::derived:
      if (!(noise >= 0.0) || !std::isfinite(noise))
        return Verdict::refused("noise must be a finite number, 0 or more, got " +
                                number_text(noise));
      if (!std::isfinite(2.0 * noise))
        return Verdict::refused("noise's range from -" + number_text(noise) + " to " +
                                number_text(noise) + " is wider than a double holds");
      return {};
    case Kind::offsets:
      if (is_floating(type))
        return Verdict::refused("offsets are integers, not " + std::string(to_string(type)));
      return {};
    case Kind::constant:
      if (is_floating(type)) return {};  // a NaN or an infinity is a float's to hold
      if (Verdict fits = finite("fill", value); !fits) return fits;
      return within("fill", value, 0.0);
    case Kind::iota:
      if (Verdict fits = finite("start", value); !fits) return fits;
      return finite("step", step);
    case Kind::uniform:
      if (Verdict fits = finite("low", low); !fits) return fits;
      if (Verdict fits = finite("high", high); !fits) return fits;
      if (!(low <= high))
        return Verdict::refused("uniform needs low <= high, got low " + number_text(low) +
                                " and high " + number_text(high));
      if (!std::isfinite(high - low))
        return Verdict::refused("uniform's range from " + number_text(low) + " to " +
                                number_text(high) + " is wider than a double holds");
      if (Verdict fits = within("low", low, 0.0); !fits) return fits;
      return within("high", high, 1.0);
    case Kind::normal:
      if (Verdict fits = finite("mean", mean); !fits) return fits;
      if (!(deviation > 0.0) || !std::isfinite(deviation))
        return Verdict::refused("normal needs a finite deviation above 0, got " +
                                number_text(deviation));
      return {};
  }
  return {};
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
  throw Error(ErrorKind::not_found, "the problem has no data named " + detail::quoted(name) +
                                        " (it has: " + join(names) + ")");
}

ProblemDevice::ProblemDevice(Jit& jit, const Context& context, const ProblemSizes& sizes,
                             std::vector<std::pair<std::string_view, DeviceRange*>> buffers)
    : jit_(&jit), context_(&context), sizes_(&sizes), buffers_(std::move(buffers)) {}

std::int64_t ProblemDevice::size(std::string_view name) const {
  if (const auto found = sizes_->find(name); found != sizes_->end()) return found->second;
  throw Error(ErrorKind::not_found, "the problem has no size " + detail::quoted(name) +
                                        " (its sizes: " + format_problem_sizes(*sizes_) + ")");
}

DeviceRange& ProblemDevice::buffer(std::string_view name) const {
  std::vector<std::string> names;
  for (const auto& [buffer_name, range] : buffers_) {
    if (buffer_name == name) return *range;
    names.emplace_back(buffer_name);
  }
  throw Error(ErrorKind::not_found, "the problem has no buffer named " + detail::quoted(name) +
                                        " (it has: " + join(names) + ")");
}

void ProblemData::throw_type_mismatch(const Array& array, ElementType asked) {
  throw Error(ErrorKind::invalid_argument, "'" + array.name + "' holds " +
                                               std::string(to_string(array.type)) + ", not " +
                                               std::string(to_string(asked)));
}

void check_problem_data(const KernelProblem& problem, const ProblemSizes& sizes,
                        std::uint64_t memory_bytes) {
  const DataPlan plan(problem, sizes);
  for (const DataItem& item : plan.items(memory_bytes))
    if (item.init.kind == DataInit::Kind::file) plan.open_data_file(item);
  for (const DataItem& item : plan.expected_items()) plan.open_data_file(item);
}

ProblemData make_problem_data(const KernelProblem& problem, const ProblemSizes& sizes,
                              std::uint64_t memory_bytes) {
  return detail::make_problem_data_with(problem, sizes, memory_bytes, {});
}

ProblemData detail::make_problem_data_with(const KernelProblem& problem, const ProblemSizes& sizes,
                                           std::uint64_t memory_bytes,
                                           const DataGenerator& generate) {
  const DataPlan plan(problem, sizes);
  const std::vector<DataItem> items = plan.items(memory_bytes);
  ProblemData data;
  for (const DataItem& item : items) data.arrays.push_back({item.name, item.type, {}});
  // The arguments come first among the items, in their order; the symbols, made from arguments
  // or from nothing, after them.
  const std::size_t argument_count = problem.arguments().size();
  std::vector<std::size_t> item_of_argument(argument_count, items.size());
  for (std::size_t i = 0; i < items.size(); ++i)
    if (items[i].position <= argument_count) item_of_argument[items[i].position - 1] = i;
  std::vector<std::size_t> order;
  for (std::size_t position : detail::making_order(problem))
    order.push_back(item_of_argument[position]);
  for (std::size_t i = 0; i < items.size(); ++i)
    if (items[i].position > argument_count) order.push_back(i);
  for (std::size_t i : order) {
    data.arrays[i] = plan.make(items[i], data);
    if (items[i].init.kind == DataInit::Kind::kernel && generate)
      generate(items[i].position - 1, data);
  }
  return data;
}

ProblemData read_expected_files(const KernelProblem& problem, const ProblemSizes& sizes) {
  const DataPlan plan(problem, sizes);
  ProblemData expected;
  for (const DataItem& item : plan.expected_items())
    expected.arrays.push_back(plan.make(item, expected));
  return expected;
}

}  // namespace ptxrt
