#include <algorithm>

#include <fmt/format.h>

#include "base/logging.hpp"
#include "stomp/session.hpp"
#include "stomp/subscribe_request.hpp"

namespace carrier::stomp {

void Session::handle_subscribe(codec::Frame& frame) {
  auto target = read_subscribe_target(frame, version_);
  if (auto* refused = std::get_if<Refused>(&target)) {
    fail(refused->why, refused->detail, &frame);
    return;
  }
  const std::string id = std::move(std::get<SubscribeTarget>(target).id);
  // A subscription a reply-to made is replaced by an explicit one below (1.0: same id).
  if (auto existing = subscriptions_.find(id); existing != subscriptions_.end() && !existing->second.automatic) {
    fail(Refusal::duplicate_subscription, fmt::format("subscription '{}' already exists", id), &frame);
    return;
  }
  if (subscriptions_.size() >= options_.max_subscriptions && !subscriptions_.contains(id)) {
    net::count_refusal(net::Refusal::subscriptions);
    thread_local std::chrono::steady_clock::time_point last_warning;
    if (const auto now = std::chrono::steady_clock::now(); now - last_warning > std::chrono::seconds(5)) {
      last_warning = now;  // one line per 5 s per shard: a flood must not flood the log
      logging::get("stomp")->warn("{} SUBSCRIBE refused: {} subscriptions held (stomp.max_subscriptions)",
                                  log_prefix(), subscriptions_.size());
    }
    fail(Refusal::too_many_subscriptions,
         fmt::format("a connection may hold at most {} subscriptions (stomp.max_subscriptions)", options_.max_subscriptions),
         &frame);
    return;
  }
  auto dest = resolve_destination(std::get<SubscribeTarget>(target).destination, true);
  if (!dest) {
    fail(refusal_for(dest.error().code, Operation::subscribe_destination), dest.error().detail, &frame);
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
  auto read = read_subscribe_options(
      frame, SubscribeContext{version_, dest->kind, id, client_id_, broker_.options().max_selector_bytes});
  if (auto* refused = std::get_if<Refused>(&read)) {
    fail(refused->why, refused->detail, &frame);
    return;
  }
  auto& options = std::get<SubscribeOptions>(read);
  const auto& spelling = std::get<SubscribeTarget>(target).destination;
  if (!permissions_.allows(auth::Right::read, *dest)) {
    fail(Refusal::access_denied, auth::access_denied_detail(user_, "subscribe to", spelling), &frame);
    return;
  }
  if (options.durable && !permissions_.allows(auth::Right::create, *dest)) {
    fail(Refusal::access_denied, auth::access_denied_detail(user_, "make a durable subscription to", spelling), &frame);
    return;
  }
  const core::AckMode mode = options.ack_mode;
  core::SubscribeRequest request{*dest, mode, options.prefetch, nullptr};
  request.selector = std::move(options.selector);
  request.selector_text = std::move(options.selector_text);
  request.subscription_name = std::move(options.subscription_name);
  request.durable = options.durable;
  request.owner = user_;
  const bool named = !request.subscription_name.empty();
  if (options.no_local) request.no_local_origin = this->id();
  std::string durable_name = std::move(options.durable_name);
  if (!consumer_) {
    consumer_ = std::make_shared<SubscriptionConsumer>(weak_from_this());
  }
  std::string receipt = frame.header("receipt") ? *frame.header("receipt") : std::string();
  request.consumer = consumer_;
  // A private topic subscription acked once written: its deliveries fall under the slow-consumer
  // policy when our output is over its bound (session.cpp).
  const bool droppable = mode == core::AckMode::auto_ack && dest->kind == model::DestinationKind::topic &&
                         request.subscription_name.empty();
  auto consumer = broker_.subscribe(std::move(request), session::bind_weak(this, [receipt](const auto& self, Status st) {
    if (self->is_closing()) return;
    if (!st) {
      self->fail(refusal_for(st.error().code, Operation::subscribe), st.error().to_string());
      return;
    }
    if (!receipt.empty()) self->send_receipt(receipt);
  }));
  if (!consumer) {
    // Another user's named subscription (their client-id reused): refused, the connection stays.
    const auto why = named && consumer.error().code == Errc::permission_denied
                         ? Refusal::access_denied
                         : refusal_for(consumer.error().code, Operation::subscribe_destination);
    fail(why, consumer.error().detail, &frame);
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
  auto read = read_unsubscribe(frame, version_);
  if (auto* refused = std::get_if<Refused>(&read)) {
    fail(refused->why, refused->detail, &frame);
    return;
  }
  const auto& request = std::get<UnsubscribeRequest>(read);
  auto it = request.id ? subscriptions_.find(*request.id) : subscriptions_.end();
  std::string durable_name;
  if (it == subscriptions_.end()) {
    if (!request.end_durable) {
      fail(Refusal::unknown_subscription, fmt::format("no subscription with id '{}'", *request.id), &frame);
      return;
    }
    // Removing a durable subscription nobody on this connection is attached to (ActiveMQ's
    // unsubscribe after a deactivating UNSUBSCRIBE, or a later connection): by the name the
    // client-id and subscription name give it.
    if (request.name && client_id_.empty()) {
      fail(Refusal::durable_subscription_without_client_id, "send client-id on CONNECT to name a durable subscription",
           &frame);
      return;
    }
    durable_name = durable_subscription_name(client_id_, request.name ? *request.name : *request.id);
    if (auto st = broker_.check_subscription_owner(durable_name, user_); !st) {
      fail(Refusal::access_denied, st.error().detail, &frame);
      return;
    }
    // Attached here under another id: that subscription ends with it.
    it = std::find_if(subscriptions_.begin(), subscriptions_.end(),
                      [&](const auto& entry) { return entry.second.durable_name == durable_name; });
  } else if (request.end_durable) {
    durable_name = it->second.durable_name;
  }
  std::string receipt = frame.header("receipt") ? *frame.header("receipt") : std::string();
  auto remove = session::bind_weak(this, [receipt, durable_name](const auto& self, Status) {
    if (durable_name.empty()) {
      if (!self->is_closing() && !receipt.empty()) self->send_receipt(receipt);
      return;
    }
    self->broker_.remove_subscription(durable_name, session::bind_weak(self.get(), [receipt, durable_name](const auto& s, Status st) {
      if (s->is_closing()) return;
      if (!st) {
        codec::Frame cause;
        if (!receipt.empty()) cause.headers.emplace_back("receipt", receipt);
        s->fail(refusal_for(st.error().code, Operation::remove_subscription),
                fmt::format("no durable subscription '{}'", durable_name), &cause);
        return;
      }
      if (!receipt.empty()) s->send_receipt(receipt);
    }));
  });
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
