#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/broker_types.hpp"
#include "core/queue.hpp"
#include "core/shard_context.hpp"

namespace carrier::core {

class NamedSubscriptions;
class QueueWatchers;
class Redelivery;

// A message on its way to a queue: which queue, which message.
struct Routed {
  std::string key;
  model::MessagePtr message;
};

// A queue this shard owns, with what the owner keeps beside it.
struct OwnedQueue {
  std::unique_ptr<Queue> queue;
  bool stored = true;             // persistent messages in it are in the store
  std::string subscription_name;  // named subscriptions
  bool durable = false;
  std::uint32_t delayed = 0;      // returned messages waiting out a redelivery delay, outside the queue
  std::uint64_t incarnation = 0;  // tells a queue from one re-created under the same key
  const DestinationPolicy* block_policy = nullptr;  // a queue whose overflow is `block`
  bool blocked = false;                             // marked in the shared DestinationPressure
  std::vector<std::pair<ConsumerId, ConsumerId>> watch_children;  // (parent, child) attached here
};

// Queue ownership and dispatch: the queues whose keys hash to this shard (named queues,
// temporary queues, named subscriptions' queues), their enqueue with limits and overflow,
// consumers, settlement, dispatch to consumers' shards, block-overflow pressure, and the
// collection of queues that hold nothing. Returned and expired messages go to Redelivery.
// Runs on: its shard; other shards reach it by posting to its Broker.
class OwnedQueues {
 public:
  // What one queue object costs beyond its messages (the queue, its map entry, a lane and a
  // consumer's unacked log once used), counted in the MemoryGauge so that many destinations
  // weigh on `memory_limit_bytes` like messages do. An estimate: the allocator decides the rest.
  static constexpr std::int64_t kQueueOverheadBytes = 1024;

  OwnedQueues(ShardContext& shard, Redelivery& redelivery, QueueWatchers& watchers, NamedSubscriptions& named)
      : shard_(shard), redelivery_(redelivery), watchers_(watchers), named_(named) {}
  OwnedQueues(const OwnedQueues&) = delete;
  OwnedQueues& operator=(const OwnedQueues&) = delete;

  OwnedQueue* find(const std::string& key) {
    auto it = queues_.find(key);
    return it == queues_.end() ? nullptr : &it->second;
  }
  bool contains(const std::string& key) const { return queues_.contains(key); }
  std::size_t size() const { return queues_.size(); }
  // The queue `key`, created if it does not exist (and the matching queue watchers attached).
  OwnedQueue& open(const std::string& key);
  // Whether a client's SEND or SUBSCRIBE may open `key`: it exists, is not a queue, is
  // configured, or the broker's destination budget has room (DestinationBudget).
  bool may_open(const std::string& key) const;
  // `queue:` and `subscription:` queues count against the destination budget.
  static bool counts_as_destination(std::string_view key);
  // Erases the queue (its messages already taken out) and its share of the memory gauge.
  void drop(const std::string& key);
  void collect_if_empty(const std::string& key);

  // Messages routed here from any shard; `verdict` (optional) hears of refusals.
  void enqueue(std::vector<Routed> messages, Completion verdict);
  void add_consumer(std::string key, ConsumerRef ref, Completion done);
  void remove_consumer(std::string key, ConsumerId id, Completion done);
  // The consumer is offered nothing more (Broker::pause).
  void pause_consumer(const std::string& key, ConsumerId id);
  void settle(std::string key, ConsumerId id, std::vector<std::uint64_t> tags, bool is_ack, bool persist_acks,
              std::vector<StateRecord> state, Completion done, bool requeue = true);
  // Deletes a queue and its messages.
  void remove(std::string key, Completion done);
  // A recovered message, before serving.
  void restore(const std::string& key, model::MessagePtr m, std::uint32_t delivery_count);
  // A named subscription's queue starts (or stops) keeping its persistent messages in the store.
  void set_durable(const std::string& key, bool durable, store::Batch& batch);

  // Hands ready messages to consumers (posted to their shards); expired ones go to Redelivery.
  // Also used for private topic queues, which are not owned here.
  void dispatch(const std::string& key, Queue& queue, bool stored);
  // Messages gone for good: their memory given back, their ack records (if stored) in `batch`.
  void release(const std::string& key, bool stored, const std::vector<model::MessagePtr>& gone, store::Batch& batch);

  // The periodic sweep's share: expired messages, idle and empty queues, pressure.
  void sweep(std::int64_t now, store::Batch& batch, std::vector<Routed>& moved);
  void add_stats(BrokerStats& s) const;

  // Every queue owned here, for the queue watchers.
  template <class Fn>
  void for_each(Fn&& fn) {
    for (auto& [key, oq] : queues_) fn(key, oq);
  }

 private:
  // The refusal of a SEND or SUBSCRIBE that would pass [limits] max_destinations.
  Unexpected destinations_exhausted(std::string_view what) const;
  using Map = std::unordered_map<std::string, OwnedQueue>;

  void drop(Map::iterator it);
  // An auto-created queue holding nothing (no messages, consumers or delayed redeliveries) costs
  // memory and means nothing: it goes, and comes back on next use. Configured, temporary and
  // named-subscription queues keep their own lifecycle.
  bool collectable(const std::string& key, const OwnedQueue& oq) const;
  // A `block` queue that became full is marked in the pressure, and cleared below 90%.
  void update_pressure(const std::string& key, OwnedQueue& oq);
  void clear_pressure(const std::string& key, OwnedQueue& oq);

  ShardContext& shard_;
  Redelivery& redelivery_;
  QueueWatchers& watchers_;
  NamedSubscriptions& named_;
  Map queues_;
  std::uint64_t next_incarnation_ = 1;
};

}  // namespace carrier::core
