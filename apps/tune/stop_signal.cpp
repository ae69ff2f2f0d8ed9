#include "apps/tune/stop_signal.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include "ptxrt/core/error.hpp"

namespace ptxrt::apps {

namespace {

// A handler may touch only lock-free atomics (and a few system calls such as write).
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free &&
              std::atomic<const char*>::is_always_lock_free &&
              std::atomic<std::size_t>::is_always_lock_free);

std::atomic<bool> installed{false};
std::atomic<bool> stop_requested{false};
std::atomic<int> stop_signal{0};
std::atomic<const char*> notice_text{nullptr};
std::atomic<std::size_t> notice_size{0};
struct sigaction previous_interrupt {};
struct sigaction previous_terminate {};

extern "C" void on_stop_signal(int number) {
  const int saved_errno = errno;
  stop_signal.store(number);
  stop_requested.store(true);
  [[maybe_unused]] const ssize_t written =
      ::write(STDERR_FILENO, notice_text.load(), notice_size.load());
  errno = saved_errno;
}

}  // namespace

StopSignal::StopSignal(std::string notice) : notice_(std::move(notice)) {
  if (installed.exchange(true))
    throw Error(ErrorKind::invalid_argument, "a StopSignal is already installed in this process");
  stop_requested.store(false);
  stop_signal.store(0);
  notice_text.store(notice_.data());
  notice_size.store(notice_.size());
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  // SA_RESETHAND: the second one takes the default action, ending the process. SA_RESTART: the
  // system calls it interrupts (in the compile threads too) carry on rather than fail.
  action.sa_flags = SA_RESETHAND | SA_RESTART;
  ::sigaction(SIGINT, &action, &previous_interrupt);
  ::sigaction(SIGTERM, &action, &previous_terminate);
}

StopSignal::~StopSignal() {
  ::sigaction(SIGINT, &previous_interrupt, nullptr);
  ::sigaction(SIGTERM, &previous_terminate, nullptr);
  notice_size.store(0);
  installed.store(false);
}

const std::atomic<bool>& StopSignal::requested() const noexcept { return stop_requested; }

int StopSignal::signal() const noexcept { return stop_signal.load(); }

}  // namespace ptxrt::apps
