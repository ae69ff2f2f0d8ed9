// Internal: the JIT options every image load hands the driver (cuModuleLoadDataEx for a Module,
// cuLibraryLoadData for a Library), so that both keep the JIT's info and error logs and its wall
// time, and both honour ModuleLoadOptions the same way.
#pragma once

#include <cuda.h>

#include <string>
#include <vector>

#include "ptxrt/core/module.hpp"

namespace ptxrt::detail {

class LoadLog {
 public:
  explicit LoadLog(const ModuleLoadOptions& options);
  // The driver writes into buffers this object owns, through pointers in values(): not movable.
  LoadLog(const LoadLog&) = delete;
  LoadLog& operator=(const LoadLog&) = delete;

  CUjit_option* keys() noexcept { return keys_.data(); }
  void** values() noexcept { return values_.data(); }
  unsigned count() const noexcept { return static_cast<unsigned>(keys_.size()); }

  std::string info_log() const;
  std::string error_log() const;
  float wall_ms() const;  // the driver writes a float into the wall-time option's value slot

  // Throws the Error for a failed load `call`; `doing` says what was loaded where, and the JIT's
  // error log follows it.
  [[noreturn]] void fail(CUresult result, const char* call, const std::string& doing) const;

 private:
  std::vector<char> info_;
  std::vector<char> error_;
  std::vector<CUjit_option> keys_;
  std::vector<void*> values_;
};

}  // namespace ptxrt::detail
