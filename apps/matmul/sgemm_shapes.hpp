// Shapes drawn at random for judging the SGEMM family's default on products nobody fitted it to
// (`ptxrt bench sgemm --random N --seed S`, scripts/sgemm_heldout.py): the same seed draws the
// same shapes on every machine, so a held-out set is named by its seed alone.
//
// Even draws are log-uniform in M, N and K over [16, 16384]; odd draws take the classes in turn,
// each from the ranges that make it: tiny M·N with deep K, skinny, flat, ragged mid-size, small
// squares (sgemm_drawn_classes). A draw of one class alone (`--random N --class C`) gives a class
// enough shapes to judge it by. Pure functions; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "apps/matmul/sgemm_bench.hpp"

namespace ptxrt::apps {

enum class SgemmDrawnClass { log_uniform, deep, skinny, flat, ragged, small_square };
const char* to_string(SgemmDrawnClass drawn);  // "log-uniform", "deep", ...
// The class to_string names `name`; nothing for any other text.
std::optional<SgemmDrawnClass> parse_sgemm_drawn_class(std::string_view name);

// The classes the odd draws take in turn.
inline constexpr std::array<SgemmDrawnClass, 5> sgemm_drawn_classes{
    SgemmDrawnClass::deep, SgemmDrawnClass::skinny, SgemmDrawnClass::flat, SgemmDrawnClass::ragged,
    SgemmDrawnClass::small_square};

struct SgemmDrawnShape {
  SgemmBenchSize size;
  SgemmDrawnClass drawn = SgemmDrawnClass::log_uniform;
};

// `count` shapes from `seed`; every size from 16 to 65536 (deep K reaches 65536). With `only`,
// every draw is of that class.
std::vector<SgemmDrawnShape> draw_sgemm_shapes(int count, std::uint64_t seed,
                                               std::optional<SgemmDrawnClass> only = std::nullopt);

}  // namespace ptxrt::apps
