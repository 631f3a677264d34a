#include <map>

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
  // Deliveries acked or nacked inside the aborted transaction were taken out of the client's
  // view; they go back to their queues as redelivered.
  std::map<core::ConsumerId, std::vector<std::uint64_t>> returned;
  for (const auto& r : it->second.work.acks) returned[r.consumer].push_back(r.tag);
  for (const auto& r : it->second.work.nacks) returned[r.consumer].push_back(r.tag);
  transactions_.erase(it);
  for (auto& [consumer, tags] : returned) broker_.nack(consumer, std::move(tags), nullptr);
  maybe_receipt(frame);
}

}  // namespace carrier::stomp
