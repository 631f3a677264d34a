#include "net/handshake_limit.hpp"

namespace carrier::net {

HandshakeSlot& HandshakeSlot::operator=(HandshakeSlot&& other) noexcept {
  if (this != &other) {
    release();
    limit_ = other.limit_;
    refusal_ = other.refusal_;
    other.limit_ = nullptr;
  }
  return *this;
}

void HandshakeSlot::release() {
  if (limit_ == nullptr) return;
  limit_->count_.fetch_sub(1, std::memory_order_relaxed);
  limit_ = nullptr;
}

HandshakeSlot HandshakeLimit::try_acquire() {
  auto n = count_.load(std::memory_order_relaxed);
  do {
    if (n >= max_) {
      count_refusal(Refusal::connecting);
      return HandshakeSlot();
    }
  } while (!count_.compare_exchange_weak(n, n + 1, std::memory_order_relaxed));
  return HandshakeSlot(this);
}

HandshakeSlot HandshakeLimit::try_acquire(const std::optional<Refusal>& refused) {
  if (!refused) return try_acquire();
  HandshakeSlot slot;
  slot.set_refusal(*refused);
  return slot;
}

}  // namespace carrier::net
