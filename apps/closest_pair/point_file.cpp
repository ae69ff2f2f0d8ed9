#include "apps/closest_pair/point_file.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "ptxrt/core/error.hpp"
#include "support/checked_size.hpp"
#include "support/quoted.hpp"
#include "support/regular_file.hpp"

namespace ptxrt::apps {

namespace {

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

// One process reads at most 2^31 - 1 points (closest_pair()): 16 GiB as binary pairs, and a
// CSV of as many takes up to twice that.
constexpr ptxrt::detail::ReadLimits point_file_limits{.max_bytes = std::uint64_t{32} << 30};

// The field as a number, the whole of it: nan, inf and values beyond float's range included
// (the last as infinity), so that a first line "nan,nan" is a point, not a header; nothing when
// the field is not a number.
std::optional<float> parse_number(std::string_view field) {
  field = trim(field);
  if (field.starts_with('+')) field.remove_prefix(1);
  float value = 0.0f;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (field.empty() || end != field.data() + field.size()) return std::nullopt;
  if (error == std::errc::result_out_of_range) return std::numeric_limits<float>::infinity();
  if (error != std::errc()) return std::nullopt;
  return value;
}

using ptxrt::detail::quoted;

[[noreturn]] void malformed(std::string_view source, std::size_t line, const std::string& what) {
  throw Error(ErrorKind::invalid_argument,
              std::string(source) + ":" + std::to_string(line) + ": " + what);
}

void check_binary_size(std::uintmax_t bytes, std::string_view source) {
  if (bytes == 0)
    throw Error(ErrorKind::invalid_argument,
                std::string(source) + ": no points (the file is empty)");
  if (bytes % sizeof(Point2) != 0)
    throw Error(ErrorKind::invalid_argument,
                std::string(source) + ": " + std::to_string(bytes) +
                    " bytes is not a whole number of points (8 bytes each: little-endian float32 "
                    "x then y)");
}

// Only a regular file is read: a FIFO or a device at the path is one clear error, not a hang.
ptxrt::detail::OpenedFile open_points(const std::filesystem::path& path) {
  std::optional<ptxrt::detail::OpenedFile> file =
      ptxrt::detail::open_regular_file(path, "point file");
  if (!file)
    throw Error(ErrorKind::io, "point file " + ptxrt::detail::quoted_path(path) + ": no such file");
  return *std::move(file);
}

std::string source_name(const std::filesystem::path& path) {
  return ptxrt::detail::printable(path.filename().string());
}

}  // namespace

std::vector<Point2> parse_point_csv(std::string_view text, std::string_view source) {
  std::vector<Point2> points;
  std::size_t line_number = 0;
  bool seen_content = false;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = trim(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++line_number;
    if (line.empty()) continue;
    const std::size_t comma = line.find(',');
    const std::size_t columns =
        1 + static_cast<std::size_t>(std::count(line.begin(), line.end(), ','));
    const bool first_content = !seen_content;
    seen_content = true;
    if (columns != 2) {
      malformed(source, line_number,
                "expected 2 columns (x,y), got " + std::to_string(columns) + ": " + quoted(line));
    }
    const std::optional<float> x = parse_number(line.substr(0, comma));
    const std::optional<float> y = parse_number(line.substr(comma + 1));
    // The first line may name the columns instead: two words, neither a number.
    if (first_content && !x && !y) continue;
    const bool x_finite = x && std::isfinite(*x);
    if (!x_finite || !(y && std::isfinite(*y))) {
      const std::string_view field =
          trim(!x_finite ? line.substr(0, comma) : line.substr(comma + 1));
      malformed(source, line_number, quoted(field) + " is not a finite float");
    }
    points.push_back({*x, *y});
  }
  if (points.empty())
    throw Error(ErrorKind::invalid_argument, std::string(source) + ": no points in the file");
  return points;
}

std::vector<Point2> parse_point_binary(std::string_view bytes, std::string_view source) {
  check_binary_size(bytes.size(), source);
  auto read_float = [&](std::size_t offset) {
    std::uint32_t bits = 0;
    for (std::size_t b = 0; b < 4; ++b)
      bits |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[offset + b])) << (8 * b);
    return std::bit_cast<float>(bits);
  };
  std::vector<Point2> points(bytes.size() / sizeof(Point2));
  for (std::size_t k = 0; k < points.size(); ++k)
    points[k] = {read_float(8 * k), read_float(8 * k + 4)};
  return points;
}

std::vector<Point2> read_point_file(const std::filesystem::path& path) {
  const ptxrt::detail::OpenedFile file = open_points(path);
  const std::string content =
      ptxrt::detail::read_opened_file(file, path, "point file", point_file_limits);
  return path.extension() == ".bin" ? parse_point_binary(content, source_name(path))
                                    : parse_point_csv(content, source_name(path));
}

std::size_t count_binary_points(const std::filesystem::path& path) {
  const auto bytes = static_cast<std::uint64_t>(open_points(path).status.st_size);
  check_binary_size(bytes, source_name(path));
  return static_cast<std::size_t>(bytes / sizeof(Point2));
}

std::vector<Point2> read_binary_point_range(const std::filesystem::path& path, std::size_t first,
                                            std::size_t count) {
  if (count == 0) return {};
  const std::optional<std::uint64_t> offset = ptxrt::detail::checked_product(first, sizeof(Point2));
  const std::optional<std::uint64_t> bytes = ptxrt::detail::checked_product(count, sizeof(Point2));
  if (!offset || !bytes)
    throw Error(ErrorKind::invalid_argument,
                "points " + std::to_string(first) + " (" + std::to_string(count) +
                    " of them) of point file " + ptxrt::detail::quoted_path(path) +
                    ": beyond any file");
  return parse_point_binary(
      ptxrt::detail::read_opened_range(open_points(path), path, "point file", *offset, *bytes),
      source_name(path));
}

}  // namespace ptxrt::apps
