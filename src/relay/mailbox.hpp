#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "core/consumer.hpp"
#include "model/message.hpp"

namespace carrier::relay {

// One relay peer's outgoing messages (seed 002's Mailbox): responses to its requests and the
// messages of the pipes it listens on, each as encoded JXME bytes. Delivery is at-least-once:
// what a poll hands out stays "in flight" until the peer's next poll acknowledges it, and goes
// back to the front of the mailbox if no poll comes within the redelivery time. A pipe message
// is acked to the broker only when acknowledged here. Each poll's answer is a numbered batch: a
// Carrier-aware peer names the last batch it received (Carrier-Relay-Ack), and what later
// batches held is handed out again at once instead of being taken as acknowledged.
// Runs on: the peer's owning shard (in its Gateway).
class Mailbox {
 public:
  struct Item {
    std::string bytes;
    core::ConsumerId consumer{};  // a pipe message: the listen's consumer and the delivery tag
    std::uint64_t tag = 0;
    bool from_pipe = false;
    model::MessageId record{};  // a response's `$relay-mail` record, or nil
  };

  void push(Item item) { pending_.push_back(std::move(item)); }
  // Waiting and in flight together (what max_pending bounds).
  std::size_t size() const { return pending_.size() + in_flight_.size(); }
  bool has_pending() const { return !pending_.empty(); }
  bool has_in_flight() const { return !in_flight_.empty(); }

  // Hands out up to `max` waiting items at time `now_ms` as batch `batch`, appending their
  // bytes to `out`.
  std::size_t hand_out(std::size_t max, std::int64_t now_ms, std::uint64_t batch, std::string& out);
  // A poll came: what was in flight is taken and returned (to ack and to remove its records).
  // With `received` (the peer's Carrier-Relay-Ack), only batches up to it are taken; later ones
  // never reached the peer and go back to the front, in their order.
  std::vector<Item> acknowledge(std::optional<std::uint64_t> received = std::nullopt);
  // Items in flight since before `before_ms` go back to the front, in their order.
  std::size_t redeliver_older_than(std::int64_t before_ms);
  // Everything, waiting or in flight (the peer is gone).
  std::vector<Item> clear();
  // The earliest time an in-flight item was handed out, or -1.
  std::int64_t oldest_in_flight_ms() const { return in_flight_.empty() ? -1 : in_flight_.front().handed_ms; }

 private:
  struct InFlight {
    Item item;
    std::int64_t handed_ms = 0;
    std::uint64_t batch = 0;
  };
  std::deque<Item> pending_;
  std::deque<InFlight> in_flight_;  // in hand-out order, so handed_ms never decreases
};

}  // namespace carrier::relay
