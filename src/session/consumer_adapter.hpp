#pragma once

#include <memory>
#include <vector>

#include "core/consumer.hpp"

namespace carrier::session {

// The core's view of a protocol session's subscriptions: deliveries hop to the session if it
// still exists (the core may hold the consumer a little longer than the session lives; what
// it delivers then goes back to its queue when the consumer is removed). A session `S` has
// `deliver(id, batch)`; wildcard queue subscriptions reach `attach_child`/`detach_child` if it
// has them.
// Runs on: the session's shard.
template <class S>
class ConsumerAdapter final : public core::Consumer {
 public:
  explicit ConsumerAdapter(std::weak_ptr<S> session) : session_(std::move(session)) {}

  void deliver(core::ConsumerId id, std::vector<core::Delivery> batch) override {
    if (auto s = session_.lock()) s->deliver(id, std::move(batch));
  }
  void attached(core::ConsumerId parent, core::ConsumerId child) override {
    if constexpr (requires(S& s) { s.attach_child(parent, child); }) {
      if (auto s = session_.lock()) s->attach_child(parent, child);
    }
  }
  void detached(core::ConsumerId parent, core::ConsumerId child) override {
    if constexpr (requires(S& s) { s.detach_child(parent, child); }) {
      if (auto s = session_.lock()) s->detach_child(parent, child);
    }
  }

 private:
  std::weak_ptr<S> session_;
};

}  // namespace carrier::session
