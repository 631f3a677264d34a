#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "core/consumer.hpp"
#include "model/message.hpp"
#include "selector/selector.hpp"
#include "stomp/codec/frame.hpp"
#include "stomp/errors.hpp"

namespace carrier::stomp {

// The subscription a SUBSCRIBE names: its id (STOMP 1.0: the destination when it has none) and
// its destination as written. missing_header if either is absent where required.
struct SubscribeTarget {
  std::string id;
  std::string destination;
};
std::variant<SubscribeTarget, Refused> read_subscribe_target(const codec::Frame& frame, codec::Version version);

// What else a SUBSCRIBE asks for, once its destination is known.
struct SubscribeOptions {
  core::AckMode ack_mode = core::AckMode::auto_ack;
  std::uint32_t prefetch = 0;  // 0: the broker's default for the ack mode
  std::shared_ptr<const selector::Selector> selector;
  std::string selector_text;
  // Topics only: a named subscription ("stomp:<client-id>:<name>", shared ones
  // "stomp-shared:<name>") and whether it outlives a restart.
  std::string subscription_name;
  bool durable = false;
  // A durable subscription of this client's own (not shared): the name UNSUBSCRIBE ends.
  std::string durable_name;
  bool no_local = false;  // ActiveMQ's activemq.noLocal: skip this connection's own messages
};

struct SubscribeContext {
  codec::Version version = codec::Version::v1_2;
  model::DestinationKind kind = model::DestinationKind::queue;  // of the resolved destination
  std::string_view id;         // the subscription's (read_subscribe_target)
  std::string_view client_id;  // CONNECT's, may be empty
  std::size_t max_selector_bytes = 4096;
};

// The ack mode (auto, client, client-individual from 1.1), prefetch (activemq.prefetchSize or
// RabbitMQ's prefetch-count, 0 to 2^32-1), selector, and on topics the naming rules:
// - ActiveMQ: activemq.subscriptionName (or subscription-name) with CONNECT's client-id;
// - RabbitMQ: durable:true or persistent:true (auto-delete is not read), named by the id;
// - JMS 2.0 shared: shared:true with subscription-name, not tied to a client.
// Refused with invalid_ack_mode, invalid_prefetch, invalid_selector,
// shared_subscription_without_name or durable_subscription_without_client_id.
std::variant<SubscribeOptions, Refused> read_subscribe_options(const codec::Frame& frame, const SubscribeContext& context);

// The broker-wide name of a client's durable subscription.
std::string durable_subscription_name(std::string_view client_id, std::string_view name);

// What an UNSUBSCRIBE names: the subscription id (1.0: or the destination), and whether it ends a
// durable subscription (durable:true, persistent:true, or its name) rather than detaching.
struct UnsubscribeRequest {
  std::optional<std::string> id;
  std::optional<std::string> name;  // activemq.subscriptionName or subscription-name
  bool end_durable = false;
};
std::variant<UnsubscribeRequest, Refused> read_unsubscribe(const codec::Frame& frame, codec::Version version);

}  // namespace carrier::stomp
