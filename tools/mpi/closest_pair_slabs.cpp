#include "tools/mpi/closest_pair_slabs.hpp"

#include <cstddef>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "apps/closest_pair/point_slab.hpp"

namespace ptxrt::cli {

namespace {

// Received points go to the GPU as they arrived, copied as bytes: the two types must agree.
static_assert(sizeof(SlabPoint) == sizeof(mpi::IndexedPoint) &&
                  offsetof(SlabPoint, y) == offsetof(mpi::IndexedPoint, y) &&
                  offsetof(SlabPoint, index) == offsetof(mpi::IndexedPoint, index),
              "SlabPoint has the layout of mpi::IndexedPoint");

// A CPU method's splitters come from this many points of the set.
constexpr std::uint64_t cpu_sample_size = std::uint64_t{1} << 14;
// The set a GPU rank warms its kernels on: two slabs above the grid method's threshold.
constexpr std::uint64_t warm_up_points = 16384;

mpi::IndexedPoint indexed(const SlabPoint& point) { return {point.x, point.y, point.index}; }

std::vector<mpi::IndexedPoint> indexed(const std::vector<SlabPoint>& points) {
  std::vector<mpi::IndexedPoint> converted;
  converted.reserve(points.size());
  for (const SlabPoint& point : points) converted.push_back(indexed(point));
  return converted;
}

SlabRange slab_range(const mpi::SlabRange& range) {
  SlabRange converted{};
  if (range.after) {
    converted.after = {range.after->x, range.after->y, range.after->index};
    converted.has_after = 1;
  }
  if (range.through) {
    converted.through = {range.through->x, range.through->y, range.through->index};
    converted.has_through = 1;
  }
  return converted;
}

class GpuSlab final : public mpi::Slab {
 public:
  GpuSlab(apps::DeviceSlab slab, apps::ClosestPairMethod method,
          const apps::ClosestPairOptions& options)
      : slab_(std::move(slab)), method_(method), options_(options) {}

  std::uint64_t size() const override { return slab_.size(); }

  mpi::PointPair closest_pair() override {
    const apps::DeviceSlab::Pair pair = slab_.closest_pair(method_, options_);
    return {indexed(pair.first), indexed(pair.second), pair.distance};
  }

  std::vector<mpi::IndexedPoint> points_near_edges(double left_until, double right_from) override {
    return indexed(slab_.points_near_edges(left_until, right_from));
  }

 private:
  apps::DeviceSlab slab_;
  apps::ClosestPairMethod method_;
  apps::ClosestPairOptions options_;
};

// Regenerated on the rank's GPU: the splitters from a sample sorted there, the slab kept there in
// room for its share (the splitters' sample tells it), noting its points in the bands of its
// splitters.
class GpuGeneratedSet final : public mpi::GeneratedPointSet {
 public:
  GpuGeneratedSet(apps::SlabKernels& kernels, const PointGenerator& generator, std::uint64_t count,
                  apps::ClosestPairMethod method, const apps::ClosestPairOptions& options)
      : kernels_(kernels),
        generator_(generator),
        count_(count),
        method_(method),
        options_(options) {}

  std::uint64_t size() const override { return count_; }

  std::vector<mpi::IndexedPoint> splitters(int parts) override {
    sampled_ = kernels_.sample_splitters(generator_, count_, parts);
    parts_ = parts;
    std::vector<mpi::IndexedPoint> keys;
    for (const apps::SampledSplitter& splitter : sampled_) keys.push_back(indexed(splitter.key));
    return keys;
  }

  std::unique_ptr<mpi::Slab> make_slab(const mpi::SlabRange& range) override {
    apps::GeneratedSlab slab{.generator = generator_, .count = count_, .range = slab_range(range)};
    const bool whole_set = !range.after && !range.through;
    slab.capacity = whole_set ? count_ : parts_ > 0 ? apps::slab_capacity(count_, parts_) : 0;
    if (const apps::SampledSplitter* left = sampled(range.after))
      slab.note_left_until = left->band_high_x;
    if (const apps::SampledSplitter* right = sampled(range.through))
      slab.note_right_from = right->band_low_x;
    return std::make_unique<GpuSlab>(apps::DeviceSlab::generate(kernels_, slab), method_, options_);
  }

