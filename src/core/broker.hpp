#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/result.hpp"
#include "core/broker_types.hpp"
#include "core/consumer.hpp"
#include "core/demand_observer.hpp"
#include "core/destination_pressure.hpp"
#include "core/executor.hpp"
#include "core/home_subscriptions.hpp"
#include "core/lease_table.hpp"
#include "core/memory_gauge.hpp"
#include "model/message.hpp"
#include "core/named_subscriptions.hpp"
#include "core/options.hpp"
#include "core/owned_queues.hpp"
#include "core/queue_watchers.hpp"
#include "core/recovery.hpp"
#include "core/redelivery.hpp"
#include "core/retained_messages.hpp"
#include "core/router.hpp"
#include "core/shard_context.hpp"
#include "core/shared_subscriptions.hpp"
#include "core/topic_routing.hpp"
#include "store/store.hpp"

namespace carrier::core {

// The core on one shard: a thin front over its parts (docs/architecture.md, "The core's
// parts"). It owns the queues whose keys hash to this shard (including named subscriptions'
// queues and retained messages), and the private queues of the topic subscriptions whose
// consumers live here; it keeps a replica of every topic subscription filter and named
// subscription so a publish is matched where it arrives. Protocol sessions call the public
// operations on their own shard's Broker; the Broker crosses to other shards only by posting to
// their Broker through the Executor. No locks: everything here is touched by one thread. Timed
// work (redelivery delays, scheduled messages, sweeps) sits in one Schedule with a single wake-up.
// Runs on: its shard.
class Broker {
 public:
  using Clock = ShardContext::Clock;  // epoch milliseconds

  Broker(model::ShardId self, Executor& executor, store::Store& store, Options options, Clock clock = {},
         MemoryGauge* memory = nullptr);
  Broker(const Broker&) = delete;
  Broker& operator=(const Broker&) = delete;

  // Every shard's Broker, index = shard id. Set once before any traffic.
  void set_peers(std::vector<Broker*> peers) { shard_.peers = std::move(peers); }
  // Starts the periodic sweeps. Call on this shard once it runs.
  void start();

  model::ShardId shard() const { return shard_.self; }
  std::int64_t now_ms() const { return shard_.now_ms(); }
  model::MessageId next_message_id() { return shard_.ids.next(); }
  const Options& options() const { return shard_.options; }
  MemoryGauge* memory() const { return shard_.memory; }
  // Queues blocked by `overflow = "block"`, shared by every shard (serve wires one in).
  void set_pressure(DestinationPressure* pressure) { shard_.pressure = pressure; }
  DestinationPressure* pressure() const { return shard_.pressure; }
  // Free disk under [journal] disk_free_limit_bytes holds persistent publishers (serve wires one in).
  void set_disk_alarm(DiskAlarm* alarm) { shard_.disk = alarm; }
  DiskAlarm* disk_alarm() const { return shard_.disk; }
  // The broker-wide cap on queues and named subscriptions, shared by every shard. Set before traffic.
  void set_destination_budget(DestinationBudget* budget) { shard_.destinations = budget; }
  // Told of consumers coming and going (federation's demand); null: nobody asks. Set before
  // traffic.
  void set_demand_observer(DemandObserver* observer) { demand_observer_ = observer; }
  const DestinationPolicy& policy_for(const model::Destination& d) const { return shard_.policy_for(d); }

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
  void remove_subscription(std::string name, Completion done) { named_.remove(std::move(name), std::move(done)); }
  // Whether `user` may attach to or remove the named subscription `name` (SubscribeRequest::owner).
  Status check_subscription_owner(const std::string& name, std::string_view user) const {
    return named_.check_owner(name, user);
  }
  // Takes `holder` off a shared subscription (SharedSubscriptions). Without holders left it is
  // deleted with its messages, or, if consumers are attached, stops being durable (its messages
  // leave the store and it goes with its last consumer).
  void release_holder(std::string name, std::string holder, Completion done) {
    shared_.release_holder(std::move(name), std::move(holder), std::move(done));
  }
  // The named subscriptions whose names start with `prefix` (every shard holds them all).
  std::vector<NamedSubscription> named_subscriptions(std::string_view prefix) const { return named_.list(prefix); }
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
  // Stops offering deliveries to the consumer (a queue's or a named subscription's); what it
  // holds stays held until acked, nacked or the consumer is detached. A poll that leases what it
  // was given pauses its consumer so that later messages go to others.
  void pause(ConsumerId id);
  // Ends a lease, on whichever shard holds it (LeaseTable); `done` runs here.
  void end_lease(const LeaseId& id, LeaseEnd how, Completion done);
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
  static void recover(const std::vector<Broker*>& brokers, store::RecoveredMessage recovered) {
    route_recovered(brokers, std::move(recovered));
  }
  // A lane's run of recovered messages (RecoverOptions::tail), before any recover() call.
  static void recover_tail(const std::vector<Broker*>& brokers, const store::RecoveredTail& tail) {
    route_recovered_tail(brokers, tail);
  }
  // After the last recovered record, before the shard threads start.
  static void recovered(const std::vector<Broker*>& brokers) { finish_recovery(brokers); }

  BrokerStats stats() const;

  // What one queue object costs beyond its messages (see OwnedQueues).
  static constexpr std::int64_t kQueueOverheadBytes = OwnedQueues::kQueueOverheadBytes;

  // --- the parts: for each other's posts across shards, recovery and tests ---
  ShardContext& context() { return shard_; }
  OwnedQueues& owned_queues() { return queues_; }
  Redelivery& redelivery() { return redelivery_; }
  Router& router() { return router_; }
  TopicRouting& topics() { return topics_; }
  RetainedMessages& retained() { return retained_; }
  NamedSubscriptions& named() { return named_; }
  SharedSubscriptions& shared_subscriptions() { return shared_; }
  QueueWatchers& queue_watchers() { return watchers_; }
  LeaseTable& leases() { return leases_; }

 private:
  void send_messages(std::vector<model::MessagePtr> messages, std::vector<StateRecord> state, Completion done,
                     std::vector<bool>* unmatched);
  void settle(ConsumerId id, std::vector<std::uint64_t> tags, bool is_ack, std::vector<StateRecord> state,
              Completion done, bool requeue = true);
  void sweep();
  Result<ConsumerId> subscribe_consumer(SubscribeRequest request, Completion done);

  // Declared before the parts that hold references to it; the parts reference each other
  // (constructed in this order, used only once all exist).
  ShardContext shard_;
  HomeSubscriptions subscriptions_;  // consumers homed here
  OwnedQueues queues_;
  Redelivery redelivery_;
  Router router_;
  TopicRouting topics_;
  RetainedMessages retained_;
  NamedSubscriptions named_;
  SharedSubscriptions shared_;
  QueueWatchers watchers_;
  LeaseTable leases_;
  // Consumers counted as demand, kept only while an observer is set (not on the send path).
  DemandObserver* demand_observer_ = nullptr;
  std::unordered_map<ConsumerId, model::Destination> demand_consumers_;
};

}  // namespace carrier::core
