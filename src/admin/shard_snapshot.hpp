#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/broker.hpp"
#include "core/shard_counters.hpp"
#include "net/transport.hpp"

namespace carrier::admin {

// One queue a shard owns (a queue, a temporary queue, a named subscription's queue).
struct QueueRow {
  std::string key;  // the store key: "queue:orders", "subscription:stomp:app:s1"
  std::size_t depth = 0;
  std::size_t bytes = 0;  // ready messages' bytes
  std::size_t unacked = 0;
  std::size_t consumers = 0;
  std::uint64_t enqueued = 0;  // messages ever put in it (since it was created here)
  bool durable = false;        // a durable named subscription
  std::int64_t oldest_timestamp_ms = 0;  // the first-arrived ready message's; 0: none ready
};

// The plain (non-durable) subscriptions of one topic filter, added up over the shards.
struct TopicRow {
  std::string filter;  // "prices.>", "sensors/+/temp" as the broker spells it
  std::size_t subscriptions = 0;
  std::size_t consumers = 0;
  std::size_t depth = 0;  // backlog waiting for those subscribers
  std::size_t bytes = 0;
  std::size_t unacked = 0;
  std::uint64_t enqueued = 0;
};

// One open connection of a shard.
struct ConnectionRow {
  std::uint64_t id = 0;
  std::string protocol;  // "stomp", "mqtt", "http"
  std::string peer;      // "127.0.0.1:50312"
  std::int64_t connected_at_ms = 0;  // epoch milliseconds
  std::size_t queued_bytes = 0;      // output waiting for the peer to read
  std::uint32_t shard = 0;
  std::string client_id;  // the protocol's client id (STOMP client-id, MQTT's); may be empty
  std::string user;       // the logged-in user; empty: anonymous
  net::MessageRates messages;
};

// What a snapshot copies beyond counters: the queue and connection tables cost time on the
// shard in proportion to their size, so /metrics asks only for what it exposes.
struct SnapshotScope {
  bool queues = false;
  bool connections = false;
  bool topics = false;
};

// One shard's state at one moment, copied on that shard (nothing in it points back there).
struct ShardSnapshot {
  core::ShardCounters counters;
  core::BrokerStats stats;
  std::map<std::string, std::size_t> connections_by_protocol;
  std::vector<QueueRow> queues;            // with SnapshotScope::queues
  std::vector<ConnectionRow> connections;  // with SnapshotScope::connections
  std::vector<TopicRow> topics;            // with SnapshotScope::topics, one per filter
};

// Copies what `scope` asks for. Runs on: the broker's shard.
ShardSnapshot take_snapshot(core::Broker& broker, SnapshotScope scope);

// Takes a snapshot on every shard (a post to each, between its other work: message traffic
// never waits on a lock) and hands them, index = shard, to `done` on `here`'s shard.
// Runs on: `here`'s shard.
void collect(core::Broker& here, SnapshotScope scope, std::function<void(std::vector<ShardSnapshot>)> done);

// One queue's row (`key` a store key), read on its owner shard: one post there and one back,
// no broadcast, whatever the number of queues (a destination's page in the console). nullopt:
// no such queue now. Runs on: `here`'s shard (the read: the owner's).
void find_queue(core::Broker& here, std::string key, std::function<void(std::optional<QueueRow>)> done);

// Every shard's snapshots added up (counters, stats, connections by protocol; rows appended).
ShardSnapshot merge(std::vector<ShardSnapshot> shards);

}  // namespace carrier::admin