 private:
  // The splitter of this set's sample that `key` is, if any.
  const apps::SampledSplitter* sampled(const std::optional<mpi::IndexedPoint>& key) const {
    if (!key) return nullptr;
    for (const apps::SampledSplitter& splitter : sampled_)
      if (splitter.key.x == key->x && splitter.key.y == key->y && splitter.key.index == key->index)
        return &splitter;
    return nullptr;
  }

  apps::SlabKernels& kernels_;
  PointGenerator generator_;
  std::uint64_t count_;
  apps::ClosestPairMethod method_;
  apps::ClosestPairOptions options_;
  std::vector<apps::SampledSplitter> sampled_;
  int parts_ = 0;  // the splitters' slabs; 0 before they are asked for
};

// Regenerated on the CPU, for the CPU methods.
class CpuGeneratedSet final : public mpi::GeneratedPointSet {
 public:
  CpuGeneratedSet(const PointGenerator& generator, std::uint64_t count,
                  mpi::ClosestPairSolver solve)
      : generator_(generator), count_(count), solve_(std::move(solve)) {}

  std::uint64_t size() const override { return count_; }

  std::vector<mpi::IndexedPoint> splitters(int parts) override {
    return indexed(apps::sample_splitters(generator_, count_, parts, cpu_sample_size));
  }

  std::unique_ptr<mpi::Slab> make_slab(const mpi::SlabRange& range) override {
    return mpi::host_slab(indexed(apps::generate_slab(generator_, count_, slab_range(range))),
                          solve_);
  }

 private:
  PointGenerator generator_;
  std::uint64_t count_;
  mpi::ClosestPairSolver solve_;
};

}  // namespace

mpi::ClosestPairSolver cpu_solver(apps::ClosestPairMethod method,
                                  const apps::ClosestPairOptions& options) {
  return [method, options](std::span<const mpi::IndexedPoint> points) {
    std::vector<apps::Point2> coordinates(points.size());
    for (std::size_t k = 0; k < points.size(); ++k) coordinates[k] = {points[k].x, points[k].y};
    const apps::ClosestPair found = apps::closest_pair(coordinates, method, options);
    return mpi::PointPair{points[found.i], points[found.j], found.distance};
  };
}

RankSolver::RankSolver(apps::ClosestPairMethod requested, apps::ClosestPairOptions options,
                       const SlabReservation& reservation)
    : requested_(requested), options_(std::move(options)) {
  if (!options_.context) return;
  kernels_.emplace(*options_.context, options_.jit != nullptr ? *options_.jit : Jit::shared());
  if (reservation.count > 0)
    kernels_->reserve(reservation.count, apps::slab_capacity(reservation.count, reservation.parts),
                      apps::resolve_device_method(method_for(reservation.count)));
  // A small set cut, made and solved as a rank's slab is: every kernel of the timed phases
  // compiled, loaded (a driver loads a module's functions lazily, at first use) and run once.
  GpuGeneratedSet warm_up(*kernels_, apps::point_generator(apps::PointDistribution::uniform, 0),
                          warm_up_points, apps::resolve_device_method(requested_), options_);
  const std::vector<mpi::IndexedPoint> splitters = warm_up.splitters(2);
  warm_up.make_slab({.after = splitters.front()})->closest_pair();
}

apps::ClosestPairMethod RankSolver::method_for(std::uint64_t set_size) const {
  return apps::resolve_closest_pair_method(requested_, set_size);
}

std::unique_ptr<mpi::Slab> RankSolver::slab_of(std::vector<mpi::IndexedPoint> points,
                                               std::uint64_t set_size) {
  const apps::ClosestPairMethod method = method_for(set_size);
  if (!apps::is_gpu_method(method))
    return mpi::host_slab(std::move(points), cpu_solver(method, options_));
  const std::span<const SlabPoint> records(reinterpret_cast<const SlabPoint*>(points.data()),
                                           points.size());
  return std::make_unique<GpuSlab>(apps::DeviceSlab::upload(kernels_.value(), records), method,
                                   options_);
}

std::unique_ptr<mpi::GeneratedPointSet> RankSolver::generated_set(
    apps::PointDistribution distribution, std::uint64_t seed, std::uint64_t count) {
  const apps::ClosestPairMethod method = method_for(count);
  const PointGenerator generator = apps::point_generator(distribution, seed);
  if (!apps::is_gpu_method(method))
    return std::make_unique<CpuGeneratedSet>(generator, count, cpu_solver(method, options_));
  return std::make_unique<GpuGeneratedSet>(kernels_.value(), generator, count, method, options_);
}

}  // namespace ptxrt::cli
