#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "process.hpp"
#include "support/single_flight.hpp"

using ptxrt::SingleFlight;
using namespace std::chrono_literals;

namespace {

// A one-shot gate that threads can wait on with a timeout, so a broken cache fails the test
// instead of hanging it.
class Gate {
 public:
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  bool wait(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = false;
};

}  // namespace

TEST_CASE("32 threads asking for one key run the factory once and share one value") {
  SingleFlight<std::string, int> cache;
  std::atomic<int> factory_runs{0};
  Gate release;
  std::vector<std::shared_ptr<const int>> results(32);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < results.size(); ++i) {
    threads.emplace_back([&, i] {
      results[i] = cache.get_or_create("kernel", [&] {
        ++factory_runs;
        release.wait(2s);  // keep the flight open while the other threads arrive
        return 42;
      });
    });
  }
  std::this_thread::sleep_for(50ms);
  release.open();
  for (std::thread& thread : threads) thread.join();

  CHECK(factory_runs == 1);
  CHECK(cache.misses() == 1);
  CHECK(cache.hits() == 31);
  for (const auto& result : results) {
    REQUIRE(result != nullptr);
    CHECK(result == results[0]);
    CHECK(*result == 42);
  }
}

TEST_CASE("factories for different keys run at the same time") {
  SingleFlight<std::string, int> cache;
  Gate first_started;
  Gate second_started;
  bool first_saw_second = false;
  bool second_saw_first = false;
  // Each factory waits for the other to start: both can only succeed if they overlap.
  std::thread first([&] {
    cache.get_or_create("first", [&] {
      first_started.open();
      first_saw_second = second_started.wait(5s);
      return 1;
    });
  });
  std::thread second([&] {
    cache.get_or_create("second", [&] {
      second_started.open();
      second_saw_first = first_started.wait(5s);
      return 2;
    });
  });
  first.join();
  second.join();
  CHECK(first_saw_second);
  CHECK(second_saw_first);
  CHECK(cache.size() == 2);
}

TEST_CASE("a throwing factory reaches every waiter, is not cached, and the next call retries") {
  SingleFlight<std::string, int> cache;
  Gate release;
  std::atomic<int> failures_seen{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      try {
        cache.get_or_create("broken", [&]() -> int {
          release.wait(2s);
          throw std::runtime_error("compile failed");
        });
      } catch (const std::runtime_error& error) {
        if (std::string(error.what()) == "compile failed") ++failures_seen;
      }
    });
  }
  std::this_thread::sleep_for(50ms);
  release.open();
  for (std::thread& thread : threads) thread.join();

  CHECK(failures_seen == 8);
  CHECK(cache.misses() == 1);
  CHECK(cache.size() == 0);
  CHECK(cache.find("broken") == nullptr);
  auto value = cache.get_or_create("broken", [] { return 7; });
  CHECK(*value == 7);
  CHECK(cache.misses() == 2);
}

TEST_CASE("find returns a finished value without creating one") {
  SingleFlight<std::string, std::string> cache;
  CHECK(cache.find("absent") == nullptr);
  CHECK(cache.size() == 0);
  auto made = cache.get_or_create("present", [] { return std::string("ptx"); });
  CHECK(cache.find("present") == made);
  CHECK(cache.hits() == 0);
  CHECK(cache.misses() == 1);
}

TEST_CASE("find does not wait for a value still being made") {
  SingleFlight<std::string, int> cache;
  Gate started;
  Gate release;
  std::thread maker([&] {
    cache.get_or_create("slow", [&] {
      started.open();
      release.wait(5s);
      return 1;
    });
  });
  REQUIRE(started.wait(5s));
  CHECK(cache.find("slow") == nullptr);
  CHECK(cache.size() == 1);
  release.open();
  maker.join();
  REQUIRE(cache.find("slow") != nullptr);
  CHECK(*cache.find("slow") == 1);
}

TEST_CASE("values lists the finished values and skips one still being made") {
  SingleFlight<std::string, int> cache;
  const auto one = cache.get_or_create("one", [] { return 1; });
  const auto two = cache.get_or_create("two", [] { return 2; });
  Gate started;
  Gate release;
  std::thread maker([&] {
    cache.get_or_create("slow", [&] {
      started.open();
      release.wait(5s);
      return 3;
    });
  });
  REQUIRE(started.wait(5s));
  auto values = cache.values();
  std::sort(values.begin(), values.end(), [](const auto& a, const auto& b) { return *a < *b; });
  CHECK(values == std::vector<std::shared_ptr<const int>>{one, two});
  release.open();
  maker.join();
  CHECK(cache.values().size() == 3);
}

TEST_CASE("a factory may return a shared_ptr, which is cached as is") {
  SingleFlight<int, std::string> cache;
  auto original = std::make_shared<const std::string>("cubin");
  CHECK(cache.get_or_create(3, [&] { return original; }) == original);
  CHECK(cache.get_or_create(3, [] { return std::make_shared<const std::string>("other"); }) ==
        original);
}

TEST_CASE("clear forgets every entry, so the next call runs the factory again") {
  SingleFlight<std::string, int> cache;
  cache.get_or_create("a", [] { return 1; });
  cache.get_or_create("b", [] { return 2; });
  REQUIRE(cache.size() == 2);
  cache.clear();
  CHECK(cache.size() == 0);
  CHECK(*cache.get_or_create("a", [] { return 10; }) == 10);
  CHECK(cache.misses() == 3);
}

// gcc names its sanitizers in __SANITIZE_ADDRESS__ and __SANITIZE_THREAD__; clang before 17 only
// in __has_feature.
#if defined(__has_feature)
#define SANITIZED_BY_CLANG (__has_feature(address_sanitizer) || __has_feature(thread_sanitizer))
#else
#define SANITIZED_BY_CLANG 0
#endif

TEST_CASE("a cache hit takes well under a microsecond of CPU time") {
  // CPU time, not the wall clock, which the other processes of a busy machine stretch.
  SingleFlight<std::string, int> cache;
  const std::string key(64, 'a');
  cache.get_or_create(key, [] { return 1; });
  constexpr int lookups = 100000;
  long sum = 0;
  const double start = ptxrt::testing::cpu_seconds();
  for (int i = 0; i < lookups; ++i) sum += *cache.get_or_create(key, [] { return 2; });
  const double microseconds = (ptxrt::testing::cpu_seconds() - start) * 1e6;
  CHECK(sum == lookups);
  MESSAGE("in-memory hit: " << microseconds * 1000.0 / lookups << " ns of CPU time");
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__) || SANITIZED_BY_CLANG
  MESSAGE("timing not checked: sanitizers slow every lookup down");
#else
  CHECK(microseconds / lookups < 1.0);
#endif
}
