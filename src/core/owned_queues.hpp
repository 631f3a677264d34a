#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
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
  // Paging: where its persistent messages held in memory are stored, once the store said so
  // (a paged entry carries its own). Allocated when the first location arrives.
  std::unique_ptr<std::unordered_map<model::MessageId, store::Location>> locations;
  // Cold tails: what waits for the whole tail to be read back (page_in_all), and whether the
  // queue is counted in MemoryGauge's queues with a cold tail.
  std::vector<std::function<void()>> warm_waiters;
  bool counted_cold = false;
  // Returned messages waiting out a redelivery delay whose location is in `locations`: kept
  // there while they wait (a prune would lose them), so that a cold tail's scan skips them and
  // their ack names their stored copy.
  std::unique_ptr<std::unordered_set<model::MessageId>> delayed_ids;
};

// Where one message record of an appended batch landed (Store::append_located).
struct LocatedMessage {
  std::string key;
  model::MessageId id;
  store::Location location;
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
  // A recovered message, before serving; with its location it may be paged out at once.
  void restore(const std::string& key, model::MessagePtr m, std::uint32_t delivery_count,
               store::Location location = {});
  // A recovered message of which the store handed back only its summary: it enters paged.
  void restore_summary(const std::string& key, const store::MessageSummary& summary, store::Location location,
                       std::uint32_t delivery_count);
  // A lane's run of recovered messages (store::RecoveredTail, before any RecoveredMessage): it
  // becomes that lane's cold tail. A subscription's, whose definition recovery reaches later,
  // waits for finish_recovery().
  void restore_tail(const store::RecoveredTail& tail);
  // Recovery is over: the waiting tails join their subscriptions' queues; those of a
  // subscription that is gone are dropped (their messages stay stored, as its summaries do).
  void finish_recovery();
  // Reads every paged ready message of `key` back into memory, then runs `then` here (an
  // operator's move or filtered purge, a subscription leaving the store).
  void page_in_all(const std::string& key, std::function<void()> then);
  // A named subscription's queue starts (or stops) keeping its persistent messages in the store.
  void set_durable(const std::string& key, bool durable, store::Batch& batch);

  // Hands ready messages to consumers (posted to their shards); expired ones go to Redelivery.
  // Also used for private topic queues, which are not owned here.
  void dispatch(const std::string& key, Queue& queue, bool stored);
  // Messages gone for good: their memory given back, their ack records (if stored) in `batch`.
  void release(const std::string& key, bool stored, const std::vector<model::MessagePtr>& gone, store::Batch& batch);

  // What an ack or delivered record of `m` in queue `key` says about its stored copy
  // (store::Record::stored): where the core was told it is, or unknown. The take_ form also
  // forgets the location (the message leaves the queue for good).
  store::StoredRef stored_ref(const std::string& key, const model::Message& m) const;
  store::StoredRef take_stored_ref(const std::string& key, const model::Message& m);
  static store::StoredRef stored_ref_at(store::Location at, const model::Message& m);
  // A returned message of `key` starts (or stops) waiting out a redelivery delay outside its
  // queue: its location stays in the map meanwhile.
  void note_delayed(const std::string& key, const model::MessageId& id, bool waiting);

