#pragma once

#include <cstdint>

namespace carrier::mqtt::codec {

enum class PacketType : std::uint8_t;
enum class Version : std::uint8_t;

// MQTT 5 reason codes (section 2.4). Several names share a value, as in the spec. Before MQTT
// 5, CONNACK carries a return code (0..5) and SUBACK a granted QoS or 0x80 in the same byte:
// those are kept in this type too.
enum class ReasonCode : std::uint8_t {
  success = 0x00,
  normal_disconnection = 0x00,
  granted_qos_0 = 0x00,
  granted_qos_1 = 0x01,
  granted_qos_2 = 0x02,
  disconnect_with_will_message = 0x04,
  no_matching_subscribers = 0x10,
  no_subscription_existed = 0x11,
  continue_authentication = 0x18,
  re_authenticate = 0x19,
  unspecified_error = 0x80,
  malformed_packet = 0x81,
  protocol_error = 0x82,
  implementation_specific_error = 0x83,
  unsupported_protocol_version = 0x84,
  client_identifier_not_valid = 0x85,
  bad_user_name_or_password = 0x86,
  not_authorized = 0x87,
  server_unavailable = 0x88,
  server_busy = 0x89,
  banned = 0x8A,
  server_shutting_down = 0x8B,
  bad_authentication_method = 0x8C,
  keep_alive_timeout = 0x8D,
  session_taken_over = 0x8E,
  topic_filter_invalid = 0x8F,
  topic_name_invalid = 0x90,
  packet_identifier_in_use = 0x91,
  packet_identifier_not_found = 0x92,
  receive_maximum_exceeded = 0x93,
  topic_alias_invalid = 0x94,
  packet_too_large = 0x95,
  message_rate_too_high = 0x96,
  quota_exceeded = 0x97,
  administrative_action = 0x98,
  payload_format_invalid = 0x99,
  retain_not_supported = 0x9A,
  qos_not_supported = 0x9B,
  use_another_server = 0x9C,
  server_moved = 0x9D,
  shared_subscriptions_not_supported = 0x9E,
  connection_rate_exceeded = 0x9F,
  maximum_connect_time = 0xA0,
  subscription_identifiers_not_supported = 0xA1,
  wildcard_subscriptions_not_supported = 0xA2,
};

// MQTT 3.1 / 3.1.1 CONNACK return codes.
enum class ConnectReturnCode : std::uint8_t {
  accepted = 0,
  unacceptable_protocol_version = 1,
  identifier_rejected = 2,
  server_unavailable = 3,
  bad_user_name_or_password = 4,
  not_authorized = 5,
};

// "malformed packet", "0x95"... for logs and reason strings; unknown values print as hex.
const char* to_string(ReasonCode code) noexcept;

// Whether `code` may appear in a packet of `type` under `version` (the spec's per-packet lists;
// before MQTT 5: CONNACK return codes 0..5 and SUBACK 0, 1, 2, 0x80). The decoder rejects others.
bool is_allowed(PacketType type, ReasonCode code, Version version) noexcept;

constexpr std::uint8_t value(ReasonCode code) noexcept { return static_cast<std::uint8_t>(code); }
constexpr bool is_failure(ReasonCode code) noexcept { return value(code) >= 0x80; }

}  // namespace carrier::mqtt::codec
