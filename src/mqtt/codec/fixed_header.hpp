#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "mqtt/codec/data_types.hpp"
#include "mqtt/codec/packet.hpp"

namespace carrier::mqtt::codec {

// The first 2..5 bytes of every packet (section 2.1): type, flags, remaining length.
struct FixedHeader {
  PacketType type = PacketType::connect;
  std::uint8_t flags = 0;
  std::uint32_t remaining_length = 0;
  std::size_t header_size = 0;  // 1 + the remaining length's bytes

  std::size_t packet_size() const { return header_size + remaining_length; }
};

// Either a header, or need-more (need_at_least: the input must grow to this many bytes), or an
// error: a reserved packet type (0, or 15 = AUTH before MQTT 5), flags other than the type
// requires (PUBLISH's and CONNECT's are checked by their decoders; MQTT 3.1 does not check them),
// a remaining length longer than four bytes or not minimally encoded. All malformed packet (0x81).
struct FixedHeaderStep {
  std::optional<FixedHeader> header;
  std::size_t need_at_least = 0;
  std::optional<DecodeError> error;
};

FixedHeaderStep parse_fixed_header(std::string_view input, Version version);

// The flags a packet type must carry (PUBREL, SUBSCRIBE, UNSUBSCRIBE: 0b0010; others 0);
// PUBLISH's vary.
std::uint8_t required_flags(PacketType type) noexcept;

void put_fixed_header(std::string& out, PacketType type, std::uint8_t flags, std::uint32_t remaining_length);

}  // namespace carrier::mqtt::codec
