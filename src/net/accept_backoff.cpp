#include "net/accept_backoff.hpp"

#include <algorithm>

namespace carrier::net {

std::chrono::milliseconds AcceptBackoff::fail(Clock::time_point now) {
  delay_ = delay_.count() == 0 ? min : std::min(delay_ * 2, max);
  ++failures_;
  ++unlogged_;
  log_now_ = !logged_once_ || now - last_log_ >= log_interval;
  if (log_now_) {
    logged_count_ = unlogged_;
    unlogged_ = 0;
    logged_once_ = true;
    last_log_ = now;
  }
  return delay_;
}

std::uint64_t AcceptBackoff::succeed() {
  const std::uint64_t failures = failures_;
  delay_ = std::chrono::milliseconds(0);
  failures_ = 0;
  unlogged_ = 0;
  log_now_ = false;
  logged_once_ = false;
  return failures;
}

}  // namespace carrier::net
