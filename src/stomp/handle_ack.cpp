#include <algorithm>

#include <fmt/format.h>

#include "stomp/ack_request.hpp"
#include "stomp/session.hpp"

namespace carrier::stomp {

Result<std::vector<core::DeliveryRef>> Session::resolve_ack(const AckRequest& request, Subscription*& sub,
                                                            std::vector<std::uint64_t>& numbers) {
  sub = nullptr;
  std::uint64_t tag = 0;
  if (request.token) {
    tag = request.token->delivery;
    for (auto& [sid, s] : subscriptions_) {
      if (s.number == request.token->subscription) sub = &s;
    }
    if (sub != nullptr && !sub->unacked.contains(tag)) sub = nullptr;
  } else if (version_ != codec::Version::v1_2) {
    auto search = [&](Subscription& s) {
      for (const auto& [t, p] : s.unacked) {
        if (p.message->id.to_string() == request.named) {
          sub = &s;
          tag = t;
          return true;
        }
      }
      return false;
    };
    if (request.subscription) {
      if (auto* s = find_subscription(*request.subscription)) search(*s);
    } else {
      for (auto& [sid, s] : subscriptions_) {
        if (search(s)) break;
      }
    }
  }
  if (sub == nullptr) {
    return unexpected(Errc::not_found, fmt::format("no unacknowledged message with {} '{}'",
                                                   version_ == codec::Version::v1_2 ? "ack id" : "message-id",
                                                   request.named));
  }
  std::vector<core::DeliveryRef> refs;
  if (sub->ack_mode == core::AckMode::client) {
    // Cumulative: this delivery and every earlier one of the subscription.
    auto end = sub->unacked.upper_bound(tag);
    for (auto it = sub->unacked.begin(); it != end; ++it) {
      refs.push_back({it->second.consumer, it->second.tag, it->second.message});
      numbers.push_back(it->first);
    }
    sub->unacked.erase(sub->unacked.begin(), end);
  } else {
    auto it = sub->unacked.find(tag);
    refs.push_back({it->second.consumer, it->second.tag, it->second.message});
    numbers.push_back(it->first);
    sub->unacked.erase(it);
  }
  return refs;
}

void Session::handle_ack(codec::Frame& frame, bool is_ack) {
  auto read = read_ack(frame, version_);
  if (auto* refused = std::get_if<Refused>(&read)) {
    fail(refused->why, refused->detail, &frame);
    return;
  }
  const auto& request = std::get<AckRequest>(read);
  Subscription* sub = nullptr;
  std::vector<std::uint64_t> numbers;
  auto refs = resolve_ack(request, sub, numbers);
  if (!refs) {
    fail(Refusal::unknown_message, refs.error().detail, &frame);
    return;
  }
  const bool requeue = request.requeue;
  if (!requeue) {
    for (auto& r : *refs) r.requeue = false;
  }
  if (const auto* tx = frame.header("transaction")) {
    auto it = transactions_.find(*tx);
    if (it == transactions_.end()) {
      fail(Refusal::unknown_transaction, fmt::format("no transaction '{}' has begun", *tx), &frame);
      return;
    }
    // The deliveries were held by the subscription already: only the entries count.
    if (!admit_to_transaction(it, 0, refs->size(), frame)) return;
    auto& target = is_ack ? it->second.work.acks : it->second.work.nacks;
    target.insert(target.end(), refs->begin(), refs->end());
    auto& held = is_ack ? it->second.ack_numbers : it->second.nack_numbers;
    held.insert(held.end(), numbers.begin(), numbers.end());
    maybe_receipt(frame);
    return;
  }
  // Per consumer: one, except a wildcard subscription's cumulative ack spanning several queues.
  std::vector<std::pair<core::ConsumerId, std::vector<std::uint64_t>>> by_consumer;
  for (const auto& r : *refs) {
    auto at = std::find_if(by_consumer.begin(), by_consumer.end(), [&](const auto& e) { return e.first == r.consumer; });
    if (at == by_consumer.end()) at = by_consumer.insert(by_consumer.end(), {r.consumer, {}});
    at->second.push_back(r.tag);
  }
  std::string receipt = frame.header("receipt") ? *frame.header("receipt") : std::string();
  // Several parts (a wildcard subscription): the receipt waits for all, the first failure is
  // reported. One part needs no count.
  struct Parts {
    std::size_t remaining;
    bool failed = false;
  };
  auto parts = by_consumer.size() > 1 ? std::make_shared<Parts>(Parts{by_consumer.size()}) : nullptr;
  auto done = session::bind_weak(this, [receipt, parts](const auto& self, Status st) {
    if (self->is_closing() || (parts && parts->failed)) return;
    if (!st) {
      if (parts) parts->failed = true;
      self->fail(refusal_for(st.error().code, Operation::acknowledge), st.error().to_string());
      return;
    }
    if (parts && --parts->remaining != 0) return;
    if (!receipt.empty()) self->send_receipt(receipt);
  });
  for (auto& [consumer, tags] : by_consumer) {
    if (is_ack) {
      broker_.ack(consumer, std::move(tags), done);
    } else if (requeue) {
      broker_.nack(consumer, std::move(tags), done);
    } else {
      broker_.reject(consumer, std::move(tags), done);
    }
  }
}

}  // namespace carrier::stomp
