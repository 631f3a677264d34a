#include "federation/reconnect_backoff.hpp"

#include <algorithm>

namespace carrier::federation {

std::uint32_t ReconnectBackoff::next_delay_ms() {
  const std::uint32_t low = std::max(min_ms_, base_ / 2);
  const std::uint32_t delay = std::uniform_int_distribution<std::uint32_t>(low, base_)(random_);
  base_ = static_cast<std::uint32_t>(std::min<std::uint64_t>(std::uint64_t{base_} * 2, max_ms_));
  return delay;
}

}  // namespace carrier::federation
