#pragma once

#include <cstdint>
#include <random>

namespace carrier::federation {

// How long an outbound link waits before dialling again (seed 002): a random delay in the
// upper half of a base that doubles after each failure from `min_ms` up to `max_ms`, so links
// cut together do not all come back in the same instant. reset() once a link is established.
// Runs on: shard 0.
class ReconnectBackoff {
 public:
  ReconnectBackoff(std::uint32_t min_ms, std::uint32_t max_ms, std::uint32_t seed = std::random_device{}())
      : min_ms_(min_ms == 0 ? 1 : min_ms), max_ms_(max_ms < min_ms ? min_ms : max_ms), base_(min_ms_), random_(seed) {}

  std::uint32_t next_delay_ms();
  void reset() { base_ = min_ms_; }

 private:
  std::uint32_t min_ms_;
  std::uint32_t max_ms_;
  std::uint32_t base_;
  std::minstd_rand random_;
};

}  // namespace carrier::federation
