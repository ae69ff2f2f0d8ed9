// Random 2-D point sets made point by point: point k of a set is a function of (distribution,
// seed, k) alone, so any part of a set can be made by itself, on the CPU
// (host/closest_pair/point_generator.cpp) or on a GPU (closest_pair_slab.cu), as each rank of a
// distributed closest pair regenerates the set to keep its own slab.
//
// The CPU and the GPU make the same points bit for bit: every step is an integer operation or one
// IEEE-rounded float operation (+, -, *, /, sqrt), in the same order on both, and the device code
// names its rounded products and sums (__fmul_rn, __fadd_rn), which the compiler never fuses into
// a multiply-add. The host compiler must not fuse them either: x86-64 builds without -mfma never
// do; where a host contracts a*b+c (-ffp-contract=fast with FMA hardware), normal and clustered
// points may differ from the GPU's in the last bit. Logarithm, sine and cosine are short
// polynomials of this file rather than the math library's, whose results differ between the two.
#pragma once

#include "closest_pair_math.cuh"

// PointDistribution's values (host/closest_pair/point_generator.hpp).
#define GENERATED_UNIFORM 0    // the unit square
#define GENERATED_NORMAL 1     // standard normal in x and y
#define GENERATED_CLUSTERED 2  // normal (sigma 0.01) around one of 64 centres in the unit square

// What a kernel needs to make points: the distribution and the bases of two splitmix64 streams,
// one for the points' draws and one for the cluster centres, shared by every part of the set.
struct PointGenerator {
  int distribution;
  int unused;  // keeps the bases 8-byte aligned, the same on host and device
  unsigned long long point_base;
  unsigned long long centre_base;
};

struct GeneratedCoordinates {
  float x;
  float y;
};

#define GENERATOR_GOLDEN_GAMMA 0x9e3779b97f4a7c15ull
// Draws per point: enough for every distribution (clustered takes three).
#define GENERATOR_DRAWS_PER_POINT 4ull
#define GENERATOR_CLUSTERS 64ull

