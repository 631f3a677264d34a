// CONNECT and CONNACK (sections 3.1 and 3.2).

#include <fmt/format.h>

#include "mqtt/codec/encoder.hpp"
#include "mqtt/codec/packet_codecs.hpp"
#include "mqtt/codec/topic_syntax.hpp"

namespace carrier::mqtt::codec {

namespace detail {

bool decode_connect(Reader& in, std::uint8_t header_flags, Connect& out, std::optional<Version>& declared) {
  const std::size_t name_at = in.offset();
  std::string name;
  if (!in.utf8(name, "protocol name")) return false;
  std::uint8_t level = 0;
  const std::size_t level_at = in.offset();
  if (!in.u8(level, "protocol level")) return false;
  if (name != "MQTT" && name != "MQIsdp") {
    return in.fail(ReasonCode::protocol_error, name_at, fmt::format("unknown protocol name '{}'", name));
  }
  if (name == "MQIsdp" && level == 3) {
    out.version = Version::v3_1;
  } else if (name == "MQTT" && (level == 4 || level == 5)) {
    out.version = static_cast<Version>(level);
  } else {
    return in.fail(ReasonCode::unsupported_protocol_version, level_at,
                   fmt::format("protocol '{}' level {} is not supported", name, level));
  }
  declared = out.version;
  const bool v5 = out.version == Version::v5;
  // MQTT 3.1 defines neither the reserved bits below nor the fixed header's flags as checked;
  // 3.1.1 and 5.0 do (mosquitto draws the same line).
  const bool v3_1 = out.version == Version::v3_1;
  if (!v3_1 && header_flags != 0) {
    return in.fail(ReasonCode::malformed_packet, 0, fmt::format("CONNECT with flags 0x{:x}, must be 0", header_flags));
  }

  const std::size_t flags_at = in.offset();
  std::uint8_t flags = 0;
  if (!in.u8(flags, "connect flags")) return false;
  if (!v3_1 && (flags & 0x01) != 0) {
    return in.fail(ReasonCode::malformed_packet, flags_at, "reserved connect flag is set");
  }
  out.clean_start = (flags & 0x02) != 0;
  const bool will = (flags & 0x04) != 0;
  std::uint8_t will_qos = (flags >> 3) & 0x03;
  bool will_retain = (flags & 0x20) != 0;
  const bool has_password = (flags & 0x40) != 0;
  const bool has_username = (flags & 0x80) != 0;
  if (will_qos == 3) return in.fail(ReasonCode::malformed_packet, flags_at, "will QoS 3");
  if (!will && (will_qos != 0 || will_retain)) {
    if (!v3_1) return in.fail(ReasonCode::malformed_packet, flags_at, "will QoS or retain set without the will flag");
    will_qos = 0;  // 3.1: meaningless without a will
    will_retain = false;
  }
  if (!v5 && has_password && !has_username) {
    return in.fail(ReasonCode::malformed_packet, flags_at, "password flag without user name flag");
  }
  if (!in.u16(out.keep_alive, "keep alive")) return false;
  if (v5 && !decode_properties(in, PropertyContext::connect, out.properties)) return false;

  if (!in.utf8(out.client_id, "client identifier")) return false;
  if (will) {
    Will w;
    w.qos = will_qos;
    w.retain = will_retain;
    if (v5 && !decode_properties(in, PropertyContext::will, w.properties)) return false;
    const std::size_t topic_at = in.offset();
    if (!in.utf8(w.topic, "will topic")) return false;
    if (!is_valid_topic_name(w.topic)) {
      return in.fail(ReasonCode::topic_name_invalid, topic_at, "will topic is empty or has wildcards");
    }
    if (!in.binary(w.payload, "will payload")) return false;
    out.will = std::move(w);
  }
  // A 3.1 CONNECT that ends where a user name or password flag promised one is taken without it,
  // as mosquitto takes it from 3.1 clients; from 3.1.1 on it is malformed.
  if (has_username && !(v3_1 && in.at_end())) {
    std::string user;
    if (!in.utf8(user, "user name")) return false;
    out.username = std::move(user);
  }
  if (has_password && !(v3_1 && in.at_end())) {
    std::string password;
    if (!in.binary(password, "password")) return false;
    out.password = std::move(password);
  }
  return true;
}

bool decode_connack(Reader& in, Version version, Connack& out) {
  const std::size_t flags_at = in.offset();
  std::uint8_t flags = 0;
  if (!in.u8(flags, "connack flags")) return false;
  if ((flags & 0xFE) != 0) return in.fail(ReasonCode::malformed_packet, flags_at, "reserved connack flags are set");
  out.session_present = (flags & 0x01) != 0;
  const std::size_t code_at = in.offset();
  std::uint8_t code = 0;
  if (!in.u8(code, "connack reason code")) return false;
  out.reason = static_cast<ReasonCode>(code);
  if (!is_allowed(PacketType::connack, out.reason, version)) {
    return in.fail(ReasonCode::protocol_error, code_at, fmt::format("CONNACK code 0x{:02x} is not defined", code));
  }
  if (version == Version::v5 && !decode_properties(in, PropertyContext::connack, out.properties)) return false;
  return true;
}

}  // namespace detail

void encode(const Connect& p, std::string& out) {
  const bool v5 = p.version == Version::v5;
  std::string body;
  put_string(body, p.version == Version::v3_1 ? "MQIsdp" : "MQTT");
  put_u8(body, static_cast<std::uint8_t>(p.version));
  std::uint8_t flags = 0;
  if (p.clean_start) flags |= 0x02;
  if (p.will) {
    flags |= 0x04;
    flags |= static_cast<std::uint8_t>((p.will->qos & 0x03) << 3);
    if (p.will->retain) flags |= 0x20;
  }
  if (p.password) flags |= 0x40;
  if (p.username) flags |= 0x80;
  put_u8(body, flags);
  put_u16(body, p.keep_alive);
  if (v5) encode_properties(p.properties, PropertyContext::connect, body);
  put_string(body, p.client_id);
  if (p.will) {
    if (v5) encode_properties(p.will->properties, PropertyContext::will, body);
    put_string(body, p.will->topic);
    put_string(body, p.will->payload);
  }
  if (p.username) put_string(body, *p.username);
  if (p.password) put_string(body, *p.password);
  detail::finish(out, PacketType::connect, 0, body);
}

void encode(const Connack& p, Version version, std::string& out) {
  std::string body;
  put_u8(body, p.session_present ? 1 : 0);
  put_u8(body, value(p.reason));
  if (version == Version::v5) encode_properties(p.properties, PropertyContext::connack, body);
  detail::finish(out, PacketType::connack, 0, body);
}

}  // namespace carrier::mqtt::codec
