#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "admin/access.hpp"
#include "admin/broker_info.hpp"
#include "admin/listing.hpp"
#include "admin/options.hpp"
#include "admin/shard_snapshot.hpp"
#include "admin/snapshot_cache.hpp"
#include "admin/store_monitor.hpp"
#include "core/broker.hpp"
#include "core/disk_alarm.hpp"
#include "core/memory_gauge.hpp"

namespace carrier::admin {

// /readyz's answer: ready, or the reasons it is not.
struct Readiness {
  bool ready = false;
  std::vector<std::string> reasons;  // "recovering", "listeners not up", "store failing", "shutting down"
};

// The operator's view of a running broker, as plain calls returning structs (docs/admin.md):
// health, metrics and the admin API's operations. The HTTP routes (http/handle_admin.cpp) are
// thin wrappers over it, and `carrier admin` reads what they answer. Calls that need the shards'
// state post a snapshot request to every shard and answer on the calling shard: message traffic
// never waits on a lock.
// Lifecycle: made by `carrier serve` before the protocols, told when recovery and listeners are
// done and when shutdown begins; outlives every session.
// Runs on: the health flags from any thread (atomics); the rest on the calling session's shard.
class Service {
 public:
  Service(Options options, MetricsOptions metrics)
      : options_(std::move(options)),
        metrics_(std::move(metrics)),
        snapshots_(std::chrono::milliseconds(options_.snapshot_max_age_ms)) {}
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  // Wiring, before the listeners accept.
  void set_info(BrokerInfo info) { info_ = std::move(info); }
  void set_store(StoreMonitor* store) { store_ = store; }
  void set_memory(core::MemoryGauge* memory) { memory_ = memory; }
  void set_disk_alarm(const core::DiskAlarm* disk) { disk_ = disk; }
  void set_recovered() { recovered_.store(true); }
  void set_listening() { listening_.store(true); }
  void set_stopping() { stopping_.store(true); }

  const Options& options() const { return options_; }
  bool may_administer(std::string_view user, std::string_view peer_address,
                      std::optional<bool> acl_admin_everywhere = std::nullopt) const {
    return admin::may_administer(options_, user, peer_address, acl_admin_everywhere);
  }
  const BrokerInfo& info() const { return info_; }
  Readiness readiness() const;
  StoreHealth store_health() const { return store_ != nullptr ? store_->health() : StoreHealth{}; }
  std::int64_t memory_used() const { return memory_ != nullptr ? memory_->used() : 0; }
  std::uint64_t memory_limit() const { return memory_ != nullptr ? memory_->limit() : 0; }
  // [journal] disk_free_limit_bytes and the last reading; null when no disk is watched.
  const core::DiskAlarm* disk_alarm() const { return disk_; }
  double uptime_seconds() const;

  // The Prometheus page, from a snapshot of its own (counters a scrape reads are never stale).
  void metrics(core::Broker& here, std::function<void(std::string)> done) const;
  // The overview and the lists below read shared snapshots no older than
  // [admin] snapshot_max_age_ms (SnapshotCache): many consoles cost the shards one collect.
  // Every shard's counters and connection counts, merged (no queue or connection rows needed).
  void totals(core::Broker& here, std::function<void(const ShardSnapshot&)> done) const;
  void destinations(core::Broker& here, std::string kind, PageRequest request,
                    std::function<void(Result<Page<DestinationRow>>)> done) const;
  void connections(core::Broker& here, PageRequest request,
                   std::function<void(Result<Page<ConnectionRow>>)> done) const;
  void topics(core::Broker& here, PageRequest request, std::function<void(Result<Page<TopicRow>>)> done) const;
  // One queue's row by its store key, fresh from its owner shard (no snapshot, no broadcast).
  void queue(core::Broker& here, std::string key, std::function<void(std::optional<QueueRow>)> done) const {
    find_queue(here, std::move(key), std::move(done));
  }
  // After an admin call changed what the broker holds (purge, move, a test message, a
  // close): the next read takes a new snapshot, so the operator sees the change.
  void changed() const { snapshots_.invalidate(); }
  const SnapshotCache& snapshots() const { return snapshots_; }
  // Closes connection `id` on whichever shard holds it with its protocol's goodbye, carrying
  // `reason` (net::TransportHandler::close_by_admin); `done` says whether it was found.
  void close_connection(core::Broker& here, std::uint64_t id, std::string reason, std::function<void(bool)> done) const;

 private:
  Options options_;
  MetricsOptions metrics_;
  BrokerInfo info_;
  StoreMonitor* store_ = nullptr;
  core::MemoryGauge* memory_ = nullptr;
  const core::DiskAlarm* disk_ = nullptr;
  std::atomic<bool> recovered_{false};
  std::atomic<bool> listening_{false};
  std::atomic<bool> stopping_{false};
  mutable SnapshotCache snapshots_;  // thread-safe; taken by admin reads only
};

}  // namespace carrier::admin
