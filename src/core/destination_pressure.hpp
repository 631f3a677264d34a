#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <string_view>

namespace carrier::core {

// Queues over their limits whose policy says `overflow = "block"`, and topics whose messages a
// plain subscription over its backlog bound keeps receiving (`[core] subscriber_backlog_overflow`),
// visible to every shard. The owner shard marks a queue blocked when it is full and clears it
// below 90% (a subscription's home shard likewise its topics); a protocol session asks before
// reading a SEND or PUBLISH and pauses that producer's connection while its destination is
// blocked, so back-pressure falls on the producers of the full destination only. Marks count:
// a topic stays blocked while any subscription holds a mark on it. `on_relief` runs at every
// clear, and paused connections read again (and ask again).
// Keys are hashed into slots: a collision can pause a producer of another queue until the
// blocked one drains — rare, temporary, and never a lost message. The fast path (nothing blocked
// anywhere) is one relaxed load.
// Thread-safe: atomics only; owner shards block and clear, sessions ask.
class DestinationPressure {
 public:
  void set_on_relief(std::function<void()> fn) { on_relief_ = std::move(fn); }

  void block(std::string_view key) {
    slots_[slot(key)].fetch_add(1, std::memory_order_relaxed);
    blocked_.fetch_add(1, std::memory_order_release);
  }
  void clear(std::string_view key) {
    slots_[slot(key)].fetch_sub(1, std::memory_order_relaxed);
    blocked_.fetch_sub(1, std::memory_order_release);
    if (on_relief_) on_relief_();
  }
  // Several keys at once (the topics a slow subscription marked): one relief for all of them.
  template <typename Keys>
  void clear_all(const Keys& keys) {
    if (keys.empty()) return;
    for (const auto& key : keys) slots_[slot(key)].fetch_sub(1, std::memory_order_relaxed);
    blocked_.fetch_sub(static_cast<std::uint32_t>(keys.size()), std::memory_order_release);
    if (on_relief_) on_relief_();
  }
  bool any() const { return blocked_.load(std::memory_order_acquire) != 0; }
  bool blocked(std::string_view key) const { return slots_[slot(key)].load(std::memory_order_relaxed) != 0; }

 private:
  static constexpr std::size_t kSlots = 1024;
  static std::size_t slot(std::string_view key) {
    std::uint64_t h = 14695981039346656037ull;  // FNV-1a
    for (unsigned char c : key) h = (h ^ c) * 1099511628211ull;
    return h % kSlots;
  }

  std::array<std::atomic<std::uint32_t>, kSlots> slots_{};
  std::atomic<std::uint32_t> blocked_{0};
  std::function<void()> on_relief_;
};

}  // namespace carrier::core
