// PUBLISH and its acknowledgements PUBACK, PUBREC, PUBREL, PUBCOMP (sections 3.3 to 3.7).

#include <fmt/format.h>

#include "mqtt/codec/encoder.hpp"
#include "mqtt/codec/packet_codecs.hpp"
#include "mqtt/codec/topic_syntax.hpp"

namespace carrier::mqtt::codec {

namespace detail {

bool read_packet_id(Reader& in, std::uint16_t& out) {
  const std::size_t at = in.offset();
  if (!in.u16(out, "packet identifier")) return false;
  if (out == 0) return in.fail(ReasonCode::protocol_error, at, "packet identifier 0");
  return true;
}

void finish(std::string& out, PacketType type, std::uint8_t flags, const std::string& body) {
  put_fixed_header(out, type, flags, static_cast<std::uint32_t>(body.size()));
  out.append(body);
}

bool decode_publish(Reader& in, std::uint8_t flags, Version version, Publish& out) {
  out.dup = (flags & 0x08) != 0;
  out.qos = (flags >> 1) & 0x03;
  out.retain = (flags & 0x01) != 0;
  // Offset 0: the flags are in the packet's first byte.
  if (out.qos == 3) return in.fail(ReasonCode::malformed_packet, 0, "PUBLISH with QoS 3");
  if (out.qos == 0 && out.dup) return in.fail(ReasonCode::malformed_packet, 0, "PUBLISH with QoS 0 and DUP set");
  const std::size_t topic_at = in.offset();
  if (!in.utf8(out.topic, "topic name")) return false;
  if (has_wildcard(out.topic)) {
    return in.fail(ReasonCode::topic_name_invalid, topic_at, "topic name contains a wildcard");
  }
  if (out.qos > 0 && !read_packet_id(in, out.packet_id)) return false;
  if (version == Version::v5) {
    if (!decode_properties(in, PropertyContext::publish, out.properties)) return false;
    if (out.topic.empty() && !out.properties.topic_alias) {
      return in.fail(ReasonCode::protocol_error, topic_at, "empty topic name without a topic alias");
    }
  } else if (out.topic.empty()) {
    return in.fail(ReasonCode::topic_name_invalid, topic_at, "empty topic name");
  }
  out.payload.assign(in.rest());
  return true;
}

bool decode_publish_response(Reader& in, PacketType type, Version version, std::uint16_t& packet_id,
                             ReasonCode& reason, Properties& properties) {
  if (!read_packet_id(in, packet_id)) return false;
  if (version != Version::v5) {
    if (!in.at_end()) {
      return in.fail(ReasonCode::malformed_packet, in.offset(), fmt::format("{} longer than 2 bytes", to_string(type)));
    }
    return true;
  }
  if (in.at_end()) return true;  // success, no properties
  const std::size_t at = in.offset();
  std::uint8_t code = 0;
  if (!in.u8(code, "reason code")) return false;
  reason = static_cast<ReasonCode>(code);
  if (!is_allowed(type, reason, version)) {
    return in.fail(ReasonCode::protocol_error, at,
                   fmt::format("reason code 0x{:02x} is not allowed in {}", code, to_string(type)));
  }
  if (in.at_end()) return true;
  return decode_properties(in, PropertyContext::publish_response, properties);
}

}  // namespace detail

void encode(const Publish& p, Version version, std::string& out) { encode_publish(p, p.payload, version, out); }

void encode_publish(const Publish& p, std::string_view payload, Version version, std::string& out) {
  // Sized first and written straight into `out`: a delivery encodes with no allocation of its own.
  std::size_t head = 2 + p.topic.size() + (p.qos > 0 ? 2 : 0);
  if (version == Version::v5) head += encoded_properties_size(p.properties);
  std::uint8_t flags = static_cast<std::uint8_t>((p.qos & 0x03) << 1);
  if (p.dup) flags |= 0x08;
  if (p.retain) flags |= 0x01;
  put_fixed_header(out, PacketType::publish, flags, static_cast<std::uint32_t>(head + payload.size()));
  put_string(out, p.topic);
  if (p.qos > 0) put_u16(out, p.packet_id);
  if (version == Version::v5) encode_properties(p.properties, PropertyContext::publish, out);
  out.append(payload);
}

namespace {

template <PacketType kType>
void encode_response(const PublishResponse<kType>& p, Version version, std::string& out) {
  std::string body;
  put_u16(body, p.packet_id);
  if (version == Version::v5 && (p.reason != ReasonCode::success || !p.properties.empty())) {
    put_u8(body, value(p.reason));
    if (!p.properties.empty()) encode_properties(p.properties, PropertyContext::publish_response, body);
  }
  detail::finish(out, kType, required_flags(kType), body);
}

}  // namespace

void encode(const Puback& p, Version version, std::string& out) { encode_response(p, version, out); }
void encode(const Pubrec& p, Version version, std::string& out) { encode_response(p, version, out); }
void encode(const Pubrel& p, Version version, std::string& out) { encode_response(p, version, out); }
void encode(const Pubcomp& p, Version version, std::string& out) { encode_response(p, version, out); }

}  // namespace carrier::mqtt::codec
