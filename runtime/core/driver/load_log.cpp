#include "driver/load_log.hpp"

#include <cstdint>
#include <cstring>

#include "ptxrt/core/error.hpp"

namespace ptxrt::detail {
namespace {

constexpr std::size_t wall_time_slot = 5;

std::string trimmed(const std::vector<char>& buffer) {
  std::string log(buffer.data(), strnlen(buffer.data(), buffer.size()));
  while (!log.empty() && (log.back() == '\n' || log.back() == ' ')) log.pop_back();
  return log;
}

void* as_option_value(std::uintptr_t value) { return reinterpret_cast<void*>(value); }

}  // namespace

LoadLog::LoadLog(const ModuleLoadOptions& options)
    : info_(options.log_bytes + 1, '\0'), error_(options.log_bytes + 1, '\0') {
  keys_ = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
           CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE, CU_JIT_WALL_TIME};
  values_ = {info_.data(), as_option_value(options.log_bytes), error_.data(),
             as_option_value(options.log_bytes), as_option_value(1), nullptr};
  if (options.optimization_level >= 0) {
    keys_.push_back(CU_JIT_OPTIMIZATION_LEVEL);
    values_.push_back(as_option_value(static_cast<std::uintptr_t>(options.optimization_level)));
  }
  if (options.max_registers > 0) {
    keys_.push_back(CU_JIT_MAX_REGISTERS);
    values_.push_back(as_option_value(static_cast<std::uintptr_t>(options.max_registers)));
  }
}

std::string LoadLog::info_log() const { return trimmed(info_); }
std::string LoadLog::error_log() const { return trimmed(error_); }

float LoadLog::wall_ms() const {
  float milliseconds = 0;
  std::memcpy(&milliseconds, &values_[wall_time_slot], sizeof milliseconds);
  return milliseconds;
}

void LoadLog::fail(CUresult result, const char* call, const std::string& doing) const {
  const std::string log = error_log();
  throw_driver_error(result, call, log.empty() ? doing : doing + "; JIT log:\n" + log);
}

}  // namespace ptxrt::detail
