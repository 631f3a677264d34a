#pragma once

#include <array>
#include <compare>
#include <cstdint>

namespace carrier::federation::codec {

// A 128-bit identifier as JPPP carries it (node, destination, origin, previous hop, message):
// sixteen opaque bytes, sent as they are.
struct Id128 {
  std::array<std::uint8_t, 16> bytes{};

  auto operator<=>(const Id128&) const = default;
};

}  // namespace carrier::federation::codec
