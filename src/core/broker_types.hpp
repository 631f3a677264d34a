#pragma once

// What protocol sessions hand the Broker and get back: requests, state records, transactions,
// statistics. The Broker's parts share them too.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "core/consumer.hpp"
#include "model/message.hpp"
#include "selector/fwd.hpp"
#include "store/record.hpp"

namespace carrier::core {

// Runs on the shard that asked, once the operation has taken effect (for persistent messages:
// once the store has made them durable).
using Completion = std::function<void(Status)>;

struct SubscribeRequest {
  // A queue, or a topic filter (wildcards allowed). A queue filter (`orders.*`, `orders.>`)
  // consumes from every matching queue, existing and future: one child consumer per queue
  // (see Consumer::attached), each with its own prefetch and the selector.
  model::Destination destination;
  AckMode ack_mode = AckMode::auto_ack;
  std::uint32_t prefetch = 0;   // 0: the default for the ack mode
  // Null for a named topic subscription: it is made (or found) and nothing attaches to it.
  std::shared_ptr<Consumer> consumer;

  // Topics only. A named subscription outlives its consumers' connections: messages published
  // while nobody is attached wait in it. `durable` ones also survive a restart (definition and
  // persistent messages in the store). Several consumers attaching to one name compete for its
  // messages (JMS 2.0 shared subscriptions, MQTT $share). Names are global: protocols prefix
  // them ("stomp:<client-id>:<name>", "mqtt:<client-id>:<filter>").
  std::string subscription_name;
  bool durable = false;
  // Only messages this selector matches (JMS message selector, already parsed); `selector_text`
  // is kept with a durable subscription's definition.
  std::shared_ptr<const selector::Selector> selector;
  std::string selector_text;
  // Topics: skip messages whose Message::origin equals this (MQTT no-local, JMS noLocal).
  std::uint64_t no_local_origin = 0;
  // Topics: after subscribing, deliver the retained messages matching the filter (MQTT).
  bool want_retained = false;
  // A shared subscription kept by holders (shared_subscriptions.hpp): sessions whose own
  // persistence keeps it stored, while others merely attach (MQTT `$share` groups; any protocol
  // whose shared subscriptions outlive only some of their members). A request with a holder makes
  // it durable (or adds the holder to it); it stays durable while it has a holder
  // (Broker::release_holder). Requests without one attach to it as it is.
  std::string holder;
  // Named subscriptions: deleted with their messages once no consumer has been attached for this
  // long (HTTP's subscription_idle_timeout); 0: never. Kept with a durable definition.
  std::uint64_t idle_expiry_ms = 0;
  // The authenticated user making a named subscription, who owns it from then on: a request
  // naming another user's subscription is refused (Errc::permission_denied), so reusing
  // someone's client id does not reach their durable subscription. Empty: anonymous, owns
  // nothing (and definitions stored before owners existed have none).
  std::string owner;
  // A bridge's consumer (a federation link forwarding to another node): not local demand for
  // the DemandObserver.
  bool bridge = false;
};

// A named topic subscription as every shard knows it.
struct NamedSubscription {
  std::string name;
  std::string filter;  // the topic filter
  bool durable = false;
  std::string selector;  // selector text, empty for none
  std::vector<std::string> holders;  // see SubscribeRequest::holder; sorted
  std::uint64_t idle_expiry_ms = 0;  // see SubscribeRequest::idle_expiry_ms
  std::string owner;  // see SubscribeRequest::owner
};

// A change to a protocol's own state kept in a reserved queue (`$mqtt-sessions`...): records
// there are never routed nor delivered, only written through the Broker and handed back to
// their protocol at recovery (the store needs no record kind of its own for them).
struct StateRecord {
  std::string queue;  // the reserved queue's name, e.g. "$mqtt-sessions"
  model::MessagePtr add;     // a record to add, or null
  model::MessageId remove;   // a record to remove (acked), or nil
};

// Deliveries named for an ack or nack inside a transaction. The message is carried so that the
// commit can write the ack records in the same store batch as the transaction's sends.
struct DeliveryRef {
  ConsumerId consumer;
  std::uint64_t tag = 0;
  model::MessagePtr message;
  bool requeue = true;  // nacks: false rejects (see Broker::reject)
};

struct Transaction {
  std::vector<model::MessagePtr> sends;
  std::vector<DeliveryRef> acks;
  std::vector<DeliveryRef> nacks;
};

struct BrokerStats {
  std::size_t queues = 0;
  std::size_t messages_ready = 0;
  std::size_t messages_unacked = 0;
  std::size_t messages_cold = 0;  // of the ready ones, those in cold tails (no per-message state)
  std::size_t topic_subscriptions = 0;
  std::size_t named_subscriptions = 0;
  std::size_t retained = 0;
  std::size_t scheduled = 0;
  std::uint64_t backlog_dropped = 0;  // messages plain topic subscribers lost to their backlog bound
};

// Puts state records in a store batch, in the reserved queues they name.
inline void add_state(store::Batch& batch, std::vector<StateRecord> state) {
  for (auto& s : state) {
    const std::string key = model::Destination{model::DestinationKind::queue, s.queue}.key();
    if (s.add) batch.push_back(store::Record::added(key, std::move(s.add)));
    if (!s.remove.is_nil()) batch.push_back(store::Record::acked(key, s.remove));
  }
}

}  // namespace carrier::core