// splitmix64's finalizer (Steele, Lea and Flood, 2014). The k-th word of a stream is
// mix(base + k·gamma), a function of k alone: what lets a range of points be made without the
// points before it.
CLOSEST_PAIR_FUNCTION unsigned long long generator_mix(unsigned long long z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

CLOSEST_PAIR_FUNCTION unsigned long long generator_word(unsigned long long base,
                                                        unsigned long long position) {
  return generator_mix(base + (position + 1ull) * GENERATOR_GOLDEN_GAMMA);
}

CLOSEST_PAIR_FUNCTION PointGenerator make_point_generator(int distribution,
                                                          unsigned long long seed) {
  PointGenerator generator;
  generator.distribution = distribution;
  generator.unused = 0;
  generator.point_base = generator_mix(seed);
  generator.centre_base = generator_mix(~seed);
  return generator;
}

// [0, 1) on the float grid of 2^-24: every value exact.
CLOSEST_PAIR_FUNCTION float unit_coordinate(unsigned long long word) {
  return static_cast<float>(word >> 40) * 0x1p-24f;
}

CLOSEST_PAIR_FUNCTION float rounded_product(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

CLOSEST_PAIR_FUNCTION float rounded_sum(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

CLOSEST_PAIR_FUNCTION float rounded_quotient(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

CLOSEST_PAIR_FUNCTION float rounded_square_root(float a) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}

// ln u for u in (0, 1]: u = m·2^e with m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s) with
// s = (m - 1)/(m + 1), |s| < 0.172, whose series to s^11 is within fp32's rounding.
CLOSEST_PAIR_FUNCTION float generator_log(float u) {
  int exponent = 0;
#if defined(__CUDA_ARCH__)
  float mantissa = frexpf(u, &exponent);
#else
  float mantissa = std::frexp(u, &exponent);
#endif
  if (mantissa < 0x1.6a09e6p-1f) {  // sqrt(1/2): both steps exact
    mantissa = rounded_product(mantissa, 2.0f);
    exponent -= 1;
  }
  const float s = rounded_quotient(mantissa - 1.0f, rounded_sum(mantissa, 1.0f));
  const float z = rounded_product(s, s);
  float series = 0x1.745d18p-4f;                                     // 1/11
  series = rounded_sum(rounded_product(series, z), 0x1.c71c72p-4f);  // 1/9
  series = rounded_sum(rounded_product(series, z), 0x1.24924ap-3f);  // 1/7
  series = rounded_sum(rounded_product(series, z), 0x1.99999ap-3f);  // 1/5
  series = rounded_sum(rounded_product(series, z), 0x1.555556p-2f);  // 1/3
  series = rounded_sum(rounded_product(series, z), 1.0f);
  const float log_mantissa = rounded_product(rounded_product(2.0f, s), series);
  return rounded_sum(rounded_product(static_cast<float>(exponent), 0x1.62e430p-1f), log_mantissa);
}

// cos and sin of 2π·t for t in [0, 1): t picks an octant exactly (8t - floor(8t) is exact on the
// 2^-24 grid), and the angle within it, at most π/4, goes through Taylor polynomials to φ^10.
CLOSEST_PAIR_FUNCTION GeneratedCoordinates generator_cos_sin(float t) {
  const float eighths = rounded_product(t, 8.0f);
  const int octant = static_cast<int>(eighths);
  const float within = eighths - static_cast<float>(octant);
  // Odd octants run backwards from the next multiple of π/4.
  const float angle = rounded_product((octant & 1) != 0 ? 1.0f - within : within, 0x1.921fb6p-1f);
  const float z = rounded_product(angle, angle);
  float sine = 0x1.71de3ap-19f;                                    // 1/9!
  sine = rounded_sum(rounded_product(sine, z), -0x1.a01a02p-13f);  // -1/7!
  sine = rounded_sum(rounded_product(sine, z), 0x1.111112p-7f);    // 1/5!
  sine = rounded_sum(rounded_product(sine, z), -0x1.555556p-3f);   // -1/3!
  sine = rounded_sum(rounded_product(sine, z), 1.0f);
  sine = rounded_product(sine, angle);
  float cosine = -0x1.27e4fcp-22f;                                     // -1/10!
  cosine = rounded_sum(rounded_product(cosine, z), 0x1.a01a02p-16f);   // 1/8!
  cosine = rounded_sum(rounded_product(cosine, z), -0x1.6c16c2p-10f);  // -1/6!
  cosine = rounded_sum(rounded_product(cosine, z), 0x1.555556p-5f);    // 1/4!
  cosine = rounded_sum(rounded_product(cosine, z), -0.5f);
  cosine = rounded_sum(rounded_product(cosine, z), 1.0f);
  // The angle is octant·π/4 ± the one above: swap and negate by octant.
  const bool swapped = octant == 1 || octant == 2 || octant == 5 || octant == 6;
  const float c = swapped ? sine : cosine;
  const float s = swapped ? cosine : sine;
  GeneratedCoordinates result;
  result.x = octant >= 2 && octant <= 5 ? -c : c;
  result.y = octant >= 4 ? -s : s;
  return result;
}

// A standard normal pair from two words (Box-Muller; the uniform under the logarithm is in
// (0, 1], never 0, so the radius stays below 5.8).
CLOSEST_PAIR_FUNCTION GeneratedCoordinates generator_normals(unsigned long long first,
                                                             unsigned long long second) {
  const float u = static_cast<float>((first >> 40) + 1ull) * 0x1p-24f;
  const float radius = rounded_square_root(rounded_product(-2.0f, generator_log(u)));
  const GeneratedCoordinates direction = generator_cos_sin(unit_coordinate(second));
  GeneratedCoordinates result;
  result.x = rounded_product(radius, direction.x);
  result.y = rounded_product(radius, direction.y);
  return result;
}

// Point k of the set.
CLOSEST_PAIR_FUNCTION GeneratedCoordinates generated_point(const PointGenerator& generator,
                                                           unsigned long long k) {
  const unsigned long long position = k * GENERATOR_DRAWS_PER_POINT;
  const unsigned long long base = generator.point_base;
  GeneratedCoordinates point;
  if (generator.distribution == GENERATED_UNIFORM) {
    point.x = unit_coordinate(generator_word(base, position));
    point.y = unit_coordinate(generator_word(base, position + 1ull));
    return point;
  }
  const GeneratedCoordinates normals =
      generator_normals(generator_word(base, position), generator_word(base, position + 1ull));
  if (generator.distribution == GENERATED_NORMAL) return normals;
  const unsigned long long cluster = generator_word(base, position + 2ull) % GENERATOR_CLUSTERS;
  const float centre_x = unit_coordinate(generator_word(generator.centre_base, 2ull * cluster));
  const float centre_y =
      unit_coordinate(generator_word(generator.centre_base, 2ull * cluster + 1ull));
  point.x = rounded_sum(centre_x, rounded_product(0.01f, normals.x));
  point.y = rounded_sum(centre_y, rounded_product(0.01f, normals.y));
  return point;
}

// generated_point(generator, k).x, for uniform points with half the draws.
CLOSEST_PAIR_FUNCTION float generated_x(const PointGenerator& generator, unsigned long long k) {
  if (generator.distribution == GENERATED_UNIFORM)
    return unit_coordinate(generator_word(generator.point_base, k * GENERATOR_DRAWS_PER_POINT));
  return generated_point(generator, k).x;
}

// Box-Muller's radius stays below sqrt(-2 ln 2^-24) = 5.76810 (its uniform is at least 2^-24),
// and so a normal coordinate's size, with room for the rounding of the steps above; a clustered
// point lies within 0.01 of that, 0.0576822, of its centre, rounded to float.
#define GENERATOR_NORMAL_BOUND 5.77f
#define GENERATOR_CLUSTER_REACH 0.0578f

struct GeneratedInterval {
  float low;
  float high;
};

// An interval that holds generated_point(generator, k).x, from fewer draws than the point: the
// x itself for uniform points (one draw); the centre's, widened by the reach, for clustered ones
// (two); for normal ones, what any can be.
CLOSEST_PAIR_FUNCTION GeneratedInterval generated_x_interval(const PointGenerator& generator,
                                                             unsigned long long k) {
  GeneratedInterval interval;
  if (generator.distribution == GENERATED_UNIFORM) {
    interval.low = interval.high = generated_x(generator, k);
  } else if (generator.distribution == GENERATED_CLUSTERED) {
    const unsigned long long cluster =
        generator_word(generator.point_base, k * GENERATOR_DRAWS_PER_POINT + 2ull) %
        GENERATOR_CLUSTERS;
    const float centre = unit_coordinate(generator_word(generator.centre_base, 2ull * cluster));
    interval.low = centre - GENERATOR_CLUSTER_REACH;
    interval.high = centre + GENERATOR_CLUSTER_REACH;
  } else {
    interval.low = -GENERATOR_NORMAL_BOUND;
    interval.high = GENERATOR_NORMAL_BOUND;
  }
  return interval;
}

// The index of sample j of `samples` spread evenly over n points: floor(j·n / samples), without
// overflowing 64 bits for any n (j·(n mod samples) < samples²).
CLOSEST_PAIR_FUNCTION unsigned long long sample_position(unsigned long long j, unsigned long long n,
                                                         unsigned long long samples) {
  return j * (n / samples) + j * (n % samples) / samples;
}
