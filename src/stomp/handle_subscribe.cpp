#include <charconv>

#include <fmt/format.h>

#include "core/selector/selector.hpp"
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
  auto dest = resolve_destination(*dest_text, true);
  if (!dest) {
    fail(dest.error().code == Errc::invalid_argument ? "invalid destination" : dest.error().detail,
         dest.error().detail, &frame);
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
  core::SubscribeRequest request{*dest, mode, prefetch, nullptr};
  if (const auto* text = frame.header("selector"); text != nullptr && !text->empty()) {
    core::selector::Limits limits;
    limits.max_length = broker_.options().max_selector_bytes;
    auto parsed = core::selector::parse(*text, limits);
    if (!parsed) {
      fail("invalid selector", parsed.error().detail, &frame);
      return;
    }
    request.selector = std::move(*parsed);
    request.selector_text = *text;
  }
  std::string durable_name;
  if (dest->kind == core::DestinationKind::topic) {
    // ActiveMQ: client-id on CONNECT + activemq.subscriptionName. RabbitMQ: durable:true (and
    // auto-delete:false) with the subscription id as the name. Shared (JMS 2.0): shared:true
    // with subscription-name, not tied to a client.
    const auto* amq_name = frame.header("activemq.subscriptionName");
    const auto* sub_name = frame.header("subscription-name");
    const auto* durable = frame.header("durable");
    const auto* shared = frame.header("shared");
    const bool is_shared = shared != nullptr && *shared == "true";
    const bool is_durable =
        (durable != nullptr && *durable == "true") || (!is_shared && (amq_name != nullptr || sub_name != nullptr));
    std::string name = amq_name ? *amq_name : sub_name ? *sub_name : std::string();
    if (is_shared) {
      if (name.empty()) {
        fail("shared subscription without a name", "shared:true needs subscription-name", &frame);
        return;
      }
      request.subscription_name = "stomp-shared:" + name;
      request.durable = is_durable;
    } else if (is_durable) {
      if (name.empty()) name = id;
      if ((amq_name != nullptr || sub_name != nullptr) && client_id_.empty()) {
        fail("durable subscription without client-id", "send client-id on CONNECT to name a durable subscription",
             &frame);
        return;
      }
      request.subscription_name = "stomp:" + client_id_ + ":" + name;
      request.durable = true;
      durable_name = request.subscription_name;
    }
    const auto* no_local = frame.header("activemq.noLocal");
    if (no_local != nullptr && *no_local == "true") request.no_local_origin = this->id();
  }
  if (!consumer_) {
    consumer_ = std::make_shared<SubscriptionConsumer>(std::static_pointer_cast<Session>(shared_from_this()));
  }
  std::string receipt = frame.header("receipt") ? *frame.header("receipt") : std::string();
  auto weak = std::weak_ptr<Session>(std::static_pointer_cast<Session>(shared_from_this()));
  request.consumer = consumer_;
  auto consumer = broker_.subscribe(std::move(request), [weak, receipt](Status st) {
    auto self = weak.lock();
    if (!self || self->is_closing()) return;
    if (!st) {
      self->fail("subscription failed", st.error().to_string());
      return;
    }
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
  sub.durable_name = std::move(durable_name);
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
  // UNSUBSCRIBE with the durable header (RabbitMQ) or the subscription name (ActiveMQ) ends a
  // durable subscription; a plain one only detaches from it.
  const auto* durable = frame.header("durable");
  const bool remove = !it->second.durable_name.empty() &&
                      ((durable != nullptr && *durable == "true") || frame.header("activemq.subscriptionName") != nullptr ||
                       frame.header("subscription-name") != nullptr);
  const std::string durable_name = remove ? it->second.durable_name : std::string();
  by_consumer_.erase(consumer);
  subscriptions_.erase(it);
  std::string receipt = frame.header("receipt") ? *frame.header("receipt") : std::string();
  auto weak = std::weak_ptr<Session>(std::static_pointer_cast<Session>(shared_from_this()));
  broker_.unsubscribe(consumer, [weak, receipt, durable_name](Status) {
    auto self = weak.lock();
    if (!self) return;
    if (!durable_name.empty()) {
      self->broker_.remove_subscription(durable_name, [weak, receipt](Status) {
        auto s = weak.lock();
        if (s && !s->is_closing() && !receipt.empty()) s->send_receipt(receipt);
      });
      return;
    }
    if (!self->is_closing() && !receipt.empty()) self->send_receipt(receipt);
  });
}

}  // namespace carrier::stomp
