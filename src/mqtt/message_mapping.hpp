#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "model/message.hpp"
#include "mqtt/codec/packet.hpp"

namespace carrier::mqtt {

// What an MQTT message has and model::Message has no field for, kept as properties (which STOMP
// shows as headers). Neither becomes an MQTT 5 user property on the way out.
inline constexpr std::string_view kQosProperty = "mqtt-qos";  // "2" on QoS 2 messages only
inline constexpr std::string_view kPayloadFormatProperty = "mqtt-payload-format";  // "1": UTF-8

// A PUBLISH (its topic alias already resolved into `topic`) as a core message, taking its payload:
// QoS >= 1 -> persistent; message expiry -> expires_ms; response topic -> reply_to (as a STOMP
// topic destination); correlation data -> correlation_id; content type -> content_type; user
// properties -> properties; retain -> retain; origin -> the publishing connection (no-local).
model::MessagePtr to_core_message(codec::Publish&& publish, std::string_view topic, model::MessageId id,
                                 std::int64_t now_ms, std::uint64_t origin);

// A will as the message to publish.
model::MessagePtr will_message(const codec::Will& will, model::MessageId id, std::int64_t now_ms,
                              std::uint64_t origin);

// The QoS a message was published with: MQTT's own, else 1 for a persistent message from
// another protocol, else 0.
std::uint8_t message_qos(const model::Message& m);

struct OutboundOptions {
  std::uint8_t qos = 0;  // the delivered QoS (min of the message's and the subscription's)
  bool retain = false;
  codec::Version version = codec::Version::v3_1_1;
  std::int64_t now_ms = 0;  // read only for a message with an expiration
  std::uint32_t subscription_id = 0;  // 0: none
};

// The PUBLISH a subscriber gets for `m` (packet id and topic alias left to the session), or
// nullopt when there is none to send: the message has expired, or its topic is not a valid MQTT
// topic name. MQTT 5 properties come from the message; values an MQTT client could not accept
// (invalid UTF-8, over 64 KiB) are left out.
std::optional<codec::Publish> to_publish(const model::Message& m, const OutboundOptions& options);
// As to_publish, for a topic already mapped by the caller and without the payload: a session
// encodes the shared body itself (codec::encode_publish) rather than copying it per delivery.
std::optional<codec::Publish> to_publish_header(const model::Message& m, std::string topic, const OutboundOptions& options);

}  // namespace carrier::mqtt
