// Closest pair, grid method: the quantization, Morton (Z-order) keys and search levels that the
// kernels (closest_pair_grid.cu) and their host code (host/closest_pair/closest_pair_grid.cpp)
// share. Compiled by NVRTC and by the host compiler, so the CPU tests check the arithmetic the GPU
// runs.
//
// A coordinate v is quantized to 32 bits, q(v) = clamp(floor((v - origin) * scale), 0, 2^32-1),
// with scale = 2^32 / extent over the square that holds the points. q is monotone in v, so a point
// within [v - r, v + r] quantizes within [q(v - r), q(v + r)], for v - r and v + r rounded to float
// either way (a float at or above the real v - r is at or above its rounding). The key of a point
// interleaves q(x) (even bits) and q(y) (odd bits): the points of any aligned square of side
// extent/2^j (a node of level j, the key's top 2j bits) are contiguous in key order.
#pragma once

#include "closest_pair_math.cuh"

// Where the grid lies: the corner of the points' box and the side of the square over it.
struct GridFrame {
  double origin_x;
  double origin_y;
  double scale;   // 2^32 / extent, or 0 when every point is the same
  double extent;  // the longer side of the box
};

// The box of the points on the device, as the bounds kernel accumulates it with atomics: the
// coordinates as order-preserving unsigned words (ordered_word), the first non-finite point.
struct PointBounds {
  unsigned low_x;
  unsigned low_y;
  unsigned high_x;
  unsigned high_y;
  long long first_non_finite;  // the smallest index of a point with a NaN or infinity; else n
};

// Floats to unsigned words that order as the floats do (-0 just below +0).
CLOSEST_PAIR_FUNCTION unsigned ordered_word(unsigned float_bits) {
  return float_bits ^ ((float_bits >> 31) != 0 ? 0xffffffffu : 0x80000000u);
}

CLOSEST_PAIR_FUNCTION unsigned float_bits_of_word(unsigned word) {
  return word ^ ((word >> 31) != 0 ? 0x80000000u : 0xffffffffu);
}

CLOSEST_PAIR_FUNCTION unsigned quantize(float value, double origin, double scale) {
  const double scaled = floor((static_cast<double>(value) - origin) * scale);
  if (!(scaled > 0.0)) return 0u;
  return scaled >= 4294967295.0 ? 4294967295u : static_cast<unsigned>(scaled);
}

// Bit i of v moves to bit 2i.
CLOSEST_PAIR_FUNCTION unsigned long long spread_bits(unsigned v) {
  unsigned long long x = v;
  x = (x | (x << 16)) & 0x0000ffff0000ffffull;
  x = (x | (x << 8)) & 0x00ff00ff00ff00ffull;
  x = (x | (x << 4)) & 0x0f0f0f0f0f0f0f0full;
  x = (x | (x << 2)) & 0x3333333333333333ull;
  x = (x | (x << 1)) & 0x5555555555555555ull;
  return x;
}

// The Morton code of a cell: column bits even, row bits odd.
CLOSEST_PAIR_FUNCTION unsigned long long morton_code(unsigned column, unsigned row) {
  return spread_bits(column) | (spread_bits(row) << 1);
}

// The cell of a quantized coordinate among the 2^level of a level.
CLOSEST_PAIR_FUNCTION unsigned long long cell_at_level(unsigned quantized, int level) {
  return static_cast<unsigned long long>(quantized) >> (32 - level);
}

// The sort keys: the top 32 bits of the 64-bit code (16 levels), or its bottom 32 bits.
CLOSEST_PAIR_FUNCTION unsigned morton_high(float x, float y, const GridFrame& frame) {
  return static_cast<unsigned>(morton_code(quantize(x, frame.origin_x, frame.scale),
                                           quantize(y, frame.origin_y, frame.scale)) >>
                               32);
}

CLOSEST_PAIR_FUNCTION unsigned morton_low(float x, float y, const GridFrame& frame) {
  return static_cast<unsigned>(morton_code(quantize(x, frame.origin_x, frame.scale),
                                           quantize(y, frame.origin_y, frame.scale)));
}

// The level a search of radius r looks at: the deepest, at most `levels`, whose nodes are at least
// 2r wide, so that the square [p - r, p + r] meets at most 2x2 of them (3x3 when rounding puts an
// edge exactly on a boundary). Level 0 is the whole square.
CLOSEST_PAIR_FUNCTION int search_level(double extent, float radius, int levels) {
  int level = levels;
  const double width = 2.0 * static_cast<double>(radius);
  while (level > 0 && extent * (1.0 / static_cast<double>(1ull << level)) < width) --level;
  return level;
}
