#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "admin/listing.hpp"
#include "admin/shard_snapshot.hpp"
#include "core/broker.hpp"

namespace carrier::admin {

// A merged snapshot of every shard, as the admin API reads it: with a max age set, taken once,
// then shared by every caller until it is that old (RabbitMQ's management stats are likewise collected
// on an interval, not per request). With queue rows it also carries the destination list's
// rows in name order, so a page request filters and sorts pointers, never the shards.
struct Snapshot {
  ShardSnapshot merged;
  std::vector<DestinationRow> destinations;  // with SnapshotScope::queues
};

// The admin API's snapshots, one slot per scope ([admin] snapshot_max_age_ms; 0, the default:
// none kept, each call its own). A caller gets a fresh enough snapshot that
// covers its scope at once, joins a collect already under way for its scope, or starts one;
// when it completes, every caller that joined is answered on its own shard. So N consoles
// polling every second cost one round of posts to the shards a second, not N; and however many
// call, at most one collect per scope is in flight.
// Nothing here is touched by the message path: the mutex is taken by admin calls only.
// Runs on: any shard (get), the callbacks on the caller's shard.
class SnapshotCache {
 public:
  using Clock = std::chrono::steady_clock;
  using Done = std::function<void(std::shared_ptr<const Snapshot>)>;

  explicit SnapshotCache(std::chrono::milliseconds max_age) : max_age_(max_age) {}
  SnapshotCache(const SnapshotCache&) = delete;
  SnapshotCache& operator=(const SnapshotCache&) = delete;

  // A snapshot covering `scope`, no older than max_age; with 0, one taken for this call alone
  // (after it began: read-after-write holds).
  void get(core::Broker& here, SnapshotScope scope, Done done);
  // The next get takes a new snapshot (after an admin call changed what the broker holds).
  void invalidate();

  // How many collects have started (for tests: callers that shared one).
  std::uint64_t collects() const;

 private:
  struct Waiter {
    core::ShardContext* context;  // the caller's shard
    Done done;
  };
  // One collect under way and the callers waiting for it.
  struct Round {
    std::vector<Waiter> waiters;
  };
  struct Slot {
    std::shared_ptr<const Snapshot> snapshot;
    Clock::time_point taken;
    std::shared_ptr<Round> round;  // null: none under way (or one begun before invalidate)
  };
  static std::size_t index(SnapshotScope s) {
    return (s.queues ? 1u : 0u) | (s.connections ? 2u : 0u) | (s.topics ? 4u : 0u);
  }
  void finish(std::shared_ptr<Round> round, std::shared_ptr<const Snapshot> snapshot, core::ShardContext* here);

  const std::chrono::milliseconds max_age_;
  mutable std::mutex mutex_;
  std::array<Slot, 8> slots_;
  std::uint64_t generation_ = 0;  // bumped by invalidate: a collect begun before it is not kept
  std::uint64_t collects_ = 0;
};

// Merges every shard's snapshot and, with queue rows, builds the destination rows.
Snapshot make_snapshot(std::vector<ShardSnapshot> shards, SnapshotScope scope);

}  // namespace carrier::admin
