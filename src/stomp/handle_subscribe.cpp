#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "selector/selector.hpp"
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
  // A subscription a reply-to made is replaced by an explicit one below (1.0: same id).
  if (auto existing = subscriptions_.find(id); existing != subscriptions_.end() && !existing->second.automatic) {
    fail("duplicate subscription id", fmt::format("subscription '{}' already exists", id), &frame);
    return;
  }
  if (subscriptions_.size() >= options_.max_subscriptions && !subscriptions_.contains(id)) {
    fail("too many subscriptions",
         fmt::format("a connection may hold at most {} subscriptions (stomp.max_subscriptions)", options_.max_subscriptions),
         &frame);
    return;
  }
  auto dest = resolve_destination(*dest_text, true);
  if (!dest) {
    fail(dest.error().code == Errc::invalid_argument ? "invalid destination" : dest.error().detail,
         dest.error().detail, &frame);
    return;
  }
  if (dest->kind == model::DestinationKind::temp_queue) {
    // An explicit SUBSCRIBE (ActiveMQ's way) replaces the one a reply-to made: one consumer.
    auto automatic = std::find_if(subscriptions_.begin(), subscriptions_.end(), [&](const auto& entry) {
      return entry.second.automatic && entry.second.temp_queue == dest->name;
    });
    if (automatic != subscriptions_.end()) {
      broker_.unsubscribe(automatic->second.consumer, nullptr);
      by_consumer_.erase(automatic->second.consumer);
      subscriptions_.erase(automatic);
    }
  }
  core::AckMode mode = core::AckMode::auto_ack;
  if (const auto* ack = frame.header("ack")) {
    if (*ack == "client") {
      mode = core::AckMode::client;
    } else if (*ack == "client-individual" && version_ != codec::Version::v1_0) {
      mode = core::AckMode::client_individual;
    } else if (*ack == "client-individual") {
      fail("invalid ack mode", "ack:client-individual does not exist in STOMP 1.0: use auto or client", &frame);
      return;
    } else if (*ack != "auto") {
      fail("invalid ack mode",
           version_ == codec::Version::v1_0
               ? fmt::format("ack must be auto or client in STOMP 1.0, got '{}'", *ack)
               : fmt::format("ack must be auto, client or client-individual, got '{}'", *ack),
           &frame);
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
    selector::Limits limits;
    limits.max_length = broker_.options().max_selector_bytes;
    auto parsed = selector::parse(*text, limits);
    if (!parsed) {
      fail("invalid selector", parsed.error().detail, &frame);
      return;
    }
    request.selector = std::move(*parsed);
    request.selector_text = *text;
  }
  std::string durable_name;
  if (dest->kind == model::DestinationKind::topic) {
    // ActiveMQ: client-id on CONNECT + activemq.subscriptionName. RabbitMQ: durable:true (and
    // auto-delete:false) with the subscription id as the name. Shared (JMS 2.0): shared:true
    // with subscription-name, not tied to a client.
    const auto* amq_name = frame.header("activemq.subscriptionName");
    const auto* sub_name = frame.header("subscription-name");
    const auto* durable = frame.header("durable");
    const auto* persistent = frame.header("persistent");  // RabbitMQ's older spelling of durable
    const auto* shared = frame.header("shared");
    const bool is_shared = shared != nullptr && *shared == "true";
    const bool is_durable = (durable != nullptr && *durable == "true") ||
                            (persistent != nullptr && *persistent == "true") ||
                            (!is_shared && (amq_name != nullptr || sub_name != nullptr));
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
  // A private topic subscription acked once written: its deliveries fall under the slow-consumer
  // policy when our output is over its bound (session.cpp).
  const bool droppable = mode == core::AckMode::auto_ack && dest->kind == model::DestinationKind::topic &&
                         request.subscription_name.empty();
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
  if (dest->kind == model::DestinationKind::temp_queue) sub.temp_queue = dest->name;
  sub.droppable = droppable;
  by_consumer_.emplace(sub.consumer, id);
  subscriptions_.emplace(id, std::move(sub));
}

void Session::handle_unsubscribe(codec::Frame& frame) {
  const auto* id = frame.header("id");
  if (id == nullptr && version_ == codec::Version::v1_0) id = frame.header("destination");
  // UNSUBSCRIBE with durable:true or persistent:true (RabbitMQ) or the subscription name
  // (ActiveMQ) ends a durable subscription; without them it only detaches from it.
  const auto* durable = frame.header("durable");
  const auto* persistent = frame.header("persistent");
  const auto* amq_name = frame.header("activemq.subscriptionName");
  const auto* sub_name = frame.header("subscription-name");
  const auto* named = amq_name != nullptr ? amq_name : sub_name;
  const bool end_durable = (durable != nullptr && *durable == "true") ||
                           (persistent != nullptr && *persistent == "true") || named != nullptr;
  if (id == nullptr && named == nullptr) {
    fail("UNSUBSCRIBE frame has no id header", {}, &frame);
    return;
  }
  auto it = id != nullptr ? subscriptions_.find(*id) : subscriptions_.end();
  std::string durable_name;
  if (it == subscriptions_.end()) {
    if (!end_durable) {
      fail("unknown subscription", fmt::format("no subscription with id '{}'", *id), &frame);
      return;
    }
    // Removing a durable subscription nobody on this connection is attached to (ActiveMQ's
    // unsubscribe after a deactivating UNSUBSCRIBE, or a later connection): by the name the
    // client-id and subscription name give it.
    if (named != nullptr && client_id_.empty()) {
      fail("durable subscription without client-id", "send client-id on CONNECT to name a durable subscription",
           &frame);
      return;
    }
    durable_name = "stomp:" + client_id_ + ":" + (named != nullptr ? *named : *id);
    // Attached here under another id: that subscription ends with it.
    it = std::find_if(subscriptions_.begin(), subscriptions_.end(),
                      [&](const auto& entry) { return entry.second.durable_name == durable_name; });
  } else if (end_durable) {
    durable_name = it->second.durable_name;
  }
  std::string receipt = frame.header("receipt") ? *frame.header("receipt") : std::string();
  auto weak = std::weak_ptr<Session>(std::static_pointer_cast<Session>(shared_from_this()));
  auto remove = [weak, receipt, durable_name](Status) {
    auto self = weak.lock();
    if (!self) return;
    if (durable_name.empty()) {
      if (!self->is_closing() && !receipt.empty()) self->send_receipt(receipt);
      return;
    }
    self->broker_.remove_subscription(durable_name, [weak, receipt, durable_name](Status st) {
      auto s = weak.lock();
      if (!s || s->is_closing()) return;
      if (!st) {
        codec::Frame cause;
        if (!receipt.empty()) cause.headers.emplace_back("receipt", receipt);
        s->fail("unknown subscription", fmt::format("no durable subscription '{}'", durable_name), &cause);
        return;
      }
      if (!receipt.empty()) s->send_receipt(receipt);
    });
  };
  if (it == subscriptions_.end()) {
    remove(ok());
    return;
  }
  // Deliveries still on their way to this subscription are dropped on arrival; the queue
  // takes them (and everything unacked) back when the consumer is removed.
  const auto consumer = it->second.consumer;
  by_consumer_.erase(consumer);
  for (auto child : it->second.children) by_consumer_.erase(child);
  subscriptions_.erase(it);
  broker_.unsubscribe(consumer, std::move(remove));
}

}  // namespace carrier::stomp
