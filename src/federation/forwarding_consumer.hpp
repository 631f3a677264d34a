#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/consumer.hpp"

namespace carrier::federation {

// The core consumer behind one (link, destination) pair: what the core hands it is pushed over
// the link and acked only once the far node has the message (durable there, if persistent).
// While it is subscribed the core keeps each delivery unacked, so a link that goes down gives
// its messages back to the queue (store and forward). Subscribed with `bridge`: it is not local
// demand.
// Runs on: shard 0 (subscribed on shard 0's Broker, so its deliveries come there).
class ForwardingConsumer final : public core::Consumer {
 public:
  using Forward = std::function<void(std::uint64_t link, core::ConsumerId id, core::Delivery delivery)>;

  ForwardingConsumer(std::uint64_t link, Forward forward) : link_(link), forward_(std::move(forward)) {}

  void deliver(core::ConsumerId id, std::vector<core::Delivery> batch) override {
    if (closed_) return;  // unsubscribed: the queue has these back already
    for (auto& d : batch) forward_(link_, id, std::move(d));
  }
  void close() { closed_ = true; }

 private:
  std::uint64_t link_;
  Forward forward_;
  bool closed_ = false;
};

}  // namespace carrier::federation
