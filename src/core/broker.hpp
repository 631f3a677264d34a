#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/result.hpp"
#include "core/consumer.hpp"
#include "core/destination_tree.hpp"
#include "core/executor.hpp"
#include "core/destination_pressure.hpp"
#include "core/memory_gauge.hpp"
#include "model/message.hpp"
#include "core/options.hpp"
#include "core/queue.hpp"
#include "core/schedule.hpp"
#include "selector/fwd.hpp"
#include "store/store.hpp"

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
  // A named subscription shared by sessions of which only some persist (MQTT `$share` groups):
  // a request with a holder makes it durable (or adds the holder to it); it stays durable
  // while it has a holder (release_holder). Requests without one attach to it as it is.
  std::string holder;
};

// A named topic subscription as every shard knows it.
struct NamedSubscription {
  std::string name;
  std::string filter;  // the topic filter
  bool durable = false;
  std::string selector;  // selector text, empty for none
  std::vector<std::string> holders;  // see SubscribeRequest::holder; sorted
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
  std::size_t topic_subscriptions = 0;
  std::size_t named_subscriptions = 0;
  std::size_t retained = 0;
  std::size_t scheduled = 0;
  std::uint64_t backlog_dropped = 0;  // messages plain topic subscribers lost to their backlog bound
};

// The core on one shard. It owns the queues whose keys hash to this shard (including named
// subscriptions' queues and retained messages), and the private queues of the topic
// subscriptions whose consumers live here; it keeps a replica of every topic subscription filter
// and named subscription so a publish is matched where it arrives. Protocol sessions call the
// public operations on their own shard's Broker; the Broker crosses to other shards only by
// posting to their Broker through the Executor. No locks: everything here is touched by one
// thread. Timed work (redelivery delays, scheduled messages, sweeps) sits in one Schedule with
// a single wake-up.
// Runs on: its shard.
class Broker {
 public:
  using Clock = std::function<std::int64_t()>;  // epoch milliseconds

  Broker(model::ShardId self, Executor& executor, store::Store& store, Options options, Clock clock = {},
         MemoryGauge* memory = nullptr);
  Broker(const Broker&) = delete;
  Broker& operator=(const Broker&) = delete;

  // Every shard's Broker, index = shard id. Set once before any traffic.
  void set_peers(std::vector<Broker*> peers);
  // Starts the periodic sweeps. Call on this shard once it runs.
  void start();

  model::ShardId shard() const { return self_; }
  std::int64_t now_ms() const { return clock_(); }
  model::MessageId next_message_id() { return ids_.next(); }
  const Options& options() const { return options_; }
  MemoryGauge* memory() const { return memory_; }
  // Queues blocked by `overflow = "block"`, shared by every shard (serve wires one in).
  void set_pressure(DestinationPressure* pressure) { pressure_ = pressure; }
  DestinationPressure* pressure() const { return pressure_; }
  const DestinationPolicy& policy_for(const model::Destination& d) const;

  // --- for protocol sessions on this shard ---

  // Routes each message to its queue or to the topic's subscribers. Persistent messages for
  // queues and durable subscriptions are stored first; `done` runs once they are durable (or
  // failed, or refused by a full destination).
  void send(std::vector<model::MessagePtr> messages, Completion done);
  // The same, with state records written in the messages' store batch: a crash keeps both or
  // neither (MQTT's "QoS 2 PUBLISH received" with the message itself).
  void send(std::vector<model::MessagePtr> messages, std::vector<StateRecord> state, Completion done);
  // The same; `unmatched` (one flag per message, in order) says which topic messages no
  // subscription took, as they were matched here and now (MQTT 5's "no matching subscribers").
  // Queue messages and scheduled ones count as matched. Callers that do not ask pay nothing.
  void send(std::vector<model::MessagePtr> messages, std::vector<StateRecord> state, Completion done,
            std::vector<bool>& unmatched);
  Result<ConsumerId> subscribe(SubscribeRequest request, Completion done);
  // Detaches the consumer. A named subscription stays (with its messages) until
  // remove_subscription(); a private one is gone. A non-durable named one goes with its last
  // consumer.
  void unsubscribe(ConsumerId id, Completion done);
  // Deletes a named subscription and every message waiting in it (durable ones from the store).
  void remove_subscription(std::string name, Completion done);
  // Takes `holder` off a named subscription. Without holders left it is deleted with its
  // messages, or, if consumers are attached, stops being durable (its messages leave the store
  // and it goes with its last consumer).
  void release_holder(std::string name, std::string holder, Completion done);
  // The named subscriptions whose names start with `prefix` (every shard holds them all).
  std::vector<NamedSubscription> named_subscriptions(std::string_view prefix) const;
  void ack(ConsumerId id, std::vector<std::uint64_t> tags, Completion done);
  // An ack whose store records land in one batch with `state` (MQTT's "QoS 2 PUBREC came").
  void ack(ConsumerId id, std::vector<std::uint64_t> tags, std::vector<StateRecord> state, Completion done);
  // Writes state records in one store batch; `done` once durable.
  void write_state(std::vector<StateRecord> state, Completion done);
  void nack(ConsumerId id, std::vector<std::uint64_t> tags, Completion done);
  // Never offered again: dead-lettered with reason "rejected", or dropped when the destination's
  // policy has no dead-letter queue (RabbitMQ's NACK with requeue:false).
  void reject(ConsumerId id, std::vector<std::uint64_t> tags, Completion done);
  // The sends, acks and nacks take effect together, after one atomic store batch.
  void commit(Transaction tx, Completion done);
  // Deletes a queue and its messages (temporary queues when their connection closes).
  void delete_queue(model::Destination destination, Completion done);
  // Creates a temporary queue for its connection. Sends to a temporary queue that does not exist
  // (never opened, or deleted with its connection) are refused.
  void open_temp_queue(model::Destination destination);

