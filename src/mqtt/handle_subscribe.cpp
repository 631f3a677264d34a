// SUBSCRIBE and UNSUBSCRIBE: MQTT filters as core subscriptions (private, named durable for a
// persistent session, named shared for `$share/`), SUBACK / UNSUBACK once every shard has them.

#include <fmt/format.h>

#include "base/logging.hpp"
#include "mqtt/codec/topic_syntax.hpp"
#include "mqtt/reason_codes.hpp"
#include "mqtt/session.hpp"
#include "mqtt/topic_map.hpp"
#include "mqtt/log.hpp"

namespace carrier::mqtt {

namespace {

// Counts completions; the last one runs `done`.
struct FanIn {
  std::size_t remaining = 0;
  std::function<void()> done;
  void step() {
    if (--remaining == 0 && done) done();
  }
};

}  // namespace

Status Session::attach(Subscription& sub, bool want_retained, std::function<void(Status)> done) {
  std::string_view inner = sub.filter;
  std::string group;
  const auto shared = codec::parse_shared_filter(sub.filter);
  if (shared) {
    inner = shared->filter;
    group = std::string(shared->group);
  }
  sub.wildcard_first = starts_with_wildcard(inner);
  const CoreFilters filters = to_core_filters(inner);
  const core::AckMode mode = sub.options.qos == 0 ? core::AckMode::auto_ack : core::AckMode::client_individual;
  const std::uint32_t prefetch = sub.options.qos == 0 ? 0 : outbound_window_;

  struct Part {
    std::string core_filter;
    std::string name;
  };
  std::vector<Part> parts;
  std::string name;
  if (sub.named) name = shared ? shared_subscription_name(group, inner) : subscription_name(client_id_, sub.filter);
  parts.push_back({filters.main, name});
  if (filters.parent) parts.push_back({*filters.parent, sub.named ? name + std::string(kParentSuffix) : std::string()});

  auto fan = std::make_shared<FanIn>();
  auto first_error = std::make_shared<Status>();
  fan->remaining = parts.size();
  fan->done = [done = std::move(done), first_error]() {
    if (done) done(*first_error);
  };
  for (const auto& part : parts) {
    core::SubscribeRequest req;
    req.destination = model::Destination{model::DestinationKind::topic, part.core_filter};
    req.ack_mode = mode;
    req.prefetch = prefetch;
    req.consumer = consumer_;
    req.subscription_name = part.name;
    req.durable = sub.named && sub.durable;
    if (!shared) req.owner = user_;  // the client's own: another user cannot attach by its id
    if (shared && session_expiry_ > 0) {
      // A persistent member keeps the group, with its messages, while it is away.
      req.durable = true;
      req.holder = client_id_;
    }
    req.no_local_origin = sub.options.no_local ? id() : 0;
    // Shared subscriptions get no retained messages (MQTT 5 4.8.2).
    req.want_retained = want_retained && !shared;
    auto id = broker_.subscribe(std::move(req), [fan, first_error](Status st) {
      if (!st && *first_error) *first_error = std::move(st);
      fan->step();
    });
    if (!id) {
      // Undo the parts already made.
      for (auto c : sub.consumers) {
        by_consumer_.erase(c);
        broker_.unsubscribe(c, nullptr);
      }
      sub.consumers.clear();
      return unexpected(id.error());
    }
    sub.consumers.push_back(*id);
    by_consumer_[*id] = sub.filter;
  }
  return ok();
}

bool Session::may_subscribe(std::string_view mqtt_filter) {
  const CoreFilters filters = to_core_filters(mqtt_filter);
  if (!permissions_.allows(auth::Right::read, auth::AclKind::topic, filters.main)) return false;
  return !filters.parent || permissions_.allows(auth::Right::read, auth::AclKind::topic, *filters.parent);
}

void Session::release(Subscription& sub, bool remove_named, std::function<void()> done) {
  auto fan = std::make_shared<FanIn>();
  fan->remaining = sub.consumers.size() + 1;
  fan->done = std::move(done);
  for (auto c : sub.consumers) {
    by_consumer_.erase(c);
    broker_.unsubscribe(c, [fan](Status) { fan->step(); });
  }
  sub.consumers.clear();
  if (remove_named && sub.named && codec::is_shared_filter(sub.filter)) {
    // This session no longer holds the group (the last holder's going ends it).
    auto names = shared_subscription_names(sub.filter);
    fan->remaining += names.size();
    for (auto& name : names) broker_.release_holder(std::move(name), client_id_, [fan](Status) { fan->step(); });
  } else if (remove_named && sub.named && sub.durable) {
    const std::string name = subscription_name(client_id_, sub.filter);
    const bool has_parent = to_core_filters(sub.filter).parent.has_value();
    fan->remaining += has_parent ? 2 : 1;
    // Posted after the unsubscribes from this shard, so the consumers are gone first.
    broker_.remove_subscription(name, [fan](Status) { fan->step(); });
    if (has_parent) broker_.remove_subscription(name + std::string(kParentSuffix), [fan](Status) { fan->step(); });
  }
  fan->step();
}

void Session::handle_subscribe(codec::Subscribe& s) {
  const bool v5 = version_ == codec::Version::v5;
  const std::uint32_t identifier =
      s.properties.subscription_identifiers.empty() ? 0 : s.properties.subscription_identifiers.front();
  auto reasons = std::make_shared<std::vector<codec::ReasonCode>>(s.topics.size(), codec::ReasonCode::success);
  auto fan = std::make_shared<FanIn>();
  fan->remaining = s.topics.size() + 2;  // + the session record
  const std::uint16_t packet_id = s.packet_id;
  const bool persistent = session_expiry_ > 0;
  std::vector<std::string> made;  // filters whose SUBACK is pending (deliveries held till then)
  std::vector<SubscriptionChange> changes;  // what the session record learns
  for (std::size_t i = 0; i < s.topics.size(); ++i) {
    const auto& t = s.topics[i];
    const bool shared = codec::is_shared_filter(t.filter);
    SubscriptionOptions options{t.qos, t.no_local, t.retain_as_published, identifier, t.retain_handling};
    auto existing = subscriptions_.find(t.filter);
    const bool existed = existing != subscriptions_.end();
    // The limits: refused in the SUBACK, the connection goes on (0x80 is "failure" on 3.x).
    const auto shared_parts = shared ? codec::parse_shared_filter(t.filter) : std::nullopt;
    const std::string_view inner = shared_parts ? shared_parts->filter : std::string_view(t.filter);
    if (exceeds_levels(inner, options_.max_topic_levels) ||
        (!existed && subscriptions_.size() >= options_.max_subscriptions_per_session)) {
      const bool deep = exceeds_levels(inner, options_.max_topic_levels);
      if (!deep) {
        net::count_refusal(net::Refusal::subscriptions);
        thread_local std::chrono::steady_clock::time_point last_warning;
        if (const auto now = std::chrono::steady_clock::now(); now - last_warning > std::chrono::seconds(5)) {
          last_warning = now;  // one line per 5 s per shard: a flood must not flood the log
          log()->warn("{} SUBSCRIBE refused: {} subscriptions held (mqtt.max_subscriptions_per_session)",
                      log_prefix(), subscriptions_.size());
        }
      }
      log()->debug("{} SUBSCRIBE '{}' refused: {}", log_prefix(), t.filter.substr(0, 200),
                   deep ? fmt::format("more than {} levels", options_.max_topic_levels)
                        : fmt::format("session holds {} subscriptions already", subscriptions_.size()));
      (*reasons)[i] = !v5   ? codec::ReasonCode::unspecified_error
                      : deep ? codec::ReasonCode::topic_filter_invalid
                             : codec::ReasonCode::quota_exceeded;
      fan->step();
      continue;
    }
    if (!may_subscribe(inner)) {
      // The ACL: refused in the SUBACK, as Mosquitto does; retained messages are not read either.
      log()->debug("{} SUBSCRIBE '{}' refused: access denied", log_prefix(), t.filter.substr(0, 200));
      (*reasons)[i] = v5 ? codec::ReasonCode::not_authorized : codec::ReasonCode::unspecified_error;
      fan->step();
      continue;
    }
    const bool want_retained = t.retain_handling == 0 || (t.retain_handling == 1 && !existed);
    (*reasons)[i] = static_cast<codec::ReasonCode>(t.qos);
    if (existed) {
      Subscription& sub = existing->second;
      const bool same_mode = (sub.options.qos == 0) == (t.qos == 0);
      if (same_mode && !want_retained) {
        // Only the options change; the core side stays as it is.
        sub.options = options;
        changes.push_back({t.filter, options});
        fan->step();
        continue;
      }
      // Replaced: detached and made again (with the retained messages, when asked).
      release(sub, false, nullptr);
      subscriptions_.erase(existing);
    }
    Subscription sub;
    sub.filter = t.filter;
    sub.options = options;
    sub.named = shared || persistent;
    sub.durable = !shared && persistent;
    auto& slot = subscriptions_[t.filter];
    slot = std::move(sub);
    auto st = attach(slot, want_retained, [fan](Status) { fan->step(); });
    if (!st) {
      log()->debug("{} SUBSCRIBE '{}' refused: {}", log_prefix(), t.filter, st.error().to_string());
      subscriptions_.erase(t.filter);
      if (existed) changes.push_back({t.filter, std::nullopt});
      (*reasons)[i] = v5 ? reason_for(st.error().code, Operation::subscribe) : codec::ReasonCode::unspecified_error;
      fan->step();
      continue;
    }
    made.push_back(t.filter);
    changes.push_back({t.filter, options});
  }
  // The SUBACK grants what the session record holds: sent once that is durable.
  save_subscriptions(std::move(changes), [fan]() { fan->step(); });
  fan->done = session::bind_weak(this, [reasons, packet_id, made = std::move(made)](const auto& self) {
    if (self->is_closing()) return;
    self->send(codec::Suback{.packet_id = packet_id, .properties = {}, .reasons = std::move(*reasons)});
    // Deliveries (retained messages first among them) may go now that the SUBACK is out.
    for (const auto& f : made) {
      auto it = self->subscriptions_.find(f);
      if (it != self->subscriptions_.end()) it->second.ready = true;
    }
    self->pump();
    self->flush();
  });
  fan->step();
}

void Session::handle_unsubscribe(const codec::Unsubscribe& u) {
  const bool v5 = version_ == codec::Version::v5;
  const bool persistent = session_expiry_ > 0;
  auto reasons = std::make_shared<std::vector<codec::ReasonCode>>();
  auto fan = std::make_shared<FanIn>();
  fan->remaining = u.filters.size() + 2;  // + the session record
  std::vector<SubscriptionChange> changes;
  for (const auto& filter : u.filters) {
    auto it = subscriptions_.find(filter);
    if (it == subscriptions_.end()) {
      reasons->push_back(codec::ReasonCode::no_subscription_existed);
      fan->step();
      continue;
    }
    reasons->push_back(codec::ReasonCode::success);
    // A persistent session's durable subscription is deleted with its waiting messages; a
    // shared one only loses this member.
    release(it->second, persistent, [fan]() { fan->step(); });
    subscriptions_.erase(it);
    changes.push_back({filter, std::nullopt});
  }
  save_subscriptions(std::move(changes), [fan]() { fan->step(); });
  const std::uint16_t packet_id = u.packet_id;
  fan->done = session::bind_weak(this, [reasons, packet_id, v5](const auto& self) {
    if (self->is_closing()) return;
    codec::Unsuback ack{.packet_id = packet_id};
    if (v5) ack.reasons = std::move(*reasons);
    self->send(ack);
    self->pump();
    self->flush();
  });
  fan->step();
}

}  // namespace carrier::mqtt
