#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/consumer.hpp"

namespace carrier::session {

// Deliveries that count as acknowledged once written (STOMP ack:auto, MQTT QoS 0): that is when
// their credit goes back to the queue, so a slow reader slows its queue instead of growing the
// session's output. A delivery is staged when encoded into the transport's output, moves with
// it into the write under way (on_write_started), and is acked when that write is done.
// Runs on: the session's shard.
class WrittenAcks {
 public:
  using Tags = std::vector<std::uint64_t>;

  // `consumer`'s delivery `tag` is in the transport's output now.
  void stage(core::ConsumerId consumer, std::uint64_t tag);
  // The transport took its output into a write: what was staged is in it.
  void on_write_started();
  // That write is on the wire: `ack(consumer, tags)` once per consumer, in delivery order.
  template <class Ack>
  void on_write_done(Ack&& ack) {
    for (auto& [consumer, tags] : writing_) {
      if (!tags.empty()) ack(consumer, std::move(tags));
    }
    writing_.clear();
  }
  // Forgets everything (the subscriptions are gone: their queues take the deliveries back).
  void clear();
  bool empty() const { return staged_.empty() && writing_.empty(); }

 private:
  using ByConsumer = std::unordered_map<core::ConsumerId, Tags>;
  ByConsumer staged_;
  ByConsumer writing_;
  // Consecutive deliveries mostly come from one consumer: its list, without a lookup.
  core::ConsumerId last_consumer_{};
  Tags* last_tags_ = nullptr;
};

}  // namespace carrier::session
