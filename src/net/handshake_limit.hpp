#pragma once

#include <atomic>
#include <cstddef>
#include <optional>

#include "net/refusals.hpp"

namespace carrier::net {

class HandshakeLimit;

// One connection's place among those that have not completed CONNECT. Released when the
// connection is let in or goes away, whichever comes first (destruction releases too).
// Runs on: the connection's shard.
class HandshakeSlot {
 public:
  HandshakeSlot() = default;
  explicit HandshakeSlot(HandshakeLimit* limit) : limit_(limit) {}
  HandshakeSlot(HandshakeSlot&& other) noexcept : limit_(other.limit_), refusal_(other.refusal_) {
    other.limit_ = nullptr;
  }
  HandshakeSlot& operator=(HandshakeSlot&& other) noexcept;
  HandshakeSlot(const HandshakeSlot&) = delete;
  HandshakeSlot& operator=(const HandshakeSlot&) = delete;
  ~HandshakeSlot() { release(); }

  bool held() const { return limit_ != nullptr; }
  void release();

  // What the session must refuse the client for, in its protocol's words, or nothing: let it
  // in. A slot that is not held is `connecting`; a held one may carry a refusal the listener
  // decided (a per-source limit) for a session that must read CONNECT before it can answer.
  std::optional<Refusal> refusal() const {
    if (refusal_) return refusal_;
    if (!held()) return Refusal::connecting;
    return std::nullopt;
  }
  void set_refusal(Refusal why) { refusal_ = why; }

 private:
  HandshakeLimit* limit_ = nullptr;
  std::optional<Refusal> refusal_;
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
  // The same, unless the listener already refused the connection: then an empty slot that
  // carries that refusal (the session answers it; nothing is counted here).
  HandshakeSlot try_acquire(const std::optional<Refusal>& refused);
  std::size_t in_use() const { return count_.load(std::memory_order_relaxed); }
  std::size_t max() const { return max_; }

 private:
  friend class HandshakeSlot;
  const std::size_t max_;
  std::atomic<std::size_t> count_{0};
};

}  // namespace carrier::net