  // Checks a destination a producer or consumer names: exists (or may be created), and no
  // wildcard where one is not allowed.
  Status check_destination(const model::Destination& d, bool for_subscribe) const;

  // --- recovery, before serving ---
  // Routes one recovered record to the shard that owns it (every shard for subscription
  // definitions). Call before the shard threads start.
  static void recover(const std::vector<Broker*>& brokers, store::RecoveredMessage recovered);

  BrokerStats stats() const;

  // What one queue object costs beyond its messages (the queue, its map entry, a lane and a
  // consumer's unacked log once used), counted in the MemoryGauge so that many destinations
  // weigh on `memory_limit_bytes` like messages do. An estimate: the allocator decides the rest.
  static constexpr std::int64_t kQueueOverheadBytes = 1024;

 private:
  struct SubscriptionInfo {
    model::Destination destination;
    bool topic_private = false;  // a private topic subscription: its queue is here
    model::ShardId owner;               // queue and named subscriptions: the queue's shard
    std::string queue_key;       // queue and named subscriptions: the queue's key
    std::string subscription_name;
    std::vector<ConsumerId> children;  // a queue watcher (wildcard queue subscription): its children
    bool watcher = false;
  };

  // A wildcard queue subscription as each shard keeps it (broker_watchers.cpp).
  struct Watcher {
    std::string filter;
    ConsumerRef ref;                 // id: the parent's
    std::vector<std::string> keys;   // queues owned here it is attached to
  };

  struct OwnedQueue {
    std::unique_ptr<Queue> queue;
    bool stored = true;      // persistent messages in it are in the store
    std::string subscription_name;  // named subscriptions
    bool durable = false;
    std::uint32_t delayed = 0;  // returned messages waiting out a redelivery delay, outside the queue
    std::uint64_t incarnation = 0;  // tells a queue from one re-created under the same key
    const DestinationPolicy* block_policy = nullptr;  // a queue whose overflow is `block`
    bool blocked = false;                             // marked in pressure_
    std::vector<std::pair<ConsumerId, ConsumerId>> watch_children;  // (parent, child) attached here
  };
  using OwnedQueues = std::unordered_map<std::string, OwnedQueue>;

  struct NamedEntry {
    NamedSubscription def;
    model::MessageId definition_id;  // the store record holding a durable definition
    std::shared_ptr<const selector::Selector> selector;
    std::uint64_t no_local_origin = 0;
  };

  struct TopicSubscription {
    std::string filter;
    std::unique_ptr<Queue> queue;
    // Topic names whose keys this subscription marked in pressure_ while over its backlog bound
    // (broker_topics.cpp): all cleared together below 90% of it, or when it goes.
    std::unordered_set<std::string> pressing = {};
  };

  // A message on its way to a queue: which queue, which message.
  struct Routed {
    std::string key;
    model::MessagePtr message;
  };

  // Reserved queues holding persistent topic messages scheduled for later, one per topic.
  static constexpr std::string_view kScheduledTopicPrefix = "queue:$scheduled-topic:";

