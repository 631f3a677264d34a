#include "mqtt/client_registry.hpp"

#include <algorithm>

#include "base/logging.hpp"
#include "mqtt/codec/topic_syntax.hpp"
#include "mqtt/session.hpp"
#include "mqtt/session_record.hpp"
#include "mqtt/topic_map.hpp"
#include "mqtt/log.hpp"

namespace carrier::mqtt {

namespace {

constexpr std::uint32_t kNever = 0xFFFFFFFF;

}  // namespace

std::string subscription_prefix(std::string_view client_id) {
  std::string out = "mqtt:";
  for (char c : client_id) {
    if (c == '%') {
      out += "%25";
    } else if (c == ':') {
      out += "%3A";
    } else {
      out.push_back(c);
    }
  }
  out.push_back(':');
  return out;
}

std::string subscription_name(std::string_view client_id, std::string_view filter) {
  return subscription_prefix(client_id) + std::string(filter);
}

std::string shared_subscription_name(std::string_view group, std::string_view filter) {
  // The group holds no '/', '+' or '#'; escaping ':' keeps "g:x" + "f" apart from "g" + "x:f".
  std::string out = subscription_prefix(group);
  out.replace(0, 5, "mqtt-share:");
  return out + std::string(filter);
}

std::vector<std::string> shared_subscription_names(std::string_view shared_filter) {
  std::vector<std::string> out;
  auto shared = codec::parse_shared_filter(shared_filter);
  if (!shared) return out;
  out.push_back(shared_subscription_name(shared->group, shared->filter));
  if (to_core_filters(shared->filter).parent) out.push_back(out.front() + std::string(kParentSuffix));
  return out;
}

ClientRegistry::ClientRegistry(model::ShardId self, core::Executor& executor, core::Broker& broker)
    : self_(self), executor_(executor), broker_(broker) {}

void ClientRegistry::claim(const std::string& client_id, Claimant who, Reply reply, std::function<void()> refused) {
  Entry& e = entries_[client_id];
  e.waiting.push_back(Waiting{std::move(who), std::move(reply), std::move(refused)});
  if (e.taking_over) return;  // served when the take-over in progress is done
  serve(client_id, e);
}

bool ClientRegistry::belongs_to_another(const std::string& client_id, const Entry& e, const std::string& user) const {
  if (!e.owner.empty()) return e.owner != user;
  if (e.connection != 0) return false;  // held by an anonymous client: nobody's
  // After a restart the registry has not seen the user: its durable subscriptions say.
  for (const auto& named : broker_.named_subscriptions(subscription_prefix(client_id))) {
    if (!named.owner.empty()) return named.owner != user;
  }
  return false;
}

void ClientRegistry::serve(const std::string& client_id, Entry& e) {
  // Another user's id: refused before anything is taken over or handed out.
  while (!e.waiting.empty() && belongs_to_another(client_id, e, e.waiting.front().who.user)) {
    auto refused = std::move(e.waiting.front().refused);
    e.waiting.pop_front();
    log()->info("client '{}': claim by another user refused", client_id);
    if (refused) refused();
  }
  if (e.waiting.empty()) {
    forget_if_idle(client_id);
    return;
  }
  if (e.connection != 0) {
    take_over(client_id, e);
    return;
  }
  Waiting w = std::move(e.waiting.front());
  e.waiting.pop_front();
  ++e.generation;  // the away session's expiry and will timers no longer apply
  const bool existed = e.stored.has_value();
  std::vector<core::StateRecord> changes;
  if (e.will) {
    // A clean start ends the old session, which publishes its will now; a resumed one came back
    // within the will delay, so the will is dropped (MQTT 5 3.1.3.2.2).
    if (w.who.clean_start) publish(std::move(e.will));
    e.will = nullptr;
  }
  if (!e.will_record.is_nil()) {
    changes.push_back({std::string(kWillsQueue), nullptr, e.will_record});
    e.will_record = {};
  }
  std::optional<SessionState> state = std::move(e.stored);
  e.stored.reset();
  if (w.who.clean_start && state) {
    // The old session ends here: its half-done QoS 2 exchanges and its hold on shared
    // subscriptions with it.
    release_shared(client_id, &*state);
    drop_records(e, &*state, changes);
    state->inbound_qos2.clear();
    state->outbound_pubrel.clear();
  }
  e.connection = w.who.connection;
  e.owner = w.who.user;
  e.shard = w.who.shard;
  e.session = w.who.session;
  e.expiry_seconds = w.who.expiry_seconds;
  e.protocol_level = w.who.protocol_level;
  // A clean start begins with no subscriptions, and a session that is not persistent keeps
  // no records: a restart must not bring it back.
  if (w.who.clean_start || e.expiry_seconds == 0) drop_subscription_records(e, changes);
  if (e.expiry_seconds > 0) {
    save(client_id, e, 0, changes);
  } else if (!e.record.is_nil()) {
    changes.push_back({std::string(kSessionsQueue), nullptr, e.record});
    e.record = {};
  }
  write(std::move(changes));
  w.reply(existed, std::move(state));
  // Another claim queued behind this one takes over the connection just granted.
  if (!e.waiting.empty()) take_over(client_id, e);
}

void ClientRegistry::update(const std::string& client_id, std::uint64_t connection,
                            std::vector<SubscriptionChange> subscriptions, std::function<void()> done) {
  auto it = entries_.find(client_id);
  if (it == entries_.end() || it->second.connection != connection || it->second.expiry_seconds == 0) {
    if (done) done();
    return;
  }
  std::vector<core::StateRecord> changes;
  save_subscriptions(client_id, it->second, subscriptions, changes);
  write(std::move(changes), std::move(done));
}

void ClientRegistry::save_subscriptions(const std::string& client_id, Entry& e,
                                        const std::vector<SubscriptionChange>& subs,
                                        std::vector<core::StateRecord>& changes) {
  // A filter named twice (one SUBSCRIBE may): its last change only, so one batch never adds and
  // removes the same record.
  std::unordered_map<std::string_view, std::size_t> last;
  for (std::size_t i = 0; i < subs.size(); ++i) last[subs[i].filter] = i;
  for (std::size_t i = 0; i < subs.size(); ++i) {
    const auto& change = subs[i];
    if (last[change.filter] != i) continue;
    auto it = e.subscription_records.find(change.filter);
    model::MessageId previous;
    if (it != e.subscription_records.end()) previous = it->second;
    if (!change.options) {
      if (it == e.subscription_records.end()) continue;
      changes.push_back({std::string(kSubscriptionsQueue), nullptr, previous});
      e.subscription_records.erase(it);
      continue;
    }
    const model::MessageId id = broker_.next_message_id();
    // The new record and the ack of the one it replaces in one batch: a crash keeps one.
    changes.push_back({std::string(kSubscriptionsQueue),
                       encode_subscription(SubscriptionRecord{client_id, change.filter, *change.options}, id,
                                           broker_.now_ms()),
                       previous});
    e.subscription_records[change.filter] = id;
  }
}

void ClientRegistry::reconcile(const std::string& client_id, Entry& e,
                               const std::map<std::string, SubscriptionOptions>& subscriptions,
                               std::vector<core::StateRecord>& changes) {
  std::vector<SubscriptionChange> missing;
  for (const auto& [filter, options] : subscriptions) {
    if (!e.subscription_records.contains(filter)) missing.push_back({filter, options});
  }
  for (auto it = e.subscription_records.begin(); it != e.subscription_records.end();) {
    if (subscriptions.contains(it->first)) {
      ++it;
      continue;
    }
    changes.push_back({std::string(kSubscriptionsQueue), nullptr, it->second});
    it = e.subscription_records.erase(it);
  }
  save_subscriptions(client_id, e, missing, changes);
}

void ClientRegistry::drop_subscription_records(Entry& e, std::vector<core::StateRecord>& changes) {
  for (const auto& [filter, id] : e.subscription_records) {
    changes.push_back({std::string(kSubscriptionsQueue), nullptr, id});
  }
  e.subscription_records.clear();
}

void ClientRegistry::save(const std::string& client_id, Entry& e, std::int64_t away_since_ms,
                          std::vector<core::StateRecord>& changes) {
  SessionRecord r;
  r.client_id = client_id;
  r.protocol_level = e.protocol_level;
  r.expiry_seconds = e.expiry_seconds;
  r.away_since_ms = away_since_ms;
  const model::MessageId id = broker_.next_message_id();
  // The new record and the ack of the old one go in one batch: a crash keeps one of them.
  changes.push_back({std::string(kSessionsQueue), encode_session(r, id, broker_.now_ms()), e.record});
  e.record = id;
}

void ClientRegistry::drop_records(Entry& e, const SessionState* state, std::vector<core::StateRecord>& changes) {
  if (!e.record.is_nil()) changes.push_back({std::string(kSessionsQueue), nullptr, e.record});
  e.record = {};
  drop_subscription_records(e, changes);
  if (!e.will_record.is_nil()) changes.push_back({std::string(kWillsQueue), nullptr, e.will_record});
  e.will_record = {};
  if (state == nullptr) return;
  for (const auto* list : {&state->inbound_qos2, &state->outbound_pubrel}) {
    for (const auto& q : *list) {
      if (!q.record.is_nil()) changes.push_back({std::string(kQos2Queue), nullptr, q.record});
    }
  }
}

void ClientRegistry::write(std::vector<core::StateRecord> changes, std::function<void()> done) {
  if (changes.empty()) {
    if (done) done();
    return;
  }
  broker_.write_state(std::move(changes), [done = std::move(done)](Status st) {
    if (!st) log()->error("MQTT session state not stored: {}", st.error().to_string());
    if (done) done();
  });
}

void ClientRegistry::take_over(const std::string& client_id, Entry& e) {
  e.taking_over = true;
  const bool clean_start = e.waiting.front().who.clean_start;
  const std::uint64_t connection = e.connection;
  log()->debug("client '{}': taking over connection c{}", client_id, connection);
  executor_.post(e.shard, [this, client_id, connection, clean_start, weak = e.session]() {
    auto back = [this, client_id, connection](std::optional<Departure> d) {
      executor_.post(self_, [this, client_id, connection, d = std::move(d)]() mutable {
        released(client_id, connection, std::move(d));
      });
    };
    auto session = weak.lock();
    if (session) {
      // Also when closed: one still detaching hands its state over when done.
      session->take_over(clean_start, std::move(back));
    } else {
      back(std::nullopt);
    }
  });
}

void ClientRegistry::released(const std::string& client_id, std::uint64_t connection,
                              std::optional<Departure> departure) {
  auto it = entries_.find(client_id);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  e.taking_over = false;
  if (e.connection == connection) {
    if (departure) {
      go_away(client_id, e, std::move(*departure));
    } else {
      e.connection = 0;  // it had gone; its departure (if any) came first
    }
  }
  serve(client_id, e);
}

void ClientRegistry::depart(const std::string& client_id, Departure d) {
  auto it = entries_.find(client_id);
  // A connection that was taken over reports through released(); anything else is stale.
  if (it == entries_.end() || it->second.connection != d.connection) return;
  go_away(client_id, it->second, std::move(d));
  if (!it->second.taking_over) {
    serve(client_id, it->second);
    forget_if_idle(client_id);
  }
}

void ClientRegistry::go_away(const std::string& client_id, Entry& e, Departure d) {
  e.connection = 0;
  e.session.reset();
  ++e.generation;
  std::vector<core::StateRecord> changes;
  if (!d.persistent) {
    drop_records(e, &d.state, changes);
    write(std::move(changes));
    e.stored.reset();
    if (d.will) publish(std::move(d.will));
    e.will = nullptr;
    return;
  }
  const std::int64_t now = broker_.now_ms();
  e.expiry_seconds = d.expiry_seconds;
  e.protocol_level = d.protocol_level;
  reconcile(client_id, e, d.state.subscriptions, changes);
  save(client_id, e, now, changes);
  e.stored = std::move(d.state);
  e.will = std::move(d.will);
  if (e.will) {
    const std::uint64_t delay = std::min<std::uint64_t>(d.will_delay_seconds, d.expiry_seconds);
    e.will_due_ms = now + static_cast<std::int64_t>(delay * 1000);
    changes.push_back({std::string(kWillsQueue), encode_will(WillRecord{client_id, e.will_due_ms, e.will}), e.will_record});
    e.will_record = e.will->id;
  }
  write(std::move(changes), [client_id, will = e.will != nullptr]() {
    log()->debug("client '{}': away, session state stored{}", client_id, will ? ", will pending" : "");
  });
  std::optional<std::int64_t> deadline;
  if (d.expiry_seconds != kNever) deadline = now + std::int64_t(d.expiry_seconds) * 1000;
  arm_timers(client_id, e, deadline);
}

void ClientRegistry::arm_timers(const std::string& client_id, Entry& e, std::optional<std::int64_t> deadline_ms) {
  const std::uint64_t generation = e.generation;
  const std::int64_t now = broker_.now_ms();
  auto delay = [now](std::int64_t at) { return static_cast<std::uint64_t>(std::max<std::int64_t>(0, at - now)); };
  if (deadline_ms) {
    executor_.post_after(self_, delay(*deadline_ms), [this, client_id, generation] { expire(client_id, generation); });
  }
  if (e.will) {
    executor_.post_after(self_, delay(e.will_due_ms), [this, client_id, generation] { will_due(client_id, generation); });
  }
}

void ClientRegistry::expire(const std::string& client_id, std::uint64_t generation) {
  auto it = entries_.find(client_id);
  if (it == entries_.end() || it->second.generation != generation || it->second.connection != 0) return;
  log()->info("client '{}': session expired", client_id);
  Entry& e = it->second;
  std::vector<core::StateRecord> changes;
  drop_records(e, e.stored ? &*e.stored : nullptr, changes);
  write(std::move(changes));
  if (e.will) publish(std::move(e.will));
  e.will = nullptr;
  for (const auto& sub : broker_.named_subscriptions(subscription_prefix(client_id))) {
    broker_.remove_subscription(sub.name, nullptr);
  }
  release_shared(client_id, e.stored ? &*e.stored : nullptr);
  e.stored.reset();
  forget_if_idle(client_id);
}

void ClientRegistry::release_shared(const std::string& client_id, const SessionState* state) {
  if (state == nullptr) return;
  for (const auto& [filter, options] : state->subscriptions) {
    for (auto& name : shared_subscription_names(filter)) broker_.release_holder(std::move(name), client_id, nullptr);
  }
}

void ClientRegistry::will_due(const std::string& client_id, std::uint64_t generation) {
  auto it = entries_.find(client_id);
  if (it == entries_.end() || it->second.generation != generation || !it->second.will) return;
  Entry& e = it->second;
  log()->debug("client '{}': delayed will published", client_id);
  publish(std::move(e.will));
  e.will = nullptr;
  if (!e.will_record.is_nil()) write({{std::string(kWillsQueue), nullptr, e.will_record}});
  e.will_record = {};
  forget_if_idle(client_id);
}

// ---------------------------------------------------------------- start-up

void ClientRegistry::restore_session(SessionRecord record, model::MessageId id) {
  Entry& e = entries_[record.client_id];
  if (!e.record.is_nil()) superseded_.push_back({std::string(kSessionsQueue), nullptr, e.record});
  e.record = id;
  e.recovered = std::move(record);
}

void ClientRegistry::restore_subscription(SubscriptionRecord record, model::MessageId id) {
  Entry& e = entries_[record.client_id];
  // Store order: a later record for the same filter replaced the earlier one.
  auto [it, added] = e.subscription_records.try_emplace(record.filter, id);
  if (!added) {
    superseded_.push_back({std::string(kSubscriptionsQueue), nullptr, it->second});
    it->second = id;
  }
  e.recovered_subscriptions[record.filter] = record.options;
}

void ClientRegistry::restore_will(WillRecord record) {
  Entry& e = entries_[record.client_id];
  if (!e.will_record.is_nil()) superseded_.push_back({std::string(kWillsQueue), nullptr, e.will_record});
  e.will_record = record.will->id;
  e.will = std::move(record.will);
  e.will_due_ms = record.due_ms;
}

void ClientRegistry::restore_qos2(const Qos2Record& record, model::MessageId id) {
  Entry& e = entries_[record.client_id];
  (record.inbound ? e.recovered_in : e.recovered_out).push_back({record.packet_id, id});
}

void ClientRegistry::restore_bad(std::string queue, model::MessageId id) {
  // Left in the store: a later format may be readable by a later version.
  log()->warn("{} record {} does not decode (another format?): ignored, kept", queue, id.to_string());
}

void ClientRegistry::start() {
  if (!superseded_.empty()) {
    log()->warn("{} superseded MQTT state record(s): deleted", superseded_.size());
    write(std::move(superseded_));
    superseded_.clear();
  }
  const std::int64_t now = broker_.now_ms();
  std::vector<std::string> ids;
  for (const auto& [id, e] : entries_) ids.push_back(id);
  for (const auto& client_id : ids) {
    auto it = entries_.find(client_id);
    if (it == entries_.end()) continue;
    Entry& e = it->second;
    std::optional<std::int64_t> deadline;
    if (e.recovered) {
      SessionState state;
      const bool legacy = e.recovered->format == 1;
      state.subscriptions = std::move(e.recovered->subscriptions);
      for (auto& [filter, options] : e.recovered_subscriptions) state.subscriptions[filter] = options;
      e.recovered_subscriptions.clear();
      state.inbound_qos2 = std::move(e.recovered_in);
      state.outbound_pubrel = std::move(e.recovered_out);
      e.expiry_seconds = e.recovered->expiry_seconds;
      e.protocol_level = e.recovered->protocol_level;
      deadline = e.recovered->deadline_ms(now);
      const bool was_connected = e.recovered->away_since_ms == 0;
      const std::int64_t away_since = e.recovered->away_since_ms;
      e.stored = std::move(state);
      e.recovered.reset();
      if (deadline && *deadline <= now) {
        // It expired while the broker was down.
        log()->info("client '{}': session expired while the broker was down", client_id);
        expire(client_id, e.generation);
        continue;
      }
      if (was_connected || legacy) {
        // The client was connected when the broker went down: away from now on, so that repeated
        // restarts do not keep the session forever. A format 1 record (an earlier release's)
        // becomes format 2 and a record per subscription, in one batch.
        std::vector<core::StateRecord> changes;
        if (legacy) reconcile(client_id, e, e.stored->subscriptions, changes);
        save(client_id, e, was_connected ? now : away_since, changes);
        write(std::move(changes));
      }
    } else {
      // QoS 2 and subscription records without a session: left by a session that ended (or a
      // crash between their batches); nothing to resume.
      std::vector<core::StateRecord> changes;
      drop_subscription_records(e, changes);
      e.recovered_subscriptions.clear();
      for (const auto* list : {&e.recovered_in, &e.recovered_out}) {
        for (const auto& q : *list) changes.push_back({std::string(kQos2Queue), nullptr, q.record});
      }
      write(std::move(changes));
      e.recovered_in.clear();
      e.recovered_out.clear();
    }
    if (e.will && deadline && *deadline < e.will_due_ms) e.will_due_ms = *deadline;
    arm_timers(client_id, e, deadline);
    forget_if_idle(client_id);
  }
}

void ClientRegistry::publish(model::MessagePtr will) {
  if (!will) return;
  broker_.send({std::move(will)}, nullptr);
}

void ClientRegistry::forget_if_idle(const std::string& client_id) {
  auto it = entries_.find(client_id);
  if (it == entries_.end()) return;
  const Entry& e = it->second;
  if (e.connection == 0 && !e.taking_over && e.waiting.empty() && !e.stored && !e.will) entries_.erase(it);
}

}  // namespace carrier::mqtt
