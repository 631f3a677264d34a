#pragma once

#include <chrono>
#include <cstdint>

namespace carrier::session {

// One connection's messages a second ([limits] max_messages_per_second): a token bucket of
// `burst` tokens refilled at `per_second`. A producer past it is not refused: its session
// stops reading (TCP back-pressure slows it) until wait() has passed.
// Pure: `now` is passed in. Runs on: the connection's shard.
class MessageRate {
 public:
  using Clock = std::chrono::steady_clock;

  MessageRate(std::uint32_t per_second, std::uint32_t burst, Clock::time_point now);

  // One message's token, if there is one.
  bool take(Clock::time_point now);
  // `n` messages' tokens at once (an HTTP batch), if one is there: the rest are owed, and
  // wait() counts the debt, so the rate holds on average and a batch larger than the burst
  // is still possible.
  bool take(Clock::time_point now, std::uint32_t n);
  // How long until the next token (zero: one is there).
  Clock::duration wait(Clock::time_point now);

 private:
  void refill(Clock::time_point now);

  const double per_second_;
  const double burst_;
  double tokens_;
  Clock::time_point updated_;
};

}  // namespace carrier::session
