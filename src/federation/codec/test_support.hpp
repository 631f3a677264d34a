#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "federation/codec/basic_message.hpp"
#include "federation/codec/id128.hpp"

// Helpers for the codec's tests: spelling wire bytes by hand, and the truncation sweep every
// structure must pass.
namespace carrier::federation::codec::testing {

inline std::string be32(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

inline std::string pstr(std::string_view s) { return std::string(s) + '\0'; }

// 16 bytes first, first+1, ...: distinct ids that show where each one lands.
inline Id128 make_id(std::uint8_t first) {
  Id128 id;
  for (std::size_t i = 0; i < id.bytes.size(); ++i) id.bytes[i] = static_cast<std::uint8_t>(first + i);
  return id;
}

inline std::string id_bytes(const Id128& id) {
  return std::string(reinterpret_cast<const char*>(id.bytes.data()), id.bytes.size());
}

// A BasicMessage with every field set, the ids distinct, the payload holding a NUL.
inline BasicMessage sample_message() {
  BasicMessage m;
  m.ttl = 4;
  m.hops = 1;
  m.selector = "orders.eu";
  m.destination = make_id(0x10);
  m.origin = make_id(0x20);
  m.previous = make_id(0x30);
  m.message_id = make_id(0x40);
  m.payload = std::string("pay\0load", 8);
  m.stack = {7, -2};
  return m;
}

// Every strict prefix of `wire` must be refused by `decode` (never read past it, never
// accepted as something shorter).
template <class Decode>
void expect_every_prefix_refused(std::string_view wire, Decode decode) {
  for (std::size_t n = 0; n < wire.size(); ++n) {
    // A copy of exactly n bytes, so a read past the end is an ASan error, not a silent read.
    const std::string prefix(wire.substr(0, n));
    auto decoded = decode(std::string_view(prefix));
    EXPECT_FALSE(decoded.has_value()) << "a prefix of " << n << " of " << wire.size() << " bytes decoded";
  }
}

}  // namespace carrier::federation::codec::testing
