#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace carrier::mqtt::codec {

class Reader;

// MQTT 5 property identifiers (section 2.2.2.2).
enum class PropertyId : std::uint8_t {
  payload_format_indicator = 0x01,
  message_expiry_interval = 0x02,
  content_type = 0x03,
  response_topic = 0x08,
  correlation_data = 0x09,
  subscription_identifier = 0x0B,
  session_expiry_interval = 0x11,
  assigned_client_identifier = 0x12,
  server_keep_alive = 0x13,
  authentication_method = 0x15,
  authentication_data = 0x16,
  request_problem_information = 0x17,
  will_delay_interval = 0x18,
  request_response_information = 0x19,
  response_information = 0x1A,
  server_reference = 0x1C,
  reason_string = 0x1F,
  receive_maximum = 0x21,
  topic_alias_maximum = 0x22,
  topic_alias = 0x23,
  maximum_qos = 0x24,
  retain_available = 0x25,
  user_property = 0x26,
  maximum_packet_size = 0x27,
  wildcard_subscription_available = 0x28,
  subscription_identifier_available = 0x29,
  shared_subscription_available = 0x2A,
};

const char* to_string(PropertyId id) noexcept;

// Where a property block sits: each property is allowed in some of these only.
enum class PropertyContext : std::uint8_t {
  connect,
  connack,
  publish,
  will,
  publish_response,  // PUBACK, PUBREC, PUBREL, PUBCOMP
  subscribe,
  suback,
  unsubscribe,
  unsuback,
  disconnect,
  auth,
};

// Every MQTT 5 property, typed. Absent = nullopt / empty. Binary data (correlation and
// authentication data) is kept in std::string. Only user properties and subscription
// identifiers may repeat; user properties keep their order and duplicates.
struct Properties {
  std::optional<std::uint8_t> payload_format_indicator;
  std::optional<std::uint32_t> message_expiry_interval;
  std::optional<std::string> content_type;
  std::optional<std::string> response_topic;
  std::optional<std::string> correlation_data;
  std::vector<std::uint32_t> subscription_identifiers;
  std::optional<std::uint32_t> session_expiry_interval;
  std::optional<std::string> assigned_client_identifier;
  std::optional<std::uint16_t> server_keep_alive;
  std::optional<std::string> authentication_method;
  std::optional<std::string> authentication_data;
  std::optional<std::uint8_t> request_problem_information;
  std::optional<std::uint32_t> will_delay_interval;
  std::optional<std::uint8_t> request_response_information;
  std::optional<std::string> response_information;
  std::optional<std::string> server_reference;
  std::optional<std::string> reason_string;
  std::optional<std::uint16_t> receive_maximum;
  std::optional<std::uint16_t> topic_alias_maximum;
  std::optional<std::uint16_t> topic_alias;
  std::optional<std::uint8_t> maximum_qos;
  std::optional<std::uint8_t> retain_available;
  std::vector<std::pair<std::string, std::string>> user_properties;
  std::optional<std::uint32_t> maximum_packet_size;
  std::optional<std::uint8_t> wildcard_subscription_available;
  std::optional<std::uint8_t> subscription_identifier_available;
  std::optional<std::uint8_t> shared_subscription_available;

  bool empty() const;
  bool operator==(const Properties&) const = default;
};

// Whether property `id` may appear in a block of `context`.
bool is_allowed(PropertyId id, PropertyContext context) noexcept;

// Reads a property block (its variable-byte length, then the properties) from `in`. Errors go
// to the reader: malformed packet (0x81) for a truncated block, an unknown identifier, a property
// not allowed in `context` or a bad string; protocol error (0x82) for a repeated property or a
// value out of range (a 0 receive maximum, a payload format indicator other than 0 or 1, a
// response topic with wildcards...).
bool decode_properties(Reader& in, PropertyContext context, Properties& out);

// Appends the block (length + properties, in identifier order, user properties last). The
// caller only puts properties that `context` allows; that is asserted in debug builds.
void encode_properties(const Properties& p, PropertyContext context, std::string& out);
// The number of bytes encode_properties appends.
std::size_t encoded_properties_size(const Properties& p);

}  // namespace carrier::mqtt::codec
