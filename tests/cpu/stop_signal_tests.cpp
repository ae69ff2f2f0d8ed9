// apps::StopSignal, what `ptxrt tune` turns Ctrl-C into. The signals go to a child process (this
// test binary, running the first case alone), so that the second one's default action ends the
// child, not the test run.
#include <doctest/doctest.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>

#include "apps/tune/stop_signal.hpp"
#include "error_checks.hpp"
#include "process.hpp"
#include "ptxrt/core/error.hpp"

using ptxrt::apps::StopSignal;
using ptxrt::testing::BackgroundProcess;

using ptxrt::testing::contains;

namespace {

constexpr const char* child_variable = "PTXRT_TEST_STOP_SIGNAL_CHILD";

template <typename Condition>
bool wait_for(Condition condition) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// In the child: waits for the stop request, says which signal made it, then waits for a second
// signal, which should end the process before "still running" is printed.
void run_child() {
  const StopSignal stop("notice: stopping\n");
  std::printf("waiting\n");
  std::fflush(stdout);
  wait_for([&] { return stop.requested().load(); });
  std::printf("stopped by %d, exit code %d\n", stop.signal(), StopSignal::exit_code(stop.signal()));
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::seconds(20));
  std::printf("still running\n");
}

}  // namespace

TEST_CASE("stop signal: the first SIGINT or SIGTERM is a stop request and the second ends it") {
  if (std::getenv(child_variable) != nullptr) return run_child();
  for (const int signal : {SIGINT, SIGTERM}) {
    CAPTURE(signal);
    BackgroundProcess child(
        {"/proc/self/exe", "--test-case=stop signal: the first*", "--no-colors"},
        {std::string(child_variable) + "=1"}, BackgroundProcess::Group::own);
    REQUIRE(wait_for([&] { return contains(child.output(), "waiting\n"); }));
    child.signal_group(signal);  // as a terminal sends Ctrl-C
    const std::string stopped =
        "stopped by " + std::to_string(signal) + ", exit code " + std::to_string(128 + signal);
    REQUIRE(wait_for([&] { return contains(child.output(), stopped); }));
    CHECK(contains(child.output(), "notice: stopping\n"));
    child.signal(signal);
    const ptxrt::testing::ProcessResult result = child.wait();
    INFO(result.output);
    CHECK(result.exit_code == 128 + signal);
    CHECK_FALSE(contains(result.output, "still running"));
  }
}

TEST_CASE("stop signal: one at a time, and the handlers it replaced come back after it") {
  struct sigaction before {};
  REQUIRE(::sigaction(SIGINT, nullptr, &before) == 0);
  {
    const StopSignal stop("");
    CHECK_FALSE(stop.requested().load());
    CHECK(stop.signal() == 0);
    struct sigaction during {};
    REQUIRE(::sigaction(SIGINT, nullptr, &during) == 0);
    const bool replaced = during.sa_handler != before.sa_handler;
    CHECK(replaced);
    try {
      const StopSignal second("");
      FAIL("a second StopSignal was installed");
    } catch (const ptxrt::Error& error) {
      CHECK(std::string(error.what()) == "a StopSignal is already installed in this process");
    }
  }
  struct sigaction after {};
  REQUIRE(::sigaction(SIGINT, nullptr, &after) == 0);
  const bool restored = after.sa_handler == before.sa_handler;
  CHECK(restored);
  const StopSignal again("");
  CHECK(again.signal() == 0);
}
