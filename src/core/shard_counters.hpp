#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

namespace carrier::core {

// Counts of a value in fixed buckets (upper bounds in milliseconds, Prometheus' `le`), plus
// their sum: what a latency histogram needs, mergeable across shards by adding.
struct LatencyHistogram {
  static constexpr std::array<std::int64_t, 14> kBoundsMs = {1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000,
                                                             10000, 60000};
  std::array<std::uint64_t, kBoundsMs.size() + 1> counts{};  // the last one: above every bound (+Inf)
  std::int64_t sum_ms = 0;

  void record(std::int64_t ms) {
    ms = std::max<std::int64_t>(ms, 0);
    const auto at = std::lower_bound(kBoundsMs.begin(), kBoundsMs.end(), ms) - kBoundsMs.begin();
    ++counts[static_cast<std::size_t>(at)];
    sum_ms += ms;
  }
  void merge(const LatencyHistogram& other) {
    for (std::size_t i = 0; i < counts.size(); ++i) counts[i] += other.counts[i];
    sum_ms += other.sum_ms;
  }
  std::uint64_t count() const {
    std::uint64_t n = 0;
    for (auto c : counts) n += c;
    return n;
  }
};

// What one shard has done since start, for /metrics and the admin API: plain counters, bumped
// by the shard's own thread on the message path (no atomics), read by a snapshot posted to it.
// Runs on: its shard.
struct ShardCounters {
  std::uint64_t published = 0;      // messages producers sent through this shard's sessions
  std::uint64_t delivered = 0;      // deliveries handed to consumers by queues owned here
  std::uint64_t redelivered = 0;    // of those, deliveries after the first
  std::uint64_t dead_lettered = 0;  // messages moved to a dead-letter queue (or dropped for want of one)
  // Paging (docs/storage.md, "Paging"): messages paged out, read back, found gone when read
  // back (acked or removed meanwhile), and whose read failed (corrupt or I/O error: kept out
  // of dispatch until a restart reads them again).
  std::uint64_t paged_out = 0;
  std::uint64_t paged_in = 0;
  std::uint64_t page_in_missing = 0;
  std::uint64_t page_in_failed = 0;
  // Non-persistent messages written to the store past the budget so they could leave memory
  // (docs/storage.md, "Non-persistent messages past the budget").
  std::uint64_t spilled = 0;
  // From the broker taking a message (its id's time) to its first delivery.
  LatencyHistogram publish_to_deliver;
};

}  // namespace carrier::core
