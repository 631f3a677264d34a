#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace carrier::admin {

// Who may use the admin API ([admin] in the configuration; docs/admin.md).
struct Options {
  // Users with the admin right. Empty: only clients on a loopback address (127.0.0.0/8, ::1).
  std::vector<std::string> users;
  // The overview and the destination, connection and topic lists answer from a snapshot of
  // every shard at most this old, shared by every caller (0: each call takes its own, so a
  // read after a send sees it). /metrics is always current.
  std::uint32_t snapshot_max_age_ms = 0;
};

// What /metrics exposes per destination ([metrics]; docs/metrics.md). Every destination is one
// series per metric, so their number is bounded.
struct MetricsOptions {
  // Destinations with their own series: names or patterns in the broker's syntax ("orders.*",
  // "orders.>", "*" for every single-level name, ">" for all). Empty: none, only totals.
  std::vector<std::string> destinations;
  // At most this many destinations get series (the first in name order); the rest are counted
  // in carrier_destination_series_dropped.
  std::size_t max_destination_series = 1000;
};

}  // namespace carrier::admin
