#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace carrier::core {

// The broker-wide count of destinations that cost memory whoever made them: queues (`queue:`)
// and named subscriptions' queues (`subscription:`), on every shard together ([limits]
// max_destinations). Every such queue counts, configured and recovered ones too; only creation
// on a client's behalf is refused past the cap (a SEND or SUBSCRIBE naming a new queue, a new
// durable or shared subscription), so one client making 100,000 names hits it and clients of
// existing destinations carry on. Shards check, then create, without a lock: the cap may be
// passed by one destination per shard racing, never more.
// Thread-safe: atomics only; any shard counts and asks.
class DestinationBudget {
 public:
  explicit DestinationBudget(std::size_t max) : max_(max) {}
  DestinationBudget(const DestinationBudget&) = delete;
  DestinationBudget& operator=(const DestinationBudget&) = delete;

  void add() { count_.fetch_add(1, std::memory_order_relaxed); }
  void remove() { count_.fetch_sub(1, std::memory_order_relaxed); }
  // Whether a client may make one more; a no is counted (the refusals metric).
  bool may_create() {
    if (count_.load(std::memory_order_relaxed) < max_) return true;
    refused_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }

  std::size_t count() const { return count_.load(std::memory_order_relaxed); }
  std::size_t max() const { return max_; }
  std::uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }

 private:
  const std::size_t max_;
  std::atomic<std::size_t> count_{0};
  std::atomic<std::uint64_t> refused_{0};
};

}  // namespace carrier::core
