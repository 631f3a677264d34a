#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "federation/codec/id128.hpp"
#include "federation/codec/limits.hpp"
#include "federation/codec/primitives.hpp"

namespace carrier::federation::codec {

// JPPP's BasicMessage: what crosses a link. On the wire, in this order (docs/federation.md):
//   TTL i32, hops i32, payload length u32, stack size u32, selector PString,
//   destination id, origin id, previous-hop id, message id (16 bytes each),
//   payload (payload length bytes), stack (stack size x i32)
// payload length and stack size are not members: they are payload.size() and stack.size().
struct BasicMessage {
  std::int32_t ttl = 5;     // hops left; a node drops the message at 0
  std::int32_t hops = 0;    // hops taken so far
  std::string selector;     // Carrier: the destination name
  Id128 destination;
  Id128 origin;
  Id128 previous;
  Id128 message_id;
  std::string payload;                // Carrier: the encoded message (message_payload.hpp)
  std::vector<std::int32_t> stack;    // session ids of the links it came in on, oldest first

  bool operator==(const BasicMessage&) const = default;
};

// Appends the encoding. Errc::invalid_argument (and `out` unchanged) if the selector holds a
// NUL or the payload or stack is too large for a 32-bit length.
Status encode_basic_message(const BasicMessage& m, std::string& out);

// Reads one BasicMessage from `in`, checking every length against `limits` and against the
// bytes left before allocating.
Result<BasicMessage> read_basic_message(WireReader& in, const Limits& limits);

// Decodes exactly one BasicMessage occupying all of `bytes` (trailing bytes are an error).
Result<BasicMessage> decode_basic_message(std::string_view bytes, const Limits& limits);

}  // namespace carrier::federation::codec
