// raytrace: random spheres rendered by ptx_src/raytrace.cu with the scene in its __constant__
// `spheres` array, one thread per pixel in 16×16 blocks; optionally written as a PPM image.
// Verified byte for byte against apps::raytrace. Rate: Mpixel/s.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "apps/common/reference.hpp"
#include "apps/common/run.hpp"
#include "ptxrt/core/jit.hpp"

namespace ptxrt::apps {

// `count` spheres spread over a width×height image, radius 2%..12% of the smaller side, depth in
// [-1000, 1000): the same scene for the same seed.
std::vector<Sphere> random_spheres(int count, int width, int height, std::uint64_t seed);

struct RaytracePlan {
  int width = 0;
  int height = 0;
  int spheres = 0;
  Program program;
  std::vector<Define> defines;  // MAX_SPHERES, which must be >= spheres
  Dim3 grid;
  Dim3 block;
  std::filesystem::path image;  // written when not empty
};

RaytracePlan plan_raytrace(std::int64_t width, std::int64_t height, std::int64_t spheres,
                           std::filesystem::path image, std::vector<Define> defines = {});

Run run_raytrace(Jit& jit, const Context& context, const RaytracePlan& plan,
                 const RunOptions& options);

}  // namespace ptxrt::apps
