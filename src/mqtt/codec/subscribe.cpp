// SUBSCRIBE, SUBACK, UNSUBSCRIBE, UNSUBACK (sections 3.8 to 3.11).

#include <fmt/format.h>

#include "mqtt/codec/encoder.hpp"
#include "mqtt/codec/packet_codecs.hpp"
#include "mqtt/codec/topic_syntax.hpp"

namespace carrier::mqtt::codec {

namespace detail {

namespace {

bool read_filter(Reader& in, std::string& out) {
  const std::size_t at = in.offset();
  if (!in.utf8(out, "topic filter")) return false;
  const bool valid = is_shared_filter(out) ? parse_shared_filter(out).has_value() : is_valid_topic_filter(out);
  if (!valid) return in.fail(ReasonCode::malformed_packet, at, fmt::format("invalid topic filter '{}'", out));
  return true;
}

bool read_reasons(Reader& in, PacketType type, Version version, std::vector<ReasonCode>& out) {
  while (!in.at_end()) {
    const std::size_t at = in.offset();
    std::uint8_t code = 0;
    if (!in.u8(code, "reason code")) return false;
    const auto reason = static_cast<ReasonCode>(code);
    if (!is_allowed(type, reason, version)) {
      return in.fail(ReasonCode::protocol_error, at,
                     fmt::format("reason code 0x{:02x} is not allowed in {}", code, to_string(type)));
    }
    out.push_back(reason);
  }
  if (out.empty()) return in.fail(ReasonCode::protocol_error, in.offset(), fmt::format("{} without reason codes", to_string(type)));
  return true;
}

}  // namespace

bool decode_subscribe(Reader& in, Version version, Subscribe& out) {
  const bool v5 = version == Version::v5;
  if (!read_packet_id(in, out.packet_id)) return false;
  if (v5 && !decode_properties(in, PropertyContext::subscribe, out.properties)) return false;
  while (!in.at_end()) {
    SubscribeTopic t;
    if (!read_filter(in, t.filter)) return false;
    const std::size_t at = in.offset();
    std::uint8_t options = 0;
    if (!in.u8(options, "subscription options")) return false;
    t.qos = options & 0x03;
    if (t.qos == 3) return in.fail(ReasonCode::malformed_packet, at, "subscription QoS 3");
    if (!v5) {
      if ((options & 0xFC) != 0) return in.fail(ReasonCode::malformed_packet, at, "reserved subscription option bits set");
    } else {
      if ((options & 0xC0) != 0) return in.fail(ReasonCode::malformed_packet, at, "reserved subscription option bits set");
      t.no_local = (options & 0x04) != 0;
      t.retain_as_published = (options & 0x08) != 0;
      t.retain_handling = (options >> 4) & 0x03;
      if (t.retain_handling == 3) return in.fail(ReasonCode::protocol_error, at, "retain handling 3");
      if (t.no_local && is_shared_filter(t.filter)) {
        return in.fail(ReasonCode::protocol_error, at, "no local on a shared subscription");
      }
    }
    out.topics.push_back(std::move(t));
  }
  if (out.topics.empty()) return in.fail(ReasonCode::protocol_error, in.offset(), "SUBSCRIBE without topic filters");
  return true;
}

bool decode_suback(Reader& in, Version version, Suback& out) {
  if (!read_packet_id(in, out.packet_id)) return false;
  if (version == Version::v5 && !decode_properties(in, PropertyContext::suback, out.properties)) return false;
  return read_reasons(in, PacketType::suback, version, out.reasons);
}

bool decode_unsubscribe(Reader& in, Version version, Unsubscribe& out) {
  if (!read_packet_id(in, out.packet_id)) return false;
  if (version == Version::v5 && !decode_properties(in, PropertyContext::unsubscribe, out.properties)) return false;
  while (!in.at_end()) {
    std::string filter;
    if (!read_filter(in, filter)) return false;
    out.filters.push_back(std::move(filter));
  }
  if (out.filters.empty()) return in.fail(ReasonCode::protocol_error, in.offset(), "UNSUBSCRIBE without topic filters");
  return true;
}

bool decode_unsuback(Reader& in, Version version, Unsuback& out) {
  if (!read_packet_id(in, out.packet_id)) return false;
  if (version != Version::v5) {
    if (!in.at_end()) return in.fail(ReasonCode::malformed_packet, in.offset(), "UNSUBACK longer than 2 bytes");
    return true;
  }
  if (!decode_properties(in, PropertyContext::unsuback, out.properties)) return false;
  return read_reasons(in, PacketType::unsuback, version, out.reasons);
}

}  // namespace detail

void encode(const Subscribe& p, Version version, std::string& out) {
  const bool v5 = version == Version::v5;
  std::string body;
  put_u16(body, p.packet_id);
  if (v5) encode_properties(p.properties, PropertyContext::subscribe, body);
  for (const auto& t : p.topics) {
    put_string(body, t.filter);
    std::uint8_t options = t.qos & 0x03;
    if (v5) {
      if (t.no_local) options |= 0x04;
      if (t.retain_as_published) options |= 0x08;
      options |= static_cast<std::uint8_t>((t.retain_handling & 0x03) << 4);
    }
    put_u8(body, options);
  }
  detail::finish(out, PacketType::subscribe, required_flags(PacketType::subscribe), body);
}

void encode(const Suback& p, Version version, std::string& out) {
  std::string body;
  put_u16(body, p.packet_id);
  if (version == Version::v5) encode_properties(p.properties, PropertyContext::suback, body);
  for (auto r : p.reasons) put_u8(body, value(r));
  detail::finish(out, PacketType::suback, 0, body);
}

void encode(const Unsubscribe& p, Version version, std::string& out) {
  std::string body;
  put_u16(body, p.packet_id);
  if (version == Version::v5) encode_properties(p.properties, PropertyContext::unsubscribe, body);
  for (const auto& f : p.filters) put_string(body, f);
  detail::finish(out, PacketType::unsubscribe, required_flags(PacketType::unsubscribe), body);
}

void encode(const Unsuback& p, Version version, std::string& out) {
  std::string body;
  put_u16(body, p.packet_id);
  if (version == Version::v5) {
    encode_properties(p.properties, PropertyContext::unsuback, body);
    for (auto r : p.reasons) put_u8(body, value(r));
  }
  detail::finish(out, PacketType::unsuback, 0, body);
}

}  // namespace carrier::mqtt::codec
