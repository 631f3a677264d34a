#include "session/message_rate.hpp"

#include <algorithm>
#include <cmath>

namespace carrier::session {

MessageRate::MessageRate(std::uint32_t per_second, std::uint32_t burst, Clock::time_point now)
    : per_second_(std::max<double>(1, per_second)),
      burst_(std::max<double>(1, burst)),
      tokens_(burst_),
      updated_(now) {}

void MessageRate::refill(Clock::time_point now) {
  if (now <= updated_) return;
  tokens_ = std::min(burst_, tokens_ + std::chrono::duration<double>(now - updated_).count() * per_second_);
  updated_ = now;
}

bool MessageRate::take(Clock::time_point now) {
  refill(now);
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

bool MessageRate::take(Clock::time_point now, std::uint32_t n) {
  refill(now);
  if (tokens_ < 1) return false;
  tokens_ -= n;
  return true;
}

MessageRate::Clock::duration MessageRate::wait(Clock::time_point now) {
  refill(now);
  if (tokens_ >= 1) return Clock::duration::zero();
  const double seconds = (1 - tokens_) / per_second_;
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds)) +
         std::chrono::microseconds(1);  // past the boundary, not just before it
}

}  // namespace carrier::session
