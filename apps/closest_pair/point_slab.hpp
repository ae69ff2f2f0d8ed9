// The slab of a generated point set that a rank of a distributed closest pair keeps, made on the
// CPU: the slab of the CPU methods and the reference of the GPU's (device_slab.hpp), which keeps
// the same points. A slab is a range of keys (x, then y, then index; ptx_src/closest_pair_slab.cuh)
// cut at splitters that every rank computes alike. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "ptx_src/closest_pair_slab.cuh"
#include "ptx_src/point_generator.cuh"

namespace ptxrt::apps {

// The key order of slabs: x, then y, then index.
bool key_less(const SlabPoint& a, const SlabPoint& b);

// Of the first `count` points of `generator`, those whose keys lie in `range`, in index order.
std::vector<SlabPoint> generate_slab(const PointGenerator& generator, std::uint64_t count,
                                     const SlabRange& range);

// parts - 1 keys in key order that cut the first `count` points of `generator` into `parts`
// slabs of about equal size: the quantiles of `samples` points spread evenly over the set (all of
// them when the set is smaller), r·samples/parts for r = 1 .. parts - 1. Repeated keys leave the
// slabs between them empty. Error(invalid_argument) for fewer than 1 part, no sample or no point.
std::vector<SlabPoint> sample_splitters(const PointGenerator& generator, std::uint64_t count,
                                        int parts, std::uint64_t samples);

// The range of slab `slab` (0 .. splitters.size()) of those that `splitters` (in key order) cut:
// above splitter slab - 1, up to and including splitter slab.
SlabRange slab_range(std::span<const SlabPoint> splitters, std::size_t slab);

// Point k of `generator` with its index, as a key.
SlabPoint generated_key(const PointGenerator& generator, std::uint64_t k);

}  // namespace ptxrt::apps
