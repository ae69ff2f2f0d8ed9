// Reading points from CSV text and raw float32 files: good inputs exactly, bad ones with errors
// that name the file, the line and the fault.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "apps/closest_pair/point_file.hpp"
#include "ptxrt/core/error.hpp"

using namespace ptxrt;
using namespace ptxrt::apps;

namespace {

std::string float_bytes(std::initializer_list<float> values) {
  std::string bytes;
  for (float value : values) {
    unsigned char raw[4];
    std::memcpy(raw, &value, 4);  // the tests run on little-endian hosts, as the format is
    bytes.append(reinterpret_cast<const char*>(raw), 4);
  }
  return bytes;
}

// A file under the temporary folder, removed at the end of the test.
class TemporaryFile {
 public:
  TemporaryFile(const std::string& name, const std::string& content)
      : path_(std::filesystem::temp_directory_path() /
              ("ptxrt_points_" + std::to_string(::getpid()) + "_" + name)) {
    std::ofstream(path_, std::ios::binary) << content;
  }
  ~TemporaryFile() { std::filesystem::remove(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace

TEST_CASE("CSV: a header, CRLF line ends, blank lines, signs and exponents") {
  const auto points =
      parse_point_csv("x,y\r\n1.5,-2\r\n\r\n  +3e2 , 0.25\n-0,1E-3\n", "points.csv");
  CHECK(points == std::vector<Point2>{{1.5f, -2.0f}, {300.0f, 0.25f}, {-0.0f, 0.001f}});
}

TEST_CASE("CSV: a file without a header and without a final newline") {
  CHECK(parse_point_csv("1,2\n3,4", "p.csv") == std::vector<Point2>{{1, 2}, {3, 4}});
}

TEST_CASE("CSV: a wrong column count names the line and the count") {
  CHECK_THROWS_WITH_AS(parse_point_csv("1,2\n3,4,5\n", "p.csv"),
                       "p.csv:2: expected 2 columns (x,y), got 3: '3,4,5'", Error);
  CHECK_THROWS_WITH_AS(parse_point_csv("x,y\n\n7\n", "p.csv"),
                       "p.csv:3: expected 2 columns (x,y), got 1: '7'", Error);
}

TEST_CASE("CSV: a field that is not a finite float names the line and the field") {
  CHECK_THROWS_WITH_AS(parse_point_csv("1,2\n3,abc\n", "p.csv"),
                       "p.csv:2: 'abc' is not a finite float", Error);
  CHECK_THROWS_WITH_AS(parse_point_csv("1,2\nnan,4\n", "p.csv"),
                       "p.csv:2: 'nan' is not a finite float", Error);
  CHECK_THROWS_WITH_AS(parse_point_csv("1,2\n3,1e39\n", "p.csv"),
                       "p.csv:2: '1e39' is not a finite float", Error);
  CHECK_THROWS_WITH_AS(parse_point_csv("1,2\n3,4x\n", "p.csv"),
                       "p.csv:2: '4x' is not a finite float", Error);
  // Only the first line may be a header.
  CHECK_THROWS_WITH_AS(parse_point_csv("1,2\nx,y\n", "p.csv"), "p.csv:2: 'x' is not a finite float",
                       Error);
}

TEST_CASE("CSV: a first line of numbers that are not finite is a bad point, not a header") {
  CHECK_THROWS_WITH_AS(parse_point_csv("nan,nan\n1,2\n", "p.csv"),
                       "p.csv:1: 'nan' is not a finite float", Error);
  CHECK_THROWS_WITH_AS(parse_point_csv("x,inf\n1,2\n", "p.csv"),
                       "p.csv:1: 'x' is not a finite float", Error);
  CHECK_THROWS_WITH_AS(parse_point_csv("1e39,-1e39\n1,2\n", "p.csv"),
                       "p.csv:1: '1e39' is not a finite float", Error);
  CHECK(parse_point_csv("x,y\n1,2\n", "p.csv") == std::vector<Point2>{{1, 2}});
}

TEST_CASE("CSV: a long or binary line is echoed cut and escaped") {
  CHECK_THROWS_WITH_AS(
      parse_point_csv("1,2\n1,\x01\xff" + std::string(10000, 'z') + "\n", "p.csv"),
      ("p.csv:2: '\\x01\\xff" + std::string(98, 'z') + "... (10002 bytes)' is not a finite float")
          .c_str(),
      Error);
  CHECK_THROWS_WITH_AS(parse_point_csv("1,2,3" + std::string(10000, ',') + "\n", "p.csv"),
                       doctest::Contains("... (10005 bytes)'"), Error);
}

TEST_CASE("CSV: an empty file or a header alone has no points") {
  CHECK_THROWS_WITH_AS(parse_point_csv("", "p.csv"), "p.csv: no points in the file", Error);
  CHECK_THROWS_WITH_AS(parse_point_csv("x,y\n\n", "p.csv"), "p.csv: no points in the file", Error);
}

TEST_CASE("binary: little-endian float32 pairs") {
  CHECK(parse_point_binary(float_bytes({1.0f, -2.5f, 3e-3f, 4e6f}), "p.bin") ==
        std::vector<Point2>{{1.0f, -2.5f}, {3e-3f, 4e6f}});
}

TEST_CASE("binary: an empty file or a partial point is an error naming the byte count") {
  CHECK_THROWS_WITH_AS(parse_point_binary("", "p.bin"), "p.bin: no points (the file is empty)",
                       Error);
  CHECK_THROWS_WITH_AS(parse_point_binary(float_bytes({1, 2, 3}), "p.bin"),
                       "p.bin: 12 bytes is not a whole number of points (8 bytes each: "
                       "little-endian float32 x then y)",
                       Error);
}

TEST_CASE("files: .bin is read as binary, anything else as CSV, a missing file is an io error") {
  TemporaryFile binary("a.bin", float_bytes({5, 6, 7, 8}));
  CHECK(read_point_file(binary.path()) == std::vector<Point2>{{5, 6}, {7, 8}});
  TemporaryFile text("a.csv", "x,y\n5,6\n7,8\n");
  CHECK(read_point_file(text.path()) == std::vector<Point2>{{5, 6}, {7, 8}});
  TemporaryFile bad("b.csv", "1,2\n3\n");
  CHECK_THROWS_WITH_AS(read_point_file(bad.path()),
                       doctest::Contains("b.csv:2: expected 2 columns"), Error);
  try {
    read_point_file("/nonexistent/points.csv");
    FAIL("expected an error");
  } catch (const Error& error) {
    CHECK(error.kind() == ErrorKind::io);
    CHECK(std::string(error.what()) == "point file '/nonexistent/points.csv': no such file");
  }
}

TEST_CASE("binary ranges: a part read alone is that part of the whole file") {
  TemporaryFile binary("range.bin", float_bytes({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  CHECK(count_binary_points(binary.path()) == 5);
  CHECK(read_binary_point_range(binary.path(), 1, 3) ==
        std::vector<Point2>{{2, 3}, {4, 5}, {6, 7}});
  CHECK(read_binary_point_range(binary.path(), 4, 1) == std::vector<Point2>{{8, 9}});
  CHECK(read_binary_point_range(binary.path(), 5, 0).empty());
  CHECK_THROWS_WITH_AS(read_binary_point_range(binary.path(), 4, 2),
                       doctest::Contains("': ends at byte 40, before bytes 32 to 47"), Error);
  CHECK_THROWS_WITH_AS(read_binary_point_range(binary.path(), SIZE_MAX / 4, 1),
                       doctest::Contains("beyond any file"), Error);
}

TEST_CASE(
    "binary ranges: an empty file, a partial point or a missing file is counted as an error") {
  TemporaryFile empty("empty.bin", "");
  CHECK_THROWS_WITH_AS(count_binary_points(empty.path()),
                       doctest::Contains("empty.bin: no points (the file is empty)"), Error);
  TemporaryFile partial("partial.bin", float_bytes({1, 2, 3}));
  CHECK_THROWS_WITH_AS(count_binary_points(partial.path()),
                       doctest::Contains("partial.bin: 12 bytes is not a whole number of points"),
                       Error);
  CHECK_THROWS_WITH_AS(count_binary_points("/nonexistent/points.bin"),
                       "point file '/nonexistent/points.bin': no such file", Error);
}
