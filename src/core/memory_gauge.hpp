#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

namespace carrier::core {

// Bytes of messages the broker holds, across all shards, against the global memory limit. Past
// the limit, protocol sessions stop reading SENDs (TCP back-pressure on producers); once usage
// falls under 90% of the limit, `on_relief` runs (once per pause) so they read again.
// The same count against the paging budget ([core] memory_budget_bytes): past it, shards page
// out persistent messages already in the store (docs/storage.md, "Paging"); 0 = never.
// Thread-safe: atomics only; shards add and subtract, sessions ask.
class MemoryGauge {
 public:
  explicit MemoryGauge(std::uint64_t limit_bytes = 0) : limit_(limit_bytes) {}

  void set_on_relief(std::function<void()> fn) { on_relief_ = std::move(fn); }

  void add(std::int64_t bytes) { used_.fetch_add(bytes, std::memory_order_relaxed); }
  void sub(std::int64_t bytes) {
    const auto now = used_.fetch_sub(bytes, std::memory_order_relaxed) - bytes;
    if (limit_ != 0 && now < static_cast<std::int64_t>(limit_ / 10 * 9) &&
        paused_.load(std::memory_order_relaxed) && paused_.exchange(false) && on_relief_) {
      on_relief_();
    }
  }
  // True when a producer must wait. Marks the gauge paused so the next relief is announced.
  bool over_limit() {
    if (limit_ == 0 || used_.load(std::memory_order_relaxed) < static_cast<std::int64_t>(limit_)) return false;
    paused_.store(true);
    // Usage may have dropped between the check and the mark: then nobody would announce relief.
    if (used_.load(std::memory_order_relaxed) < static_cast<std::int64_t>(limit_ / 10 * 9) && paused_.exchange(false)) {
      return false;
    }
    return true;
  }
  std::int64_t used() const { return used_.load(std::memory_order_relaxed); }
  std::uint64_t limit() const { return limit_; }

  void set_budget(std::uint64_t bytes) { budget_.store(bytes, std::memory_order_relaxed); }
  std::uint64_t budget() const { return budget_.load(std::memory_order_relaxed); }
  // Queues with a cold tail (docs/storage.md, "Cold tails"): while there are any, every send to
  // a pageable queue learns where it was stored, so that an arrival behind a tail can join it.
  void add_cold_queues(std::int64_t n) { cold_queues_.fetch_add(n, std::memory_order_relaxed); }
  bool any_cold() const { return cold_queues_.load(std::memory_order_relaxed) > 0; }
  // `freed` bytes less would still be over the budget (false when there is none).
  bool over_budget(std::int64_t freed = 0) const {
    const auto b = budget();
    return b != 0 && used() - freed > static_cast<std::int64_t>(b);
  }

 private:
  std::uint64_t limit_;
  std::atomic<std::int64_t> used_{0};
  std::atomic<bool> paused_{false};
  std::atomic<std::uint64_t> budget_{0};
  std::atomic<std::int64_t> cold_queues_{0};
  std::function<void()> on_relief_;
};

}  // namespace carrier::core
