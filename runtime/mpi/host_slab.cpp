// ptxrt::mpi::host_slab: a slab in host memory, solved by a CPU method.
#include <utility>

#include "ptxrt/mpi.hpp"

namespace ptxrt::mpi {

namespace {

class HostSlab final : public Slab {
 public:
  HostSlab(std::vector<IndexedPoint> points, ClosestPairSolver solve)
      : points_(std::move(points)), solve_(std::move(solve)) {}

  std::uint64_t size() const override { return points_.size(); }

  PointPair closest_pair() override { return solve_(points_); }

  std::vector<IndexedPoint> points_near_edges(double left_until, double right_from) override {
    std::vector<IndexedPoint> near;
    for (const IndexedPoint& point : points_)
      if (point.x <= left_until || point.x >= right_from) near.push_back(point);
    return near;
  }

 private:
  std::vector<IndexedPoint> points_;
  ClosestPairSolver solve_;
};

}  // namespace

std::unique_ptr<Slab> host_slab(std::vector<IndexedPoint> points, ClosestPairSolver solve) {
  return std::make_unique<HostSlab>(std::move(points), std::move(solve));
}

}  // namespace ptxrt::mpi
