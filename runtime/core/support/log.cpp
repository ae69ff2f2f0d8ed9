#include "ptxrt/core/log.hpp"

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>

namespace ptxrt::log {

std::string_view to_string(Level level) {
  switch (level) {
    case Level::error: return "error";
    case Level::warning: return "warning";
    case Level::info: return "info";
    case Level::debug: return "debug";
  }
  return "unknown";
}

std::optional<Level> parse_level(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (Level level : {Level::error, Level::warning, Level::info, Level::debug}) {
    if (lower == to_string(level)) return level;
  }
  return std::nullopt;
}

namespace {

struct Output {
  std::mutex mutex;
  Sink sink;
  std::set<std::string, std::less<>> warned_keys;
};

Output& output() {
  static Output instance;
  return instance;
}

void emit(Level level, std::string_view message) {
  std::string line = "ptxrt: ";
  line += to_string(level);
  line += ": ";
  line += message;
  Output& out = output();
  std::lock_guard lock(out.mutex);
  if (out.sink) {
    out.sink(level, line);
    return;
  }
  line += '\n';
  // One fwrite per line: stderr is unbuffered, so each line reaches the terminal whole.
  std::fwrite(line.data(), 1, line.size(), stderr);
}

int threshold_from_environment() {
  const char* text = std::getenv("PTXRT_LOG");
  if (text == nullptr || *text == '\0') return static_cast<int>(Level::warning);
  if (std::optional<Level> level = parse_level(text)) return static_cast<int>(*level);
  emit(Level::warning, std::string("PTXRT_LOG='") + text +
                           "' is not a level (expected error, warning, info or debug); using "
                           "warning");
  return static_cast<int>(Level::warning);
}

std::atomic<int>& threshold_storage() {
  static std::atomic<int> value{threshold_from_environment()};
  return value;
}

}  // namespace

namespace detail {
int threshold_value() noexcept { return threshold_storage().load(std::memory_order_relaxed); }
}  // namespace detail

void set_threshold(Level level) noexcept {
  threshold_storage().store(static_cast<int>(level), std::memory_order_relaxed);
}

void write(Level level, std::string_view message) {
  if (enabled(level)) emit(level, message);
}

bool warn_once(std::string_view key, std::string_view message) {
  {
    Output& out = output();
    std::lock_guard lock(out.mutex);
    if (!out.warned_keys.emplace(key).second) return false;
  }
  write(Level::warning, message);
  return true;
}

Sink set_sink(Sink sink) {
  Output& out = output();
  std::lock_guard lock(out.mutex);
  std::swap(out.sink, sink);
  return sink;
}

}  // namespace ptxrt::log
