#include "mqtt/codec/packet.hpp"

namespace carrier::mqtt::codec {

const char* to_string(Version v) noexcept {
  switch (v) {
    case Version::v3_1: return "3.1";
    case Version::v3_1_1: return "3.1.1";
    case Version::v5: return "5.0";
  }
  return "?";
}

const char* to_string(PacketType t) noexcept {
  switch (t) {
    case PacketType::connect: return "CONNECT";
    case PacketType::connack: return "CONNACK";
    case PacketType::publish: return "PUBLISH";
    case PacketType::puback: return "PUBACK";
    case PacketType::pubrec: return "PUBREC";
    case PacketType::pubrel: return "PUBREL";
    case PacketType::pubcomp: return "PUBCOMP";
    case PacketType::subscribe: return "SUBSCRIBE";
    case PacketType::suback: return "SUBACK";
    case PacketType::unsubscribe: return "UNSUBSCRIBE";
    case PacketType::unsuback: return "UNSUBACK";
    case PacketType::pingreq: return "PINGREQ";
    case PacketType::pingresp: return "PINGRESP";
    case PacketType::disconnect: return "DISCONNECT";
    case PacketType::auth: return "AUTH";
  }
  return "reserved";
}

PacketType type_of(const Packet& p) noexcept {
  return std::visit(
      [](const auto& x) -> PacketType {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Connect>) return PacketType::connect;
        if constexpr (std::is_same_v<T, Connack>) return PacketType::connack;
        if constexpr (std::is_same_v<T, Publish>) return PacketType::publish;
        if constexpr (std::is_same_v<T, Subscribe>) return PacketType::subscribe;
        if constexpr (std::is_same_v<T, Suback>) return PacketType::suback;
        if constexpr (std::is_same_v<T, Unsubscribe>) return PacketType::unsubscribe;
        if constexpr (std::is_same_v<T, Unsuback>) return PacketType::unsuback;
        if constexpr (std::is_same_v<T, Pingreq>) return PacketType::pingreq;
        if constexpr (std::is_same_v<T, Pingresp>) return PacketType::pingresp;
        if constexpr (std::is_same_v<T, Disconnect>) return PacketType::disconnect;
        if constexpr (std::is_same_v<T, Auth>) return PacketType::auth;
        if constexpr (requires { T::type; }) return T::type;
        return PacketType::connect;
      },
      p);
}

}  // namespace carrier::mqtt::codec
