#pragma once

#include <algorithm>
#include <cstdint>

namespace carrier::federation {

// setMaxRate's limit on one link: `rate` units per second (bits or messages), refilled
// continuously, holding at most a tenth of a second's worth (at least one unit's cost, so any
// push can pass), so a link that was idle cannot burst far past the rate. Rate 0: no limit.
// Pure: the caller passes the time (microseconds, any monotonic origin).
// Runs on: shard 0 (its Link).
class TokenBucket {
 public:
  void set_rate(std::uint64_t rate, std::int64_t now_us) {
    rate_ = rate;
    tokens_ = 0;
    last_us_ = now_us;
  }
  bool limited() const { return rate_ != 0; }

  // 0 when `cost` is taken now; otherwise how many microseconds until it can be (nothing taken).
  std::int64_t take(std::uint64_t cost, std::int64_t now_us) {
    if (rate_ == 0) return 0;
    const double capacity = std::max(static_cast<double>(rate_) / 10.0, static_cast<double>(cost));
    tokens_ = std::min(capacity, tokens_ + static_cast<double>(now_us - last_us_) * static_cast<double>(rate_) / 1e6);
    last_us_ = now_us;
    if (tokens_ >= static_cast<double>(cost)) {
      tokens_ -= static_cast<double>(cost);
      return 0;
    }
    const double missing = static_cast<double>(cost) - tokens_;
    return std::max<std::int64_t>(1, static_cast<std::int64_t>(missing * 1e6 / static_cast<double>(rate_)) + 1);
  }

 private:
  std::uint64_t rate_ = 0;
  double tokens_ = 0;
  std::int64_t last_us_ = 0;
};

}  // namespace carrier::federation
