// PINGREQ, PINGRESP, DISCONNECT and AUTH (sections 3.12 to 3.15).

#include <fmt/format.h>

#include "mqtt/codec/encoder.hpp"
#include "mqtt/codec/packet_codecs.hpp"

namespace carrier::mqtt::codec {

namespace detail {

bool decode_empty(Reader& in, PacketType type) {
  if (!in.at_end()) {
    return in.fail(ReasonCode::malformed_packet, in.offset(), fmt::format("{} with a remaining length", to_string(type)));
  }
  return true;
}

namespace {

bool decode_reason_and_properties(Reader& in, PacketType type, PropertyContext context, ReasonCode& reason,
                                  Properties& properties) {
  if (in.at_end()) return true;
  const std::size_t at = in.offset();
  std::uint8_t code = 0;
  if (!in.u8(code, "reason code")) return false;
  reason = static_cast<ReasonCode>(code);
  if (!is_allowed(type, reason, Version::v5)) {
    return in.fail(ReasonCode::protocol_error, at,
                   fmt::format("reason code 0x{:02x} is not allowed in {}", code, to_string(type)));
  }
  if (in.at_end()) return true;
  return decode_properties(in, context, properties);
}

}  // namespace

bool decode_disconnect(Reader& in, Version version, Disconnect& out) {
  if (version != Version::v5) return decode_empty(in, PacketType::disconnect);
  return decode_reason_and_properties(in, PacketType::disconnect, PropertyContext::disconnect, out.reason,
                                      out.properties);
}

bool decode_auth(Reader& in, Auth& out) {
  return decode_reason_and_properties(in, PacketType::auth, PropertyContext::auth, out.reason, out.properties);
}

}  // namespace detail

void encode(const Pingreq&, Version, std::string& out) { put_fixed_header(out, PacketType::pingreq, 0, 0); }
void encode(const Pingresp&, Version, std::string& out) { put_fixed_header(out, PacketType::pingresp, 0, 0); }

namespace {

void encode_reason_and_properties(PacketType type, PropertyContext context, ReasonCode reason,
                                  const Properties& properties, std::string& out) {
  std::string body;
  if (reason != ReasonCode::success || !properties.empty()) {
    put_u8(body, value(reason));
    if (!properties.empty()) encode_properties(properties, context, body);
  }
  detail::finish(out, type, 0, body);
}

}  // namespace

void encode(const Disconnect& p, Version version, std::string& out) {
  if (version != Version::v5) {
    put_fixed_header(out, PacketType::disconnect, 0, 0);
    return;
  }
  encode_reason_and_properties(PacketType::disconnect, PropertyContext::disconnect, p.reason, p.properties, out);
}

void encode(const Auth& p, Version version, std::string& out) {
  encode_reason_and_properties(PacketType::auth, PropertyContext::auth, p.reason, p.properties, out);
}

}  // namespace carrier::mqtt::codec
