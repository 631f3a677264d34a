#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/broker_types.hpp"
#include "core/destination_budget.hpp"
#include "core/destination_pressure.hpp"
#include "core/executor.hpp"
#include "core/memory_gauge.hpp"
#include "model/message.hpp"
#include "model/message_id.hpp"
#include "model/queue_key.hpp"
#include "core/options.hpp"
#include "core/policy_table.hpp"
#include "core/schedule.hpp"
#include "core/shard_counters.hpp"
#include "store/store.hpp"

namespace carrier::core {

class Broker;
class DiskAlarm;

// What every part of one shard's Broker uses from its shard: who it is, the executor and the
// other shards, the store, the clock, the options and policies, memory accounting, the one
// schedule with its single wake-up, and id generators. Each part gets a reference at
// construction; nothing here knows the parts.
// Runs on: its shard (the MemoryGauge and DestinationPressure it points at are shared, atomic).
struct ShardContext {
  using Clock = std::function<std::int64_t()>;  // epoch milliseconds

  ShardContext(model::ShardId self, Executor& executor, store::Store& store, Options options, Clock clock,
               MemoryGauge* memory);
  ShardContext(const ShardContext&) = delete;
  ShardContext& operator=(const ShardContext&) = delete;

  const model::ShardId self;
  Executor& executor;
  store::Store& store;
  const Options options;
  const Clock clock;
  MemoryGauge* const memory;
  DestinationPressure* pressure = nullptr;  // queues blocked by `overflow = "block"` (serve wires one in)
  DestinationBudget* destinations = nullptr;  // [limits] max_destinations (serve wires one in); null: none
  DiskAlarm* disk = nullptr;  // [journal] disk_free_limit_bytes (serve wires one in); null: none
  std::vector<Broker*> peers;               // every shard's Broker, index = shard id; set before traffic
  // The destination policies in force; replace_policies swaps them (SIGHUP). A replaced table
  // is kept, not freed: queues hold pointers into the one they were made under
  // (OwnedQueue::block_policy), and reloads are few.
  const PolicyTable* policies;
  void replace_policies(std::vector<DestinationPolicy> next) {
    policy_tables_.push_back(std::make_unique<const PolicyTable>(std::move(next)));
    policies = policy_tables_.back().get();
  }
  const std::unordered_set<std::string> configured_queues;
  model::MessageIdGenerator ids;
  ShardCounters counters;  // read by the admin API and /metrics through a posted snapshot
  std::mt19937_64 random;

  std::int64_t now_ms() const { return clock(); }
  const DestinationPolicy& policy_for(const model::Destination& d) const { return policies->policy_for(d); }
  std::size_t shard_count() const { return peers.size(); }
  model::ShardId owner_of(std::string_view key) const { return model::owner_shard(key, peers.size()); }
  // Consumer ids carry their home shard in the top bits: unique across shards.
  ConsumerId next_consumer_id() { return ConsumerId((static_cast<std::uint64_t>(self.value()) << 48) | next_consumer_++); }

  // Runs `fn` on `shard`'s Broker, later, in order with this shard's other posts there.
  void post_to(model::ShardId shard, std::function<void(Broker&)> fn);
  // Runs `fn` on every shard (this one at once), then `done` here once all have.
  void broadcast(std::function<void(Broker&)> fn, Completion done);
  // Runs `done` on `shard`: at once when that is the calling shard.
  void complete_on(model::ShardId shard, Completion done, Status status);

  // The memory gauge counts a message once while any queue (or schedule, or the retained store)
  // holds it: a topic message fanned out to many subscriptions shares one body, and counting it
  // per subscription would let one slow subscriber's copies reach the global limit alone.
  // Bytes that are not a message's (a queue object's overhead), added or (negative) given back.
  void account(std::int64_t bytes) {
    if (memory == nullptr || bytes == 0) return;
    if (bytes > 0) {
      memory->add(bytes);
    } else {
      memory->sub(-bytes);
    }
  }
  void account_hold(const model::Message& m) {
    if (memory != nullptr && m.holders.count.fetch_add(1, std::memory_order_relaxed) == 0) {
      memory->add(static_cast<std::int64_t>(m.footprint()));
    }
  }
  void account_release(const model::Message& m) {
    if (memory != nullptr && m.holders.count.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      memory->sub(static_cast<std::int64_t>(m.footprint()));
    }
  }

  // Timed work (redelivery delays, scheduled messages, sweeps) in one schedule with one wake-up.
  void at(std::int64_t due_ms, Schedule::Task task);
  std::size_t scheduled() const { return schedule_.size(); }

 private:
  void arm();
  void on_wake();

  Schedule schedule_;
  std::int64_t armed_due_ = INT64_MAX;
  std::vector<std::unique_ptr<const PolicyTable>> policy_tables_;  // the one in force last
  std::uint64_t next_consumer_ = 1;
};

// Completions of several parts (store, destinations' verdicts); the last reports the first
// error. Lives on the home shard only.
struct FanIn {
  std::size_t remaining;
  Status first_error;
  Completion done;

  void part(Status st) {
    if (!st && first_error) first_error = std::move(st);
    if (--remaining == 0 && done) done(std::move(first_error));
  }
};

}  // namespace carrier::core
