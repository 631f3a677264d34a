#include <charconv>

#include <fmt/format.h>

#include "stomp/destination_name.hpp"
#include "stomp/session.hpp"

namespace carrier::stomp {

void Session::handle_subscribe(codec::Frame& frame) {
  const auto* dest_text = frame.header("destination");
  if (dest_text == nullptr) {
    fail("SUBSCRIBE frame has no destination header", {}, &frame);
    return;
  }
  const auto* id_header = frame.header("id");
  if (id_header == nullptr && version_ != codec::Version::v1_0) {
    fail("SUBSCRIBE frame has no id header", {}, &frame);
    return;
  }
  // STOMP 1.0 made the id optional; the destination then names the subscription.
  const std::string id = id_header != nullptr ? *id_header : *dest_text;
  if (subscriptions_.contains(id)) {
    fail("duplicate subscription id", fmt::format("subscription '{}' already exists", id), &frame);
    return;
  }
  auto dest = parse_destination(*dest_text);
  if (!dest) {
    fail("invalid destination", fmt::format("invalid destination '{}'", *dest_text), &frame);
    return;
  }
  core::AckMode mode = core::AckMode::auto_ack;
  if (const auto* ack = frame.header("ack")) {
    if (*ack == "client") {
      mode = core::AckMode::client;
    } else if (*ack == "client-individual" && version_ != codec::Version::v1_0) {
      mode = core::AckMode::client_individual;
    } else if (*ack != "auto") {
      fail("invalid ack mode", fmt::format("ack must be auto, client or client-individual, got '{}'", *ack), &frame);
      return;
    }
  }
  std::uint32_t prefetch = 0;
  for (const char* name : {"activemq.prefetchSize", "prefetch-count"}) {
    const auto* p = frame.header(name);
    if (p == nullptr) continue;
    auto r = std::from_chars(p->data(), p->data() + p->size(), prefetch);
    if (r.ec != std::errc() || r.ptr != p->data() + p->size()) {
      fail("invalid prefetch", fmt::format("{} must be a non-negative integer, got '{}'", name, *p), &frame);
      return;
    }
    break;
  }
  if (!consumer_) {
    consumer_ = std::make_shared<SubscriptionConsumer>(std::static_pointer_cast<Session>(shared_from_this()));
  }
  std::string receipt = frame.header("receipt") ? *frame.header("receipt") : std::string();
  auto weak = std::weak_ptr<Session>(std::static_pointer_cast<Session>(shared_from_this()));
  auto consumer = broker_.subscribe(core::SubscribeRequest{*dest, mode, prefetch, consumer_},
                                    [weak, receipt](Status st) {
                                      auto self = weak.lock();
                                      if (!self || self->is_closing()) return;
                                      if (!receipt.empty()) self->send_receipt(receipt);
                                    });
  if (!consumer) {
    fail(consumer.error().detail, {}, &frame);
    return;
  }
  Subscription sub;
  sub.id = id;
  sub.number = next_subscription_number_++;
  sub.consumer = *consumer;
  sub.ack_mode = mode;
  by_consumer_.emplace(sub.consumer, id);
  subscriptions_.emplace(id, std::move(sub));
}

void Session::handle_unsubscribe(codec::Frame& frame) {
  const auto* id = frame.header("id");
  if (id == nullptr && version_ == codec::Version::v1_0) id = frame.header("destination");
  if (id == nullptr) {
    fail("UNSUBSCRIBE frame has no id header", {}, &frame);
    return;
  }
  auto it = subscriptions_.find(*id);
  if (it == subscriptions_.end()) {
    fail("unknown subscription", fmt::format("no subscription with id '{}'", *id), &frame);
    return;
  }
  // Deliveries still on their way to this subscription are dropped on arrival; the queue
  // takes them (and everything unacked) back when the consumer is removed.
  const auto consumer = it->second.consumer;
  by_consumer_.erase(consumer);
  subscriptions_.erase(it);
  std::string receipt = frame.header("receipt") ? *frame.header("receipt") : std::string();
  auto weak = std::weak_ptr<Session>(std::static_pointer_cast<Session>(shared_from_this()));
  broker_.unsubscribe(consumer, [weak, receipt](Status) {
    auto self = weak.lock();
    if (!self || self->is_closing()) return;
    if (!receipt.empty()) self->send_receipt(receipt);
  });
}

}  // namespace carrier::stomp
