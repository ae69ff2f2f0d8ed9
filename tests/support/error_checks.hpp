// Checks shared by the CPU and GPU tests: text containment, and an expected ptxrt::Error.
#pragma once

#include <doctest/doctest.h>

#include <functional>
#include <string_view>

#include "ptxrt/core/error.hpp"

namespace ptxrt::testing {

inline bool contains(std::string_view text, std::string_view fragment) {
  return text.find(fragment) != std::string_view::npos;
}

// `action` must throw ptxrt::Error of `kind` whose message contains `fragment`; any other
// exception escapes and fails the test.
inline void check_error(const std::function<void()>& action, ErrorKind kind,
                        std::string_view fragment) {
  try {
    action();
    FAIL("no error, expected: " << fragment);
  } catch (const Error& error) {
    CHECK(to_string(error.kind()) == to_string(kind));
    CHECK_MESSAGE(contains(error.what(), fragment), error.what());
  }
}

}  // namespace ptxrt::testing
