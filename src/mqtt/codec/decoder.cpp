#include "mqtt/codec/decoder.hpp"

#include <fmt/format.h>

#include "mqtt/codec/fixed_header.hpp"
#include "mqtt/codec/packet_codecs.hpp"

namespace carrier::mqtt::codec {

namespace {

template <class T>
bool decode_response(Reader& in, PacketType type, Version version, std::optional<Packet>& out) {
  T p;
  if (!detail::decode_publish_response(in, type, version, p.packet_id, p.reason, p.properties)) return false;
  out = std::move(p);
  return true;
}

template <class T, class Fn>
bool decode_as(std::optional<Packet>& out, Fn&& fn) {
  T p;
  if (!fn(p)) return false;
  out = std::move(p);
  return true;
}

}  // namespace

DecodeResult decode(std::string_view input, Version version, const DecoderLimits& limits) {
  DecodeResult result;
  auto head = parse_fixed_header(input, version);
  if (head.error) {
    result.error = std::move(head.error);
    return result;
  }
  if (!head.header) {
    result.need_at_least = head.need_at_least;
    return result;
  }
  const FixedHeader h = *head.header;
  if (h.packet_size() > limits.max_packet_size) {
    result.error = DecodeError{ReasonCode::packet_too_large, 1,
                               fmt::format("{} of {} bytes exceeds the maximum packet size {}", to_string(h.type),
                                           h.packet_size(), limits.max_packet_size)};
    return result;
  }
  if (input.size() < h.packet_size()) {
    result.need_at_least = h.packet_size();
    return result;
  }
  Reader in(input.substr(h.header_size, h.remaining_length), h.header_size);
  std::optional<Packet> packet;
  bool ok = false;
  switch (h.type) {
    case PacketType::connect:
      ok = decode_as<Connect>(packet, [&](Connect& p) { return detail::decode_connect(in, h.flags, p, result.connect_version); });
      break;
    case PacketType::connack:
      ok = decode_as<Connack>(packet, [&](Connack& p) { return detail::decode_connack(in, version, p); });
      break;
    case PacketType::publish:
      ok = decode_as<Publish>(packet, [&](Publish& p) { return detail::decode_publish(in, h.flags, version, p); });
      break;
    case PacketType::puback: ok = decode_response<Puback>(in, h.type, version, packet); break;
    case PacketType::pubrec: ok = decode_response<Pubrec>(in, h.type, version, packet); break;
    case PacketType::pubrel: ok = decode_response<Pubrel>(in, h.type, version, packet); break;
    case PacketType::pubcomp: ok = decode_response<Pubcomp>(in, h.type, version, packet); break;
    case PacketType::subscribe:
      ok = decode_as<Subscribe>(packet, [&](Subscribe& p) { return detail::decode_subscribe(in, version, p); });
      break;
    case PacketType::suback:
      ok = decode_as<Suback>(packet, [&](Suback& p) { return detail::decode_suback(in, version, p); });
      break;
    case PacketType::unsubscribe:
      ok = decode_as<Unsubscribe>(packet, [&](Unsubscribe& p) { return detail::decode_unsubscribe(in, version, p); });
      break;
    case PacketType::unsuback:
      ok = decode_as<Unsuback>(packet, [&](Unsuback& p) { return detail::decode_unsuback(in, version, p); });
      break;
    case PacketType::pingreq:
      ok = detail::decode_empty(in, h.type);
      if (ok) packet = Pingreq{};
      break;
    case PacketType::pingresp:
      ok = detail::decode_empty(in, h.type);
      if (ok) packet = Pingresp{};
      break;
    case PacketType::disconnect:
      ok = decode_as<Disconnect>(packet, [&](Disconnect& p) { return detail::decode_disconnect(in, version, p); });
      break;
    case PacketType::auth: ok = decode_as<Auth>(packet, [&](Auth& p) { return detail::decode_auth(in, p); }); break;
  }
  if (ok && !in.at_end()) {
    in.fail(ReasonCode::malformed_packet, in.offset(),
            fmt::format("{} has {} byte(s) after its last field", to_string(h.type), in.remaining()));
    ok = false;
  }
  if (!ok) {
    result.error = std::move(in.error());
    if (!result.error) result.error = DecodeError{ReasonCode::malformed_packet, 0, "undecodable packet"};
    return result;
  }
  result.consumed = h.packet_size();
  result.packet = std::move(packet);
  return result;
}

}  // namespace carrier::mqtt::codec
