// ptxrt_mpi_closest_pair_probe: ptxrt::mpi::closest_pair over slabs the caller cuts, for the tests
// of the pairs across slab borders (mpi_closest_pair_tests.cpp). Every rank reads the same point
// file whole and treats it as a generated set (point k is the file's k-th); the splitters are the
// keys of the points whose indices --splitters lists, in that order; a CPU brute force solves the
// slabs and the borders. Rank 0 prints {i, j, distance, ranks[{slab_points, border_points_sent,
// border_points_received}]}.
//   mpirun -n R ptxrt_mpi_closest_pair_probe --points FILE.bin [--splitters K1,K2,...]
#include <CLI/CLI.hpp>
#include <cstdint>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/closest_pair/closest_pair.hpp"
#include "apps/closest_pair/point_file.hpp"
#include "ptx_src/closest_pair_slab.cuh"
#include "ptxrt/mpi.hpp"

namespace mpi = ptxrt::mpi;
using ptxrt::apps::Point2;

namespace {

SlabPoint key_of(const mpi::IndexedPoint& point) { return {point.x, point.y, point.index}; }

mpi::PointPair brute_force(std::span<const mpi::IndexedPoint> points) {
  std::vector<Point2> coordinates;
  for (const mpi::IndexedPoint& point : points) coordinates.push_back({point.x, point.y});
  const ptxrt::apps::ClosestPair found =
      ptxrt::apps::closest_pair(coordinates, ptxrt::apps::ClosestPairMethod::cpu_brute_force);
  return {points[found.i], points[found.j], found.distance};
}

class FilePoints final : public mpi::GeneratedPointSet {
 public:
  FilePoints(const std::vector<Point2>& points, std::vector<std::uint64_t> splitters)
      : splitters_(std::move(splitters)) {
    for (std::size_t k = 0; k < points.size(); ++k)
      points_.push_back({points[k].x, points[k].y, k});
  }

  std::uint64_t size() const override { return points_.size(); }

  std::vector<mpi::IndexedPoint> splitters(int) override {
    std::vector<mpi::IndexedPoint> keys;
    for (std::uint64_t index : splitters_) keys.push_back(points_.at(index));
    return keys;
  }

  std::unique_ptr<mpi::Slab> make_slab(const mpi::SlabRange& range) override {
    SlabRange bounds{};
    if (range.after) {
      bounds.after = key_of(*range.after);
      bounds.has_after = 1;
    }
    if (range.through) {
      bounds.through = key_of(*range.through);
      bounds.has_through = 1;
    }
    std::vector<mpi::IndexedPoint> slab;
    for (const mpi::IndexedPoint& point : points_)
      if (key_in_range(bounds, point.x, point.y, point.index)) slab.push_back(point);
    return mpi::host_slab(std::move(slab), brute_force);
  }

 private:
  std::vector<mpi::IndexedPoint> points_;
  std::vector<std::uint64_t> splitters_;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("ptxrt::mpi::closest_pair over slabs cut at chosen points");
  std::string file;
  std::vector<std::uint64_t> splitters;
  app.add_option("--points", file, "binary point file (float32 x, y pairs)")->required();
  app.add_option("--splitters", splitters, "indices of the splitter points, in key order")
      ->delimiter(',');
  CLI11_PARSE(app, argc, argv);
  const mpi::Session session;
  try {
    FilePoints points(ptxrt::apps::read_point_file(file), splitters);
    const mpi::DistributedClosestPair found =
        mpi::closest_pair(MPI_COMM_WORLD, points, {.solve_border = brute_force});
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0) return 0;
    nlohmann::json json{{"i", found.pair.first.index},
                        {"j", found.pair.second.index},
                        {"distance", found.pair.distance},
                        {"ranks", nlohmann::json::array()}};
    for (const mpi::ClosestPairRankStats& stats : found.ranks)
      json["ranks"].push_back({{"slab_points", stats.slab_points},
                               {"border_points_sent", stats.border_points_sent},
                               {"border_points_received", stats.border_points_received}});
    std::cout << json.dump() << '\n';
  } catch (const std::exception& error) {
    std::cerr << "closest pair probe: " << error.what() << '\n';
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return 0;
}
