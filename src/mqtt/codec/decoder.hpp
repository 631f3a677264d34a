#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "mqtt/codec/data_types.hpp"
#include "mqtt/codec/packet.hpp"

namespace carrier::mqtt::codec {

struct DecoderLimits {
  // The largest whole packet accepted (fixed header included); larger ones are refused as soon
  // as their fixed header arrives, with packet too large (0x95).
  std::size_t max_packet_size = 268'435'460;
};

// The outcome of one decode call: exactly one of a packet, need-more, or an error.
struct DecodeResult {
  std::size_t consumed = 0;      // with a packet: its size, to drop from the front of the input
  std::optional<Packet> packet;
  std::size_t need_at_least = 0;  // need-more: the input must grow to at least this many bytes
  std::optional<DecodeError> error;
  // A CONNECT whose protocol level was read: the version it asked for, so a server can answer a
  // bad CONNECT with a CONNACK of the right shape.
  std::optional<Version> connect_version;

  bool need_more() const { return !packet && !error; }
};

// Decodes at most one packet from the front of `input`. Pure and stateless: no I/O, clock or
// logging; each call re-parses the current packet from its first byte, so the result does not
// depend on how the input was split. `version` is the connection's protocol level (CONNECT
// declares its own). Every error names a reason code: malformed packet (0x81) for bytes that do
// not parse, protocol error (0x82) for well-formed packets the spec forbids, packet too large
// (0x95), topic name invalid (0x90), unsupported protocol version (0x84); and the byte offset
// of the problem in `input`.
DecodeResult decode(std::string_view input, Version version, const DecoderLimits& limits);

}  // namespace carrier::mqtt::codec
