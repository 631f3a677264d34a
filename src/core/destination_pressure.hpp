#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <random>
#include <utility>
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
// Keys are hashed into two tables of slots, and a key counts as blocked only when its slots in
// both are marked: another queue's producer is paused by mistake only when its key collides with
// a blocked one in both (about one pair in 16 million) — temporary, and never a lost message.
// With one table of 1,024 slots it was one pair in 1,024, enough to pause a test's unrelated
// producer now and then. The hash is seeded per process, so a client cannot pick queue names
// that collide with another's on purpose. The fast path (nothing blocked anywhere) is one
// relaxed load.
// Thread-safe: atomics only; owner shards block and clear, sessions ask.
class DestinationPressure {
 public:
  DestinationPressure() : seed_(std::random_device{}() | (std::uint64_t{std::random_device{}()} << 32)) {}
  // A fixed seed: for tests that need two keys to collide.
  explicit DestinationPressure(std::uint64_t seed) : seed_(seed) {}

  void set_on_relief(std::function<void()> fn) { on_relief_ = std::move(fn); }

  void block(std::string_view key) {
    add(key, 1);
    blocked_.fetch_add(1, std::memory_order_release);
  }
  void clear(std::string_view key) {
    add(key, -1);
    blocked_.fetch_sub(1, std::memory_order_release);
    if (on_relief_) on_relief_();
  }
  // Several keys at once (the topics a slow subscription marked): one relief for all of them.
  template <typename Keys>
  void clear_all(const Keys& keys) {
    if (keys.empty()) return;
    for (const auto& key : keys) add(key, -1);
    blocked_.fetch_sub(static_cast<std::uint32_t>(keys.size()), std::memory_order_release);
    if (on_relief_) on_relief_();
  }
  bool any() const { return blocked_.load(std::memory_order_acquire) != 0; }
  bool blocked(std::string_view key) const {
    const auto [a, b] = slots(key);
    return first_[a].load(std::memory_order_relaxed) != 0 && second_[b].load(std::memory_order_relaxed) != 0;
  }

  static constexpr std::size_t kSlots = 4096;
  // The slots `key` takes in the two tables (exposed for tests).
  std::pair<std::size_t, std::size_t> slots(std::string_view key) const {
    std::uint64_t h = 14695981039346656037ull ^ seed_;  // FNV-1a, seeded
    for (unsigned char c : key) h = (h ^ c) * 1099511628211ull;
    h ^= h >> 29;  // the low bits of FNV-1a mix poorly on their own
    return {h % kSlots, (h >> 32) % kSlots};
  }

 private:
  void add(std::string_view key, int delta) {
    const auto [a, b] = slots(key);
    first_[a].fetch_add(static_cast<std::uint32_t>(delta), std::memory_order_relaxed);
    second_[b].fetch_add(static_cast<std::uint32_t>(delta), std::memory_order_relaxed);
  }

  std::uint64_t seed_;
  std::array<std::atomic<std::uint32_t>, kSlots> first_{};
  std::array<std::atomic<std::uint32_t>, kSlots> second_{};
  std::atomic<std::uint32_t> blocked_{0};
  std::function<void()> on_relief_;
};

}  // namespace carrier::core
