#include "host/closest_pair/point_file.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include "ptxrt/error.hpp"

namespace ptxrt::host {

namespace {

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

// A finite float, the whole field; nothing when the field is not one.
std::optional<float> parse_float(std::string_view field) {
  field = trim(field);
  if (field.starts_with('+')) field.remove_prefix(1);
  float value = 0.0f;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (field.empty() || error != std::errc() || end != field.data() + field.size() ||
      !std::isfinite(value))
    return std::nullopt;
  return value;
}

std::string quoted(std::string_view text) {
  std::string result(1, '\'');
  result.append(text);
  result.push_back('\'');
  return result;
}

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

std::ifstream open_points(const std::filesystem::path& path) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream) throw Error(ErrorKind::io, "cannot open point file '" + path.string() + "'");
  return stream;
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
    const std::optional<float> x = parse_float(line.substr(0, comma));
    const std::optional<float> y = parse_float(line.substr(comma + 1));
    // The first line may name the columns instead.
    if (first_content && !x && !y) continue;
    if (!x || !y) {
      const std::string_view field = trim(!x ? line.substr(0, comma) : line.substr(comma + 1));
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
  std::ifstream stream = open_points(path);
  const std::string content{std::istreambuf_iterator<char>(stream),
                            std::istreambuf_iterator<char>()};
  if (stream.bad()) throw Error(ErrorKind::io, "cannot read point file '" + path.string() + "'");
  const std::string name = path.filename().string();
  return path.extension() == ".bin" ? parse_point_binary(content, name)
                                    : parse_point_csv(content, name);
}

std::size_t count_binary_points(const std::filesystem::path& path) {
  open_points(path);
  std::error_code error;
  const std::uintmax_t bytes = std::filesystem::file_size(path, error);
  if (error)
    throw Error(ErrorKind::io,
                "cannot read point file '" + path.string() + "': " + error.message());
  check_binary_size(bytes, path.filename().string());
  return static_cast<std::size_t>(bytes / sizeof(Point2));
}

std::vector<Point2> read_binary_point_range(const std::filesystem::path& path, std::size_t first,
                                            std::size_t count) {
  if (count == 0) return {};
  std::ifstream stream = open_points(path);
  std::string bytes(count * sizeof(Point2), '\0');
  stream.seekg(static_cast<std::streamoff>(first * sizeof(Point2)));
  stream.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (stream.gcount() != static_cast<std::streamsize>(bytes.size()))
    throw Error(ErrorKind::io, "cannot read points " + std::to_string(first) + " to " +
                                   std::to_string(first + count - 1) + " of point file '" +
                                   path.string() + "': it ends before them");
  return parse_point_binary(bytes, path.filename().string());
}

}  // namespace ptxrt::host
