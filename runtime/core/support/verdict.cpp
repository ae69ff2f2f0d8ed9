#include "ptxrt/core/verdict.hpp"

namespace ptxrt {

Verdict Verdict::refused(std::string reason) {
  Verdict verdict;
  verdict.allowed_ = false;
  verdict.reason_ = std::move(reason);
  return verdict;
}

}  // namespace ptxrt
