#include "mqtt/codec/fixed_header.hpp"

#include <fmt/format.h>

namespace carrier::mqtt::codec {

std::uint8_t required_flags(PacketType type) noexcept {
  switch (type) {
    case PacketType::pubrel:
    case PacketType::subscribe:
    case PacketType::unsubscribe: return 0x02;
    default: return 0;
  }
}

FixedHeaderStep parse_fixed_header(std::string_view input, Version version) {
  FixedHeaderStep step;
  if (input.empty()) {
    step.need_at_least = 1;
    return step;
  }
  const auto first = static_cast<std::uint8_t>(input[0]);
  const std::uint8_t type = first >> 4;
  const std::uint8_t flags = first & 0x0F;
  if (type == 0 || (type == 15 && version != Version::v5)) {
    step.error = DecodeError{ReasonCode::malformed_packet, 0, fmt::format("reserved packet type {}", type)};
    return step;
  }
  const auto packet_type = static_cast<PacketType>(type);
  // MQTT 3.1 (2.1) leaves DUP, QoS and RETAIN "not used" outside PUBLISH and sets DUP on resent
  // PUBREL, SUBSCRIBE and UNSUBSCRIBE: its clients' flags are not checked. CONNECT's are checked
  // by its decoder, once the protocol level says which rules apply.
  const bool checked = packet_type != PacketType::publish && packet_type != PacketType::connect &&
                       version != Version::v3_1;
  if (checked && flags != required_flags(packet_type)) {
    step.error = DecodeError{ReasonCode::malformed_packet, 0,
                             fmt::format("{} with flags 0x{:x}, must be 0x{:x}", to_string(packet_type), flags,
                                         required_flags(packet_type))};
    return step;
  }
  std::uint32_t length = 0;
  for (std::size_t i = 1; i <= 4; ++i) {
    if (input.size() <= i) {
      step.need_at_least = i + 1;
      return step;
    }
    const auto byte = static_cast<std::uint8_t>(input[i]);
    length |= static_cast<std::uint32_t>(byte & 0x7F) << (7 * (i - 1));
    if ((byte & 0x80) == 0) {
      if (i > 1 && byte == 0) {
        step.error = DecodeError{ReasonCode::malformed_packet, 1, "remaining length is not minimally encoded"};
        return step;
      }
      step.header = FixedHeader{packet_type, flags, length, i + 1};
      return step;
    }
  }
  step.error = DecodeError{ReasonCode::malformed_packet, 1, "remaining length is longer than 4 bytes"};
  return step;
}

void put_fixed_header(std::string& out, PacketType type, std::uint8_t flags, std::uint32_t remaining_length) {
  out.push_back(static_cast<char>((static_cast<std::uint8_t>(type) << 4) | (flags & 0x0F)));
  put_variable_int(out, remaining_length);
}

}  // namespace carrier::mqtt::codec
