#include <algorithm>

#include <fmt/format.h>

#include "stomp/session.hpp"

namespace carrier::stomp {

void Session::handle_begin(codec::Frame& frame) {
  const auto* tx = frame.header("transaction");
  if (tx == nullptr) {
    fail(Refusal::missing_header, "transaction", &frame);
    return;
  }
  if (transactions_.contains(*tx)) {
    fail(Refusal::transaction_already_begun, fmt::format("transaction '{}' is already open", *tx), &frame);
    return;
  }
  if (transactions_.size() >= options_.max_transactions) {
    fail(Refusal::too_many_transactions,
         fmt::format("a connection may have at most {} transactions open (stomp.max_transactions)",
                     options_.max_transactions),
         &frame);
    return;
  }
  transactions_.emplace(*tx, Tx{});
  maybe_receipt(frame);
}

void Session::handle_commit(codec::Frame& frame) {
  const auto* tx = frame.header("transaction");
  if (tx == nullptr) {
    fail(Refusal::missing_header, "transaction", &frame);
    return;
  }
  auto it = transactions_.find(*tx);
  if (it == transactions_.end()) {
    fail(Refusal::unknown_transaction, fmt::format("no transaction '{}' has begun", *tx), &frame);
    return;
  }
  core::Transaction work = std::move(it->second.work);
  // From here the broker holds the sends: it counts them where they land.
  if (auto* memory = broker_.memory()) memory->sub(static_cast<std::int64_t>(it->second.bytes));
  transactions_.erase(it);
  std::string receipt = frame.header("receipt") ? *frame.header("receipt") : std::string();
  ++sends_in_flight_;
  broker_.commit(std::move(work), session::bind_weak(this, [receipt](const auto& self, Status st) {
    --self->sends_in_flight_;
    if (self->is_closed()) return;
    if (!st) {
      codec::Frame cause;
      if (!receipt.empty()) cause.headers.emplace_back("receipt", receipt);
      self->fail(refusal_for(st.error().code, Operation::commit), st.error().to_string(), &cause);
      return;
    }
    if (!receipt.empty()) self->send_receipt(receipt);
    if (self->disconnecting_ && self->sends_in_flight_ == 0) self->complete_disconnect();
  }));
}

void Session::handle_abort(codec::Frame& frame) {
  const auto* tx = frame.header("transaction");
  if (tx == nullptr) {
    fail(Refusal::missing_header, "transaction", &frame);
    return;
  }
  auto it = transactions_.find(*tx);
  if (it == transactions_.end()) {
    fail(Refusal::unknown_transaction, fmt::format("no transaction '{}' has begun", *tx), &frame);
    return;
  }
  abort_transaction(it);
  maybe_receipt(frame);
}

void Session::abort_transaction(std::unordered_map<std::string, Tx>::iterator it) {
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
  if (auto* memory = broker_.memory()) memory->sub(static_cast<std::int64_t>(it->second.bytes));
  transactions_.erase(it);
}

std::size_t Session::transaction_byte_limit() const {
  // A transaction past half the memory limit would hold the broker over it by itself, and its
  // own COMMIT would then wait behind the paused reading.
  const auto* memory = broker_.memory();
  if (memory == nullptr || memory->limit() == 0) return options_.max_transaction_bytes;
  return std::min<std::size_t>(options_.max_transaction_bytes, memory->limit() / 2);
}

bool Session::admit_to_transaction(std::unordered_map<std::string, Tx>::iterator it, std::size_t bytes,
                                   std::size_t messages, const codec::Frame& frame) {
  Tx& tx = it->second;
  const std::size_t byte_limit = transaction_byte_limit();
  std::string detail;
  if (tx.bytes + bytes > byte_limit) {
    detail = fmt::format("transaction '{}' would hold more than {} bytes (stomp.max_transaction_bytes); it is aborted",
                         it->first, byte_limit);
  } else if (tx.messages + messages > options_.max_transaction_messages) {
    detail = fmt::format(
        "transaction '{}' would hold more than {} messages (stomp.max_transaction_messages); it is aborted", it->first,
        options_.max_transaction_messages);
  }
  if (detail.empty()) {
    tx.bytes += bytes;
    tx.messages += messages;
    if (auto* memory = broker_.memory(); memory != nullptr && bytes != 0) memory->add(static_cast<std::int64_t>(bytes));
    return true;
  }
  abort_transaction(it);
  fail(Refusal::transaction_too_large, detail, &frame);
  return false;
}

}  // namespace carrier::stomp
