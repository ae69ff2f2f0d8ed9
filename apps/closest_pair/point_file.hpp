// Reading 2-D points from files: CSV text ("x,y" per line, an optional header line, blank lines
// ignored) or raw little-endian float32 pairs (files ending in .bin). Every malformed input is an
// Error(invalid_argument) naming the file and, for text, the line: a wrong column count, a field
// that is not a finite float, an empty file, a byte count that is not a multiple of 8. A file
// that cannot be read is Error(io). Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string_view>
#include <vector>

#include "apps/closest_pair/closest_pair.hpp"

namespace ptxrt::apps {

// By extension: ".bin" is binary, anything else CSV.
std::vector<Point2> read_point_file(const std::filesystem::path& path);

// A binary file read in parts, as the ranks of a distributed run read one file: its number of
// points (the errors of read_point_file for an empty file or a size that is not a whole number
// of points), and points [first, first + count) read by themselves (none for count 0).
std::size_t count_binary_points(const std::filesystem::path& path);
std::vector<Point2> read_binary_point_range(const std::filesystem::path& path, std::size_t first,
                                            std::size_t count);

// `source` names the input in messages ("points.csv").
std::vector<Point2> parse_point_csv(std::string_view text, std::string_view source);
std::vector<Point2> parse_point_binary(std::string_view bytes, std::string_view source);

}  // namespace ptxrt::apps
