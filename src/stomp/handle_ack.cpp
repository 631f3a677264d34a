#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "stomp/session.hpp"

namespace carrier::stomp {

Result<std::vector<core::DeliveryRef>> Session::resolve_ack(const codec::Frame& frame, Subscription*& sub,
                                                            std::vector<std::uint64_t>& numbers) {
  sub = nullptr;
  const bool is_ack_frame = frame.command == codec::Command::ack;
  std::uint64_t tag = 0;
  std::string named;
  if (version_ == codec::Version::v1_2) {
    const auto* id = frame.header("id");
    if (id == nullptr) {
      return unexpected(Errc::invalid_argument, is_ack_frame ? "ACK frame has no id header" : "NACK frame has no id header");
    }
    named = *id;
    // Our ack tokens are "<subscription number>.<tag>".
    auto dot = id->find('.');
    std::uint64_t number = 0;
    bool parsed = dot != std::string::npos;
    if (parsed) {
      auto r1 = std::from_chars(id->data(), id->data() + dot, number);
      auto r2 = std::from_chars(id->data() + dot + 1, id->data() + id->size(), tag);
      parsed = r1.ec == std::errc() && r1.ptr == id->data() + dot && r2.ec == std::errc() &&
               r2.ptr == id->data() + id->size();
    }
    if (parsed) {
      for (auto& [sid, s] : subscriptions_) {
        if (s.number == number) sub = &s;
      }
    }
    if (sub == nullptr || !sub->unacked.contains(tag)) {
      return unexpected(Errc::not_found, fmt::format("no unacknowledged message with ack id '{}'", named));
    }
  } else {
    const auto* message_id = frame.header("message-id");
    if (message_id == nullptr) {
      return unexpected(Errc::invalid_argument, is_ack_frame ? "ACK frame has no message-id header"
                                                             : "NACK frame has no message-id header");
    }
    named = *message_id;
    const auto* sub_id = frame.header("subscription");
    auto search = [&](Subscription& s) {
      for (const auto& [t, p] : s.unacked) {
        if (p.message->id.to_string() == *message_id) {
          sub = &s;
          tag = t;
          return true;
        }
      }
      return false;
    };
    if (sub_id != nullptr) {
      if (auto* s = find_subscription(*sub_id)) search(*s);
    } else {
      for (auto& [sid, s] : subscriptions_) {
        if (search(s)) break;
      }
    }
    if (sub == nullptr) {
      return unexpected(Errc::not_found, fmt::format("no unacknowledged message with message-id '{}'", named));
    }
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
  if (!is_ack && version_ == codec::Version::v1_0) {
    fail("unknown command", "NACK does not exist in STOMP 1.0", &frame);
    return;
  }
  Subscription* sub = nullptr;
  std::vector<std::uint64_t> numbers;
  auto refs = resolve_ack(frame, sub, numbers);
  if (!refs) {
    // A missing header is a malformed frame, not an unknown message: say which one.
    if (refs.error().code == Errc::invalid_argument) {
      fail(refs.error().detail, {}, &frame);
      return;
    }
    fail(is_ack ? "ACK for an unknown message" : "NACK for an unknown message", refs.error().detail, &frame);
    return;
  }
  // RabbitMQ: NACK with requeue:false dead-letters (or drops) instead of offering it again.
  const auto* requeue_header = is_ack ? nullptr : frame.header("requeue");
  const bool requeue = requeue_header == nullptr || *requeue_header != "false";
  if (!requeue) {
    for (auto& r : *refs) r.requeue = false;
  }
  if (const auto* tx = frame.header("transaction")) {
    auto it = transactions_.find(*tx);
    if (it == transactions_.end()) {
      fail("unknown transaction", fmt::format("no transaction '{}' has begun", *tx), &frame);
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
      self->fail("acknowledgement not stored", st.error().to_string());
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
