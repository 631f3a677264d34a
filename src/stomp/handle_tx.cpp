#include <fmt/format.h>

#include "stomp/session.hpp"

namespace carrier::stomp {

void Session::handle_begin(codec::Frame& frame) {
  const auto* tx = frame.header("transaction");
  if (tx == nullptr) {
    fail("BEGIN frame has no transaction header", {}, &frame);
    return;
  }
  if (transactions_.contains(*tx)) {
    fail("transaction already begun", fmt::format("transaction '{}' is already open", *tx), &frame);
    return;
  }
  transactions_.emplace(*tx, Tx{});
  maybe_receipt(frame);
}

void Session::handle_commit(codec::Frame& frame) {
  const auto* tx = frame.header("transaction");
  if (tx == nullptr) {
    fail("COMMIT frame has no transaction header", {}, &frame);
    return;
  }
  auto it = transactions_.find(*tx);
  if (it == transactions_.end()) {
    fail("unknown transaction", fmt::format("no transaction '{}' has begun", *tx), &frame);
    return;
  }
  core::Transaction work = std::move(it->second.work);
  transactions_.erase(it);
  std::string receipt = frame.header("receipt") ? *frame.header("receipt") : std::string();
  auto weak = std::weak_ptr<Session>(std::static_pointer_cast<Session>(shared_from_this()));
  ++sends_in_flight_;
  broker_.commit(std::move(work), [weak, receipt](Status st) {
    auto self = weak.lock();
    if (!self) return;
    --self->sends_in_flight_;
    if (self->is_closed()) return;
    if (!st) {
      codec::Frame cause;
      if (!receipt.empty()) cause.headers.emplace_back("receipt", receipt);
      self->fail("transaction not committed", st.error().to_string(), &cause);
      return;
    }
    if (!receipt.empty()) self->send_receipt(receipt);
    if (self->disconnecting_ && self->sends_in_flight_ == 0) self->complete_disconnect();
  });
}

void Session::handle_abort(codec::Frame& frame) {
  const auto* tx = frame.header("transaction");
  if (tx == nullptr) {
    fail("ABORT frame has no transaction header", {}, &frame);
    return;
  }
  auto it = transactions_.find(*tx);
  if (it == transactions_.end()) {
    fail("unknown transaction", fmt::format("no transaction '{}' has begun", *tx), &frame);
    return;
  }
  // ACKs and NACKs of the aborted transaction are undone: their deliveries stay with their
  // subscription, delivered and unacknowledged, so the client may settle them again (as ActiveMQ
  // and RabbitMQ do). The core never saw them: it still holds them for this consumer.
  auto& tx_state = it->second;
  for (auto [refs, numbers] : {std::pair{&tx_state.work.acks, &tx_state.ack_numbers},
                               std::pair{&tx_state.work.nacks, &tx_state.nack_numbers}}) {
    for (std::size_t i = 0; i < refs->size(); ++i) {
      const auto& r = (*refs)[i];
      auto by = by_consumer_.find(r.consumer);
      if (by == by_consumer_.end()) continue;  // unsubscribed since: the queue took them back
      if (auto* sub = find_subscription(by->second)) sub->unacked.emplace((*numbers)[i], Pending{r.consumer, r.tag, r.message});
    }
  }
  transactions_.erase(it);
  maybe_receipt(frame);
}

}  // namespace carrier::stomp