  // ---- producer side (broker.cpp)
  void route_planned(std::vector<Routed> to_queues, std::vector<std::pair<TopicSubscriber, model::MessagePtr>> to_private,
                     Completion verdict);
  // `unmatched`, when given, gets one flag per message: a topic message no subscription took.
  void plan(const std::vector<model::MessagePtr>& messages, std::vector<Routed>& to_queues,
            std::vector<std::pair<TopicSubscriber, model::MessagePtr>>& to_private, std::vector<model::MessagePtr>& retained,
            store::Batch& batch, std::vector<bool>* unmatched = nullptr);
  void send_messages(std::vector<model::MessagePtr> messages, std::vector<StateRecord> state, Completion done,
                    std::vector<bool>* unmatched);
  bool needs_verdict(const std::vector<Routed>& to_queues) const;
  // Applies default time-to-live; takes out topic messages due later into `later` (persistent
  // ones also into `batch`, under scheduled_topic_key) and returns the rest.
  std::vector<model::MessagePtr> admit(std::vector<model::MessagePtr> messages, std::vector<model::MessagePtr>& later, store::Batch& batch,
                                std::vector<std::size_t>* ready_at = nullptr);
  static std::string scheduled_topic_key(const model::Message& m);
  void schedule_topic(model::MessagePtr m);
  // Matches a scheduled topic message now that it is due, and routes it.
  void publish_due(const model::MessagePtr& m);
  void settle(ConsumerId id, std::vector<std::uint64_t> tags, bool is_ack, std::vector<StateRecord> state,
              Completion done, bool requeue = true);
  static void add_state(store::Batch& batch, std::vector<StateRecord> state);
  void complete_on(model::ShardId shard, Completion done, Status status);
  void post_to(model::ShardId shard, std::function<void(Broker&)> fn);

  // ---- owner side (broker_owner.cpp)
  OwnedQueue& owned(const std::string& key);
  // Erases an owned queue (its messages already taken out) and its share of the memory gauge.
  void drop_queue(OwnedQueues::iterator it);
  // An auto-created queue holding nothing (no messages, consumers or delayed redeliveries) costs
  // memory and means nothing: it goes, and comes back on next use. Configured, temporary and
  // named-subscription queues keep their own lifecycle.
  bool collectable(const std::string& key, const OwnedQueue& oq) const;
  void collect_if_empty(const std::string& key);
  void owner_enqueue(std::vector<Routed> messages, Completion verdict);
  void owner_add_consumer(std::string key, ConsumerRef ref, Completion done);
  void owner_remove_consumer(std::string key, ConsumerId id, Completion done);
  void owner_settle(std::string key, ConsumerId id, std::vector<std::uint64_t> tags, bool ack, bool persist_acks,
                    std::vector<StateRecord> state, Completion done, bool requeue = true);
  void owner_delete(std::string key, Completion done);
  void dispatch(const std::string& key, Queue& queue, bool stored);
  // Returned deliveries: dead-letter, delay or requeue each per its destination's policy.
  void handle_returned(const std::string& key, Queue& queue, bool stored, std::vector<Queue::Entry> entries);
  // Rejected deliveries: dead-lettered (or dropped), never requeued.
  void handle_rejected(const std::string& key, Queue& queue, bool stored, std::vector<Queue::Entry> entries);
  void dead_letter(const std::string& key, bool stored, Queue::Entry entry, std::string_view reason,
                   store::Batch& batch, std::vector<Routed>& moved);
  void finish_dead_letters(store::Batch batch, std::vector<Routed> moved);
  void release(const std::string& key, bool stored, const std::vector<model::MessagePtr>& gone, store::Batch& batch);
  std::int64_t redelivery_delay(const DestinationPolicy& p, std::uint32_t deliveries);
  void sweep();
  void at(std::int64_t due_ms, Schedule::Task task);
  void arm();
  void on_wake();
  // The memory gauge counts a message once while any queue (or schedule, or the retained store)
  // holds it: a topic message fanned out to many subscriptions shares one body, and counting it
  // per subscription would let one slow subscriber's copies reach the global limit alone.
  // Bytes that are not a message's (a queue object's overhead), added or (negative) given back.
  void account(std::int64_t bytes);
  void account_hold(const model::Message& m);
  void account_release(const model::Message& m);
  // Makes room for `m` in a plain topic subscription's queue as the topic's policy says; false
  // if it does not fit (broker_topics.cpp).
  bool fits_private(Queue& q, const DestinationPolicy& policy, const model::Message& m);
  // The default bound of a plain subscription whose topic has no limits of its own
  // (Options::backlog_bound): with drop-oldest, trim_backlog makes room for `m`; with block, past
  // the bound press_backlog marks the topic of each message that arrives for it, and
  // relieve_backlog clears every mark once it is under 90% (or `all`: it is going).
  void trim_backlog(Queue& q, const model::Message& m);
  void press_backlog(TopicSubscription& sub, const std::string& topic);
  void relieve_backlog(TopicSubscription& sub, bool all = false);
  // A `block` queue that became full is marked in pressure_, and cleared below 90%.
  void update_pressure(const std::string& key, OwnedQueue& oq);
  void clear_pressure(const std::string& key, OwnedQueue& oq);

