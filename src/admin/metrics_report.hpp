#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "admin/broker_info.hpp"
#include "admin/options.hpp"
#include "admin/shard_snapshot.hpp"
#include "admin/store_monitor.hpp"
#include "core/disk_alarm.hpp"
#include "net/refusals.hpp"

namespace carrier::admin {

// Everything one scrape shows, gathered from the shards, the store and the memory gauge.
struct MetricsInput {
  const BrokerInfo& info;
  double uptime_seconds = 0;
  const ShardSnapshot& broker;  // merged, with its queue rows
  const StoreHealth& store;
  std::int64_t memory_used = 0;
  std::uint64_t memory_limit = 0;  // 0: no limit
  // Clients refused for a limit, by net::Refusal (the destinations one from core's budget).
  std::array<std::uint64_t, net::kRefusalKinds> refusals{};
  std::uint64_t destinations = 0;      // queues and named subscriptions, all shards
  std::uint64_t max_destinations = 0;  // 0: no budget wired in
  // [journal] disk_free_limit_bytes and its last reading; null: no disk watched (memory, postgres).
  const core::DiskAlarm* disk = nullptr;
};

// The /metrics page (docs/metrics.md lists every family). Queue and subscription series only
// for names that `options.destinations` matches, at most `max_destination_series` of them, the
// first in name order; the number left out is carrier_destination_series_dropped. Pure.
std::string render_metrics(const MetricsInput& in, const MetricsOptions& options);

// Whether `options.destinations` asks for a series of this destination name.
bool wants_series(const MetricsOptions& options, std::string_view name);

}  // namespace carrier::admin
