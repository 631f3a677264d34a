#include "mqtt/codec/reason_code.hpp"

#include <algorithm>
#include <initializer_list>

#include "mqtt/codec/packet.hpp"

namespace carrier::mqtt::codec {

const char* to_string(ReasonCode code) noexcept {
  switch (value(code)) {
    case 0x00: return "success";
    case 0x01: return "granted qos 1";
    case 0x02: return "granted qos 2";
    case 0x04: return "disconnect with will message";
    case 0x10: return "no matching subscribers";
    case 0x11: return "no subscription existed";
    case 0x18: return "continue authentication";
    case 0x19: return "re-authenticate";
    case 0x80: return "unspecified error";
    case 0x81: return "malformed packet";
    case 0x82: return "protocol error";
    case 0x83: return "implementation specific error";
    case 0x84: return "unsupported protocol version";
    case 0x85: return "client identifier not valid";
    case 0x86: return "bad user name or password";
    case 0x87: return "not authorized";
    case 0x88: return "server unavailable";
    case 0x89: return "server busy";
    case 0x8A: return "banned";
    case 0x8B: return "server shutting down";
    case 0x8C: return "bad authentication method";
    case 0x8D: return "keep alive timeout";
    case 0x8E: return "session taken over";
    case 0x8F: return "topic filter invalid";
    case 0x90: return "topic name invalid";
    case 0x91: return "packet identifier in use";
    case 0x92: return "packet identifier not found";
    case 0x93: return "receive maximum exceeded";
    case 0x94: return "topic alias invalid";
    case 0x95: return "packet too large";
    case 0x96: return "message rate too high";
    case 0x97: return "quota exceeded";
    case 0x98: return "administrative action";
    case 0x99: return "payload format invalid";
    case 0x9A: return "retain not supported";
    case 0x9B: return "qos not supported";
    case 0x9C: return "use another server";
    case 0x9D: return "server moved";
    case 0x9E: return "shared subscriptions not supported";
    case 0x9F: return "connection rate exceeded";
    case 0xA0: return "maximum connect time";
    case 0xA1: return "subscription identifiers not supported";
    case 0xA2: return "wildcard subscriptions not supported";
    default: return "unknown reason code";
  }
}

namespace {

bool one_of(ReasonCode code, std::initializer_list<std::uint8_t> values) {
  return std::find(values.begin(), values.end(), value(code)) != values.end();
}

}  // namespace

bool is_allowed(PacketType type, ReasonCode code, Version version) noexcept {
  const bool v5 = version == Version::v5;
  switch (type) {
    case PacketType::connack:
      if (!v5) return value(code) <= 5;
      return one_of(code, {0x00, 0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8A, 0x8C, 0x90,
                           0x95, 0x97, 0x99, 0x9A, 0x9B, 0x9C, 0x9D, 0x9F});
    case PacketType::puback:
    case PacketType::pubrec:
      return one_of(code, {0x00, 0x10, 0x80, 0x83, 0x87, 0x90, 0x91, 0x97, 0x99});
    case PacketType::pubrel:
    case PacketType::pubcomp: return one_of(code, {0x00, 0x92});
    case PacketType::suback:
      if (!v5) return one_of(code, {0x00, 0x01, 0x02, 0x80});
      return one_of(code, {0x00, 0x01, 0x02, 0x80, 0x83, 0x87, 0x8F, 0x91, 0x97, 0x9E, 0xA1, 0xA2});
    case PacketType::unsuback: return one_of(code, {0x00, 0x11, 0x80, 0x83, 0x87, 0x8F, 0x91});
    case PacketType::disconnect:
      return one_of(code, {0x00, 0x04, 0x80, 0x81, 0x82, 0x83, 0x87, 0x89, 0x8B, 0x8D, 0x8E, 0x8F, 0x90, 0x93,
                           0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9A, 0x9B, 0x9C, 0x9D, 0x9E, 0x9F, 0xA0, 0xA1,
                           0xA2});
    case PacketType::auth: return one_of(code, {0x00, 0x18, 0x19});
    case PacketType::connect:
    case PacketType::publish:
    case PacketType::subscribe:
    case PacketType::unsubscribe:
    case PacketType::pingreq:
    case PacketType::pingresp: return false;
  }
  return false;
}

}  // namespace carrier::mqtt::codec
