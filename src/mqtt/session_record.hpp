#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "model/message.hpp"
#include "mqtt/session_state.hpp"

namespace carrier::mqtt {

// MQTT state that must survive a restart is kept as messages in reserved queues (like the
// core's `$subscriptions`): every store backend keeps it with no record kind of its own.
// In message properties, with a format version (names below); unknown properties are ignored, a
// record that does not decode is logged and skipped at start-up (kept in the store).
//
// `$mqtt-sessions`: one record per persistent session (client id), replaced on change: the new
//   record and the ack of the old one go in one store batch, so a crash keeps one of them.
//   Format 2 holds no subscriptions; format 1 (written by earlier releases, still read) holds
//   them all, so each SUBSCRIBE rewrote every filter: it is replaced by format 2 at start-up.
// `$mqtt-subscriptions`: one record per subscription of a persistent session (client id +
//   filter), added, replaced or removed with the SUBSCRIBE / UNSUBSCRIBE that changes it: a
//   change costs what it changes, whatever the session holds.
// `$mqtt-wills`: a delayed will waiting for its delay (or its session's end), the will message
//   itself with the client id and the due time appended as trailing properties.
// `$mqtt-qos2`: one record per QoS 2 exchange half-way: inbound (PUBREC sent, PUBREL not yet
//   received; written in the store batch of the message itself) or outbound (PUBREC received,
//   PUBCOMP not yet; written in the batch of the core ack of the delivery).
inline constexpr std::string_view kSessionsQueue = "$mqtt-sessions";
inline constexpr std::string_view kWillsQueue = "$mqtt-wills";
inline constexpr std::string_view kQos2Queue = "$mqtt-qos2";
inline constexpr std::string_view kSubscriptionsQueue = "$mqtt-subscriptions";

inline constexpr std::uint32_t kExpiryNever = 0xFFFFFFFF;

struct SessionRecord {
  // 2: the subscriptions are `$mqtt-subscriptions` records; 1: they are in this one.
  std::uint8_t format = 2;
  std::string client_id;
  std::uint8_t protocol_level = 4;  // 3, 4 or 5
  std::uint32_t expiry_seconds = 0;  // kExpiryNever: never
  // When the client went away (epoch ms); 0 while it is connected. After a crash with the
  // client connected, the expiry counts from the restart.
  std::int64_t away_since_ms = 0;
  std::map<std::string, SubscriptionOptions> subscriptions;  // by MQTT filter; format 1 only

  // The expiry deadline counting from `away_since_ms` (or `now_ms` if 0); nullopt: never.
  std::optional<std::int64_t> deadline_ms(std::int64_t now_ms) const;
  bool operator==(const SessionRecord&) const = default;
};

struct SubscriptionRecord {
  std::string client_id;
  std::string filter;
  SubscriptionOptions options;
  bool operator==(const SubscriptionRecord&) const = default;
};

struct WillRecord {
  std::string client_id;
  std::int64_t due_ms = 0;  // publish at (epoch ms)
  model::MessagePtr will;    // the message to publish (its id is the record's)
};

struct Qos2Record {
  std::string client_id;
  bool inbound = true;  // the client's PUBLISH (awaiting PUBREL); else the broker's (awaiting PUBCOMP)
  std::uint16_t packet_id = 0;
  bool operator==(const Qos2Record&) const = default;
};

model::MessagePtr encode_session(const SessionRecord& r, model::MessageId id, std::int64_t now_ms);
std::optional<SessionRecord> decode_session(const model::Message& m);

model::MessagePtr encode_subscription(const SubscriptionRecord& r, model::MessageId id, std::int64_t now_ms);
std::optional<SubscriptionRecord> decode_subscription(const model::Message& m);

model::MessagePtr encode_will(const WillRecord& r);
std::optional<WillRecord> decode_will(const model::Message& m);

model::MessagePtr encode_qos2(const Qos2Record& r, model::MessageId id, std::int64_t now_ms);
std::optional<Qos2Record> decode_qos2(const model::Message& m);

}  // namespace carrier::mqtt
