#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "mqtt/codec/properties.hpp"
#include "mqtt/codec/reason_code.hpp"

namespace carrier::mqtt::codec {

// The protocol level byte of CONNECT: 3 = MQTT 3.1 ("MQIsdp"), 4 = 3.1.1, 5 = 5.0.
enum class Version : std::uint8_t { v3_1 = 3, v3_1_1 = 4, v5 = 5 };

const char* to_string(Version v) noexcept;

enum class PacketType : std::uint8_t {
  connect = 1,
  connack = 2,
  publish = 3,
  puback = 4,
  pubrec = 5,
  pubrel = 6,
  pubcomp = 7,
  subscribe = 8,
  suback = 9,
  unsubscribe = 10,
  unsuback = 11,
  pingreq = 12,
  pingresp = 13,
  disconnect = 14,
  auth = 15,
};

const char* to_string(PacketType t) noexcept;

struct Will {
  std::string topic;
  std::string payload;  // binary
  std::uint8_t qos = 0;
  bool retain = false;
  Properties properties;  // MQTT 5 will properties

  bool operator==(const Will&) const = default;
};

struct Connect {
  Version version = Version::v3_1_1;
  bool clean_start = true;  // "clean session" before MQTT 5
  std::uint16_t keep_alive = 0;  // seconds
  std::string client_id;
  std::optional<Will> will;
  std::optional<std::string> username;
  std::optional<std::string> password;  // binary
  Properties properties;

  bool operator==(const Connect&) const = default;
};

struct Connack {
  bool session_present = false;
  // MQTT 5 reason code; before 5 the return code (0 accepted .. 5 not authorized).
  ReasonCode reason = ReasonCode::success;
  Properties properties;

  bool operator==(const Connack&) const = default;
};

struct Publish {
  std::uint8_t qos = 0;
  bool dup = false;
  bool retain = false;
  std::string topic;  // may be empty in MQTT 5 when a topic alias stands for it
  std::uint16_t packet_id = 0;  // QoS 1 and 2 only
  Properties properties;
  std::string payload;

  bool operator==(const Publish&) const = default;
};

// PUBACK, PUBREC, PUBREL and PUBCOMP share one shape: a packet id, and in MQTT 5 a reason code
// and properties (both omitted on the wire when success and empty).
template <PacketType kType>
struct PublishResponse {
  static constexpr PacketType type = kType;
  std::uint16_t packet_id = 0;
  ReasonCode reason = ReasonCode::success;
  Properties properties;

  bool operator==(const PublishResponse&) const = default;
};
using Puback = PublishResponse<PacketType::puback>;
using Pubrec = PublishResponse<PacketType::pubrec>;
using Pubrel = PublishResponse<PacketType::pubrel>;
using Pubcomp = PublishResponse<PacketType::pubcomp>;

// One topic filter of a SUBSCRIBE with its options (no-local, retain-as-published and retain
// handling are MQTT 5 only and stay false / 0 before).
struct SubscribeTopic {
  std::string filter;
  std::uint8_t qos = 0;
  bool no_local = false;
  bool retain_as_published = false;
  std::uint8_t retain_handling = 0;  // 0 send retained, 1 only if new, 2 never

  bool operator==(const SubscribeTopic&) const = default;
};

struct Subscribe {
  std::uint16_t packet_id = 0;
  Properties properties;
  std::vector<SubscribeTopic> topics;  // at least one

  bool operator==(const Subscribe&) const = default;
};

struct Suback {
  std::uint16_t packet_id = 0;
  Properties properties;
  std::vector<ReasonCode> reasons;  // one per topic: granted QoS or a failure

  bool operator==(const Suback&) const = default;
};

struct Unsubscribe {
  std::uint16_t packet_id = 0;
  Properties properties;
  std::vector<std::string> filters;  // at least one

  bool operator==(const Unsubscribe&) const = default;
};

struct Unsuback {
  std::uint16_t packet_id = 0;
  Properties properties;
  std::vector<ReasonCode> reasons;  // MQTT 5 only; empty before

  bool operator==(const Unsuback&) const = default;
};

struct Pingreq {
  bool operator==(const Pingreq&) const = default;
};
struct Pingresp {
  bool operator==(const Pingresp&) const = default;
};

struct Disconnect {
  ReasonCode reason = ReasonCode::success;  // MQTT 5 only
  Properties properties;

  bool operator==(const Disconnect&) const = default;
};

// MQTT 5 only.
struct Auth {
  ReasonCode reason = ReasonCode::success;
  Properties properties;

  bool operator==(const Auth&) const = default;
};

using Packet = std::variant<Connect, Connack, Publish, Puback, Pubrec, Pubrel, Pubcomp, Subscribe, Suback, Unsubscribe,
                            Unsuback, Pingreq, Pingresp, Disconnect, Auth>;

PacketType type_of(const Packet& p) noexcept;

}  // namespace carrier::mqtt::codec
