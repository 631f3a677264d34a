#pragma once

#include <atomic>
#include <cstddef>

namespace carrier::net {

class HandshakeLimit;

// One connection's place among those that have not completed CONNECT. Released when the
// connection is let in or goes away, whichever comes first (destruction releases too).
// Runs on: the connection's shard.
class HandshakeSlot {
 public:
  HandshakeSlot() = default;
  explicit HandshakeSlot(HandshakeLimit* limit) : limit_(limit) {}
  HandshakeSlot(HandshakeSlot&& other) noexcept : limit_(other.limit_) { other.limit_ = nullptr; }
  HandshakeSlot& operator=(HandshakeSlot&& other) noexcept;
  HandshakeSlot(const HandshakeSlot&) = delete;
  HandshakeSlot& operator=(const HandshakeSlot&) = delete;
  ~HandshakeSlot() { release(); }

  bool held() const { return limit_ != nullptr; }
  void release();

 private:
  HandshakeLimit* limit_ = nullptr;
};

// The broker-wide cap on connections that have not completed CONNECT (STOMP and MQTT together,
// a password check under way included): sockets that never log in must not pile up. One
// atomic counter shared by every shard, touched once when a connection opens and once when it
// is let in or closes; never per frame.
// Runs on: made by the main thread before the shards run; try_acquire() on any shard.
class HandshakeLimit {
 public:
  explicit HandshakeLimit(std::size_t max) : max_(max) {}
  HandshakeLimit(const HandshakeLimit&) = delete;
  HandshakeLimit& operator=(const HandshakeLimit&) = delete;

  // A slot, or an empty one (held() false) when `max` connections are already connecting.
  HandshakeSlot try_acquire();
  std::size_t in_use() const { return count_.load(std::memory_order_relaxed); }
  std::size_t max() const { return max_; }

 private:
  friend class HandshakeSlot;
  const std::size_t max_;
  std::atomic<std::size_t> count_{0};
};

}  // namespace carrier::net
