#pragma once

#include <cstdint>
#include <limits>

namespace carrier::core {

// Times built from client input (a `delay`, a time-to-live, an expiry interval): epoch
// milliseconds plus a span that may be as large as its field allows. The sum saturates at
// "never" instead of wrapping into the past, where the message would be due or expired at once.
inline constexpr std::int64_t kNeverMs = std::numeric_limits<std::int64_t>::max();

inline constexpr std::int64_t deadline_after(std::int64_t base_ms, std::uint64_t span_ms) {
  if (base_ms < 0) {
    // Room below zero first: base + span may still be negative or small.
    const std::uint64_t below = static_cast<std::uint64_t>(-(base_ms + 1)) + 1;
    if (span_ms < below) return base_ms + static_cast<std::int64_t>(span_ms);
    span_ms -= below;
    base_ms = 0;
  }
  const std::uint64_t room = static_cast<std::uint64_t>(kNeverMs - base_ms);
  return span_ms >= room ? kNeverMs : base_ms + static_cast<std::int64_t>(span_ms);
}

}  // namespace carrier::core