  // ---- queue watchers: wildcard queue subscriptions (broker_watchers.cpp)
  Result<ConsumerId> subscribe_watcher(SubscribeRequest request, ConsumerRef ref, Completion done);
  void unsubscribe_watcher(ConsumerId id, SubscriptionInfo info, Completion done);
  void watch_add(std::string filter, ConsumerRef ref);
  void watch_remove(ConsumerId parent);
  // Attaches the matching watchers to a queue owned here (new, or existing when one subscribes).
  void watch_attach(const std::string& key, OwnedQueue& oq, const Watcher& w);
  void watch_attach_new(const std::string& key, OwnedQueue& oq);
  // The queue `key` is being freed: its children are told.
  void watch_drop_queue(const std::string& key, OwnedQueue& oq);
  // On the parent's home: a child was attached or dropped by `owner`.
  void watch_attached(ConsumerId parent, ConsumerId child, std::string key, model::ShardId owner,
                      std::shared_ptr<Consumer> consumer);
  void watch_detached(ConsumerId parent, ConsumerId child, std::shared_ptr<Consumer> consumer);
  // A queue without consumers, or empty with only watchers' children attached: it may be freed
  // when idle (the children are attached again if it is recreated).
  static bool only_watched(const OwnedQueue& oq);

  // ---- topics (broker_topics.cpp)
  void index_add(std::string filter, TopicSubscriber subscriber);
  void index_remove(std::string filter, ConsumerId id);
  void named_add(NamedEntry entry, std::uint32_t owner);
  void named_remove(const std::string& name);
  // Writes `entry`'s definition in place of its previous one (`previous` nil: none), then makes
  // the owner store (or stop storing) its messages, then every shard's replica `entry`.
  void named_replace(NamedEntry entry, model::MessageId previous, bool was_durable, Completion done);
  void owner_set_durable(const std::string& key, bool durable, store::Batch& batch);
  // Holder changes of one named subscription run one at a time on the subscription's owner,
  // each reading the definition the previous one left: `op` calls its argument when done.
  void holder_op(const std::string& name, std::function<void(Completion next)> op);
  void run_holder_op(const std::string& name);
  void owner_add_holder(SubscribeRequest request, Completion reply);
  void owner_remove_holder(std::string name, std::string holder, Completion reply);
  model::MessagePtr definition_message(const NamedEntry& entry);
  void topic_enqueue(std::vector<std::pair<ConsumerId, model::MessagePtr>> deliveries);
  void broadcast(std::function<void(Broker&)> fn, Completion done);
  Result<ConsumerId> subscribe_named(SubscribeRequest request, ConsumerRef ref, Completion done);
  void retain(model::MessagePtr message);
  void send_retained(std::string filter, TopicSubscriber target);
  bool selected(const TopicSubscriber& s, const model::Message& m) const;

  model::ShardId self_;
  Executor& executor_;
  store::Store& store_;
  Options options_;
  Clock clock_;
  MemoryGauge* memory_;
  DestinationPressure* pressure_ = nullptr;
  model::MessageIdGenerator ids_;
  std::mt19937_64 random_;
  std::vector<Broker*> peers_;
  std::unordered_set<std::string> configured_queues_;
  DestinationPolicy default_policy_;
  std::vector<std::pair<model::Destination, std::size_t>> policy_patterns_;  // kind + filter -> policies index
  std::vector<bool> policy_any_kind_;

  OwnedQueues queues_;                                               // owned here, by key
  std::unordered_map<ConsumerId, SubscriptionInfo> subscriptions_;   // consumers homed here
  std::unordered_map<ConsumerId, TopicSubscription> topic_subscriptions_;
  // Replica: every named subscription. Ordered: a prefix (one MQTT client's) is a range, not a
  // scan of everyone's at each CONNECT.
  std::map<std::string, NamedEntry, std::less<>> named_;
  std::unordered_map<std::string, std::deque<std::function<void(Completion)>>> holder_ops_;  // owner: by name
  std::unordered_map<std::string, model::MessagePtr> retained_;             // owned here: topic name -> message
  DestinationTree topic_index_;                                      // replica: every topic subscription
  DestinationTree watch_index_;                                      // replica: every queue watcher's filter
  std::unordered_map<ConsumerId, Watcher> watchers_;                 // replica: by parent id
  Schedule schedule_;
  std::int64_t armed_due_ = INT64_MAX;
  std::uint64_t backlog_dropped_ = 0;
  std::uint64_t next_consumer_ = 1;
  std::uint64_t next_incarnation_ = 1;
};

}  // namespace carrier::core