  // Paging (queue_paging.cpp; docs/storage.md, "Paging"). Whether the broker pages at all
  // (a budget is set), and whether this queue's messages may be paged: `queue:` queues and
  // durable subscriptions' queues, stored; never temporary or private ones.
  bool paging() const { return shard_.memory != nullptr && shard_.memory->budget() != 0; }
  static bool pageable_key(std::string_view key);
  // store.append(), or append_located() when the broker pages and the batch adds messages to
  // pageable queues: their owners then learn where each landed (note_locations, posted).
  void append_locating(store::Batch batch, Completion done);
  // Locations of records appended from any shard, for queues owned here; pages out if the
  // broker is over its budget.
  void note_locations(std::vector<LocatedMessage> located);
  // Pages out the tails of this shard's queues while the broker is over its budget.
  void page_if_over_budget();
  // Entries leaving for good (expired, purged, dropped, deleted), paged or not: memory back,
  // ack records (if stored) in `batch`.
  void release_entries(const std::string& key, bool stored, std::vector<Queue::Entry> gone, store::Batch& batch);
  // Expired entries: to the dead-letter queue if their policy says so (paged ones read back
  // first), else released. Paged ones of a `queue:` queue expire without being read.
  void expire(const std::string& key, bool stored, std::vector<Queue::Entry> expired, store::Batch& batch,
              std::vector<Routed>& moved);
  // Reads the paged ones of `entries` back (those in memory pass as they are) and runs `then`
  // here with the ones that could be read, in the order given. Those gone from the store are
  // counted and dropped; so are those that fail to read (they stay in the store).
  void read_back(const std::string& key, std::vector<Queue::Entry> entries,
                 std::function<void(std::vector<Queue::Entry>)> then);
  // Cold tails (owned_cold_tails.cpp; docs/storage.md, "Cold tails"): a stored, pageable queue
  // of a store that can scan pages out by letting messages go entirely, into its lanes' tails.
  bool cold_capable(const std::string& key, const OwnedQueue& oq) const {
    return paging() && oq.stored && shard_.store.can_scan() && pageable_key(key);
  }
  // A non-persistent message for a cold-capable queue is spilled (docs/storage.md,
  // "Non-persistent messages past the budget") while the broker is over its budget or its lane
  // has a cold tail (it then keeps its place behind the tail): a flagged copy, its record added
  // to `records` (appended located by the caller before it can be acked). Otherwise `m` itself.
  model::MessagePtr spill_if_due(const std::string& key, const OwnedQueue& oq, const model::MessagePtr& m,
                                 store::Batch& records);
  // Issues the queue's next scan if it needs one (consumers near the tail, drops owed, or an
  // operator's work reading the whole tail).
  void read_cold(const std::string& key, OwnedQueue& oq);
  // A held arrival of `key` whose location is known: it joins its tail. True if it did.
  bool join_cold(OwnedQueue& oq, const model::MessageId& id, store::Location at);
  // Keeps MemoryGauge's count of queues with a cold tail true for `oq`.
  void track_cold(OwnedQueue& oq);
  // Acks every message of tails cut from a queue being deleted, scanning them through in the
  // background.
  void ack_cold(const std::string& key, std::vector<Queue::ColdCut> cuts);
  // Read-ahead window per queue: entries kept in memory at the head, and read back per read.
  static constexpr std::size_t kReadWindow = 128;
  // What a paged entry costs in memory, counted in the gauge in place of its message.
  static constexpr std::int64_t kPagedEntryBytes = sizeof(Queue::Entry) + sizeof(Queue::Paged) + 16;

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
  // Paging's halves (queue_paging.cpp).
  store::Location located(const OwnedQueue& oq, const model::Message& m) const;
  void page_queue(const std::string& key, OwnedQueue& oq, std::int64_t& freed);
  void read_ahead(const std::string& key, OwnedQueue& oq);
  void paged_in(const std::string& key, std::uint64_t incarnation, std::vector<Queue::PageRead> reads,
                std::vector<Result<model::MessagePtr>> answers);
  // Puts read answers into the queue: messages in, entries gone or unreadable out (counted).
  void apply_answers(const std::string& key, OwnedQueue& oq, const std::vector<Queue::PageRead>& reads,
                     std::vector<Result<model::MessagePtr>>& answers);
  void forget_location(OwnedQueue& oq, const model::MessageId& id);
  store::StoredRef stored_ref(const OwnedQueue* oq, const model::Message& m) const;
  store::StoredRef stored_ref(const OwnedQueue* oq, const Queue::Entry& e) const;
  void cold_in(const std::string& key, std::uint64_t incarnation, Queue::ColdRead read,
               Result<store::ScanResult> answer);
  void repage_refused(OwnedQueue& oq, const std::vector<Queue::PageRead>& entered);
  void ack_cold_step(std::string key, std::vector<Queue::ColdCut> cuts, std::uint64_t acked);
  // A queue's location map holding many more ids than messages (records of refused or dropped
  // sends whose location came after): rebuilt from what the queue holds.
  void prune_locations(OwnedQueue& oq);

  ShardContext& shard_;
  Redelivery& redelivery_;
  QueueWatchers& watchers_;
  NamedSubscriptions& named_;
  Map queues_;
  std::uint64_t next_incarnation_ = 1;
  std::unordered_set<std::string> pageable_;  // queues with located messages in memory
  std::vector<store::RecoveredTail> pending_tails_;  // subscriptions' tails, until finish_recovery()
};

}  // namespace carrier::core
