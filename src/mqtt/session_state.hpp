#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/message.hpp"

namespace carrier::mqtt {

// What a SUBSCRIBE asked for one filter, kept with the session.
struct SubscriptionOptions {
  std::uint8_t qos = 0;
  bool no_local = false;
  bool retain_as_published = false;
  std::uint32_t identifier = 0;  // MQTT 5 subscription identifier; 0: none
  // MQTT 5 retain handling as asked (used at SUBSCRIBE time; kept with the session's record).
  std::uint8_t retain_handling = 0;

  bool operator==(const SubscriptionOptions&) const = default;
};

// One change to a session's subscriptions, as the client registry records it.
struct SubscriptionChange {
  std::string filter;
  std::optional<SubscriptionOptions> options;  // nullopt: unsubscribed
};

// The part of a session that outlives its connection when the session persists: which filters
// it subscribed with which options. The messages themselves wait in the core's named
// subscriptions ("mqtt:<client-id>:<filter>").
struct SessionState {
  std::map<std::string, SubscriptionOptions> subscriptions;  // by MQTT filter
  // QoS 2 in flight (MQTT 4.4): packet ids of the client's PUBLISHes the broker has and whose
  // PUBREL has not come (a resend is not routed again), and of the broker's PUBLISHes whose
  // PUBREC came but not the PUBCOMP (the PUBREL is sent again on resume).
  // Each with its `$mqtt-qos2` record in the store (nil when the session is not persistent).
  struct Qos2InFlight {
    std::uint16_t packet_id = 0;
    model::MessageId record;
  };
  std::vector<Qos2InFlight> inbound_qos2;
  std::vector<Qos2InFlight> outbound_pubrel;
};

// How a connection left its client's session (sent to the client registry).
struct Departure {
  std::uint64_t connection = 0;
  bool persistent = false;           // the session continues without a connection
  std::uint32_t expiry_seconds = 0;  // then: how long; 0xFFFFFFFF never
  std::uint8_t protocol_level = 4;
  SessionState state;
  // A will still to publish: after `will_delay_seconds`, or when the session ends if sooner,
  // unless the client reconnects first. Null when there is none (or it has been published).
  model::MessagePtr will;
  std::uint32_t will_delay_seconds = 0;
};

// The core's name for a persistent session's subscription (client ids are escaped so that one
// client's prefix is never another's).
std::string subscription_prefix(std::string_view client_id);
std::string subscription_name(std::string_view client_id, std::string_view filter);
// Shared subscriptions compete for one queue whatever the client: "mqtt-share:<group>:<filter>".
std::string shared_subscription_name(std::string_view group, std::string_view filter);
// The second core subscription of a filter ending in `/#` (for the parent level).
inline constexpr std::string_view kParentSuffix = ":parent";
// The core subscriptions of a `$share/{group}/{filter}` filter (one, or two with the parent
// level); none for another filter. A persistent session holds them (core holder = client id).
std::vector<std::string> shared_subscription_names(std::string_view shared_filter);

}  // namespace carrier::mqtt
