#include "core/broker.hpp"

#include <algorithm>
#include <chrono>
#include <map>

#include "core/deadline.hpp"
#include "model/queue_key.hpp"

namespace carrier::core {

using model::Destination;
using model::DestinationKind;
using model::Message;
using model::MessagePtr;
using model::owner_shard;
using model::ShardId;

namespace {

std::int64_t system_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Completions of several parts (store, destinations' verdicts); the last reports the first
// error. Lives on the home shard only.
struct FanIn {
  std::size_t remaining;
  Status first_error;
  Completion done;

  void part(Status st) {
    if (!st && first_error) first_error = std::move(st);
    if (--remaining == 0 && done) done(std::move(first_error));
  }
};

}  // namespace

Broker::Broker(ShardId self, Executor& executor, store::Store& store, Options options, Clock clock,
               MemoryGauge* memory)
    : self_(self),
      executor_(executor),
      store_(store),
      options_(std::move(options)),
      clock_(clock ? std::move(clock) : Clock(system_now_ms)),
      memory_(memory),
      ids_(static_cast<std::uint64_t>(system_now_ms()) * 1000003ULL + self.value()),
      random_(static_cast<std::uint64_t>(system_now_ms()) ^ (self.value() * 0x9e3779b97f4a7c15ULL)),
      configured_queues_(options_.queues.begin(), options_.queues.end()) {
  for (std::size_t i = 0; i < options_.policies.size(); ++i) {
    std::string_view match = options_.policies[i].match;
    Destination d{DestinationKind::queue, std::string(match)};
    bool any = true;
    if (match.substr(0, 6) == "queue:") {
      d.name = std::string(match.substr(6));
      any = false;
    } else if (match.substr(0, 6) == "topic:") {
      d = Destination{DestinationKind::topic, std::string(match.substr(6))};
      any = false;
    }
    policy_patterns_.emplace_back(std::move(d), i);
    policy_any_kind_.push_back(any);
  }
}

void Broker::set_peers(std::vector<Broker*> peers) { peers_ = std::move(peers); }

const DestinationPolicy& Broker::policy_for(const Destination& d) const {
  for (std::size_t i = 0; i < policy_patterns_.size(); ++i) {
    const auto& [pattern, index] = policy_patterns_[i];
    const bool kind_ok = policy_any_kind_[i] || pattern.kind == d.kind ||
                         (pattern.kind == DestinationKind::queue && d.kind == DestinationKind::temp_queue);
    if (kind_ok && DestinationTree::filter_matches(pattern.name, d.name)) return options_.policies[index];
  }
  return default_policy_;
}

void Broker::complete_on(ShardId shard, Completion done, Status status) {
  if (!done) return;
  if (executor_.current() == shard) {
    done(std::move(status));
    return;
  }
  executor_.post(shard, [done = std::move(done), status = std::move(status)]() mutable { done(std::move(status)); });
}

void Broker::post_to(ShardId shard, std::function<void(Broker&)> fn) {
  Broker* peer = peers_[shard.value()];
  executor_.post(shard, [peer, fn = std::move(fn)]() { fn(*peer); });
}

Status Broker::check_destination(const Destination& d, bool for_subscribe) const {
  if (d.name.empty()) return unexpected(Errc::invalid_argument, "empty destination name");
  if (d.name.front() == '$' && d.kind != DestinationKind::topic) {
    return unexpected(Errc::invalid_argument, "destination names starting with '$' are reserved: '" + d.name + "'");
  }
  if (d.kind == DestinationKind::topic) {
    if (for_subscribe) {
      if (!DestinationTree::is_valid_filter(d.name)) {
        return unexpected(Errc::invalid_argument, "invalid topic filter '" + d.name + "'");
      }
    } else if (DestinationTree::has_wildcards(d.name)) {
      return unexpected(Errc::invalid_argument, "wildcards are only allowed when subscribing: '" + d.name + "'");
    }
    return ok();
  }
  if (DestinationTree::has_wildcards(d.name)) {
    // A wildcard queue subscription watches every matching queue (ActiveMQ); nothing else may.
    if (!for_subscribe || d.kind != DestinationKind::queue) {
      return unexpected(Errc::invalid_argument, d.kind == DestinationKind::queue
                                                    ? "wildcards are only allowed when subscribing: '" + d.name + "'"
                                                    : "wildcards are not supported on temporary queues: '" + d.name + "'");
    }
    if (!DestinationTree::is_valid_filter(d.name)) {
      return unexpected(Errc::invalid_argument, "invalid queue filter '" + d.name + "'");
    }
    return ok();
  }
  if (!options_.auto_create && d.kind == DestinationKind::queue && !configured_queues_.contains(d.name)) {
    return unexpected(Errc::not_found, "queue '" + d.name + "' does not exist and auto_create is off");
  }
  return ok();
}

// ---------------------------------------------------------------- producer side

void Broker::plan(const std::vector<MessagePtr>& messages, std::vector<Routed>& to_queues,
                  std::vector<std::pair<TopicSubscriber, MessagePtr>>& to_private, std::vector<MessagePtr>& retained,
                  store::Batch& batch, std::vector<bool>* unmatched) {
  std::vector<TopicSubscriber> matched;
  if (unmatched != nullptr) unmatched->assign(messages.size(), false);
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const auto& m = messages[i];
    if (m->destination.kind == DestinationKind::topic) {
      if (m->retain) retained.push_back(m);
      matched.clear();
      topic_index_.match(m->destination.name, matched);
      bool taken = false;
      for (auto& s : matched) {
        if (!selected(s, *m)) continue;
        taken = true;
        if (s.queue_key.empty()) {
          to_private.emplace_back(std::move(s), m);
        } else {
          if (m->persistent && s.durable) batch.push_back(store::Record::added(s.queue_key, m));
          to_queues.push_back(Routed{std::move(s.queue_key), m});
        }
      }
      if (unmatched != nullptr) (*unmatched)[i] = !taken;
    } else {
      auto key = m->destination.key();
      if (m->persistent && m->destination.kind == DestinationKind::queue) batch.push_back(store::Record::added(key, m));
      to_queues.push_back(Routed{std::move(key), m});
    }
  }
}

bool Broker::needs_verdict(const std::vector<Routed>& to_queues) const {
  // A destination that may refuse (full with overflow = reject, or a temporary queue whose
  // connection is gone) must answer before the producer is told the message is accepted.
  for (const auto& r : to_queues) {
    if (r.message->destination.kind == DestinationKind::temp_queue) return true;
    const auto& p = policy_for(r.message->destination);
    // `block` refuses nothing on a queue; elsewhere it is `reject`.
    const bool refuses = p.overflow == OverflowPolicy::reject ||
                         (p.overflow == OverflowPolicy::block && r.message->destination.kind != DestinationKind::queue);
    if ((p.max_messages != 0 || p.max_bytes != 0) && refuses) return true;
  }
  return false;
}

void Broker::open_temp_queue(Destination destination) {
  auto key = destination.key();
  const auto owner = owner_shard(key, peers_.size());
  // Inline on the owning shard: a send routed right after must find it (route_planned enqueues
  // inline there too).
  if (owner == self_) {
    (void)owned(key);
    return;
  }
  post_to(owner, [key = std::move(key)](Broker& b) { (void)b.owned(key); });
}

void Broker::send(std::vector<MessagePtr> messages, Completion done) { send(std::move(messages), {}, std::move(done)); }

void Broker::send(std::vector<MessagePtr> messages, std::vector<StateRecord> state, Completion done) {
  send_messages(std::move(messages), std::move(state), std::move(done), nullptr);
}

void Broker::send(std::vector<MessagePtr> messages, std::vector<StateRecord> state, Completion done,
                  std::vector<bool>& unmatched) {
  send_messages(std::move(messages), std::move(state), std::move(done), &unmatched);
}

std::vector<MessagePtr> Broker::admit(std::vector<MessagePtr> messages, std::vector<MessagePtr>& later,
                                      store::Batch& batch, std::vector<std::size_t>* ready_at) {
  const auto now = now_ms();
  std::vector<MessagePtr> ready;
  ready.reserve(messages.size());
  for (std::size_t i = 0; i < messages.size(); ++i) {
    auto& m = messages[i];
    const auto& policy = policy_for(m->destination);
    if (policy.ttl_ms != 0 && m->expires_ms == 0) {
      auto copy = std::make_shared<Message>(*m);
      // The timestamp may be the client's: saturate, and keep a result below 1 meaning "expired".
      const std::int64_t base = m->timestamp_ms != 0 ? m->timestamp_ms : now;
      copy->expires_ms = std::max<std::int64_t>(1, deadline_after(base, policy.ttl_ms));
      m = std::move(copy);
    }
    if (m->destination.kind == DestinationKind::topic && m->deliver_at_ms > now) {
      // Topic subscribers are those present when it is due: it is matched then. Until then a
      // persistent one waits in the store, so its receipt holds across a restart.
      if (m->persistent) batch.push_back(store::Record::added(scheduled_topic_key(*m), m));
      later.push_back(std::move(m));
      continue;
    }
    if (ready_at != nullptr) ready_at->push_back(i);
    ready.push_back(std::move(m));
  }
  return ready;
}

std::string Broker::scheduled_topic_key(const Message& m) {
  // One reserved queue per topic: the copies of a composite send share a message id.
  return std::string(kScheduledTopicPrefix) + m.destination.name;
}

void Broker::schedule_topic(MessagePtr m) {
  account_hold(*m);
  const auto due = m->deliver_at_ms;  // read before the lambda takes `m`
  at(due, [this, m = std::move(m)]() { publish_due(m); });
}

void Broker::publish_due(const MessagePtr& m) {
  account_release(*m);
  std::vector<Routed> to_queues;
  std::vector<std::pair<TopicSubscriber, MessagePtr>> to_private;
  std::vector<MessagePtr> retained;
  store::Batch batch;
  plan({m}, to_queues, to_private, retained, batch);
  // Its durable subscriptions' copies replace the scheduled record in one batch.
  if (m->persistent) batch.push_back(store::Record::acked(scheduled_topic_key(*m), m->id));
  if (!batch.empty()) store_.append(std::move(batch), [](Status) {});
  for (auto& r : retained) retain(std::move(r));
  route_planned(std::move(to_queues), std::move(to_private), nullptr);
}

void Broker::send_messages(std::vector<MessagePtr> messages, std::vector<StateRecord> state, Completion done,
                           std::vector<bool>* unmatched) {
  const std::size_t total = messages.size();
  std::vector<MessagePtr> later;
  store::Batch batch;
  std::vector<std::size_t> ready_at;  // with `unmatched`: where each ready message sat in `messages`
  std::vector<MessagePtr> ready = admit(std::move(messages), later, batch, unmatched != nullptr ? &ready_at : nullptr);
  for (auto& m : later) schedule_topic(std::move(m));

  std::vector<Routed> to_queues;
  std::vector<std::pair<TopicSubscriber, MessagePtr>> to_private;
  std::vector<MessagePtr> retained;
  plan(ready, to_queues, to_private, retained, batch, unmatched);
  if (unmatched != nullptr && ready.size() != total) {
    // Spread back over the messages as given; the scheduled ones count as matched.
    std::vector<bool> spread(total, false);
    for (std::size_t j = 0; j < ready.size(); ++j) spread[ready_at[j]] = (*unmatched)[j];
    *unmatched = std::move(spread);
  }
  add_state(batch, std::move(state));

  const bool need_verdict = needs_verdict(to_queues);
  const std::size_t parts = (batch.empty() ? 0 : 1) + (need_verdict ? 1 : 0);
  if (parts == 0) {
    for (auto& m : retained) retain(std::move(m));
    route_planned(std::move(to_queues), std::move(to_private), nullptr);
    complete_on(self_, std::move(done), ok());
    return;
  }
  auto fan = std::make_shared<FanIn>(FanIn{parts, ok(), std::move(done)});
  auto part = [this, fan](Status st) mutable {
    complete_on(self_, [fan](Status s) { fan->part(std::move(s)); }, std::move(st));
  };
  // Append before routing: the store's order then puts every message record ahead of any ack
  // record for it, whichever shard writes the ack.
  if (!batch.empty()) store_.append(std::move(batch), part);
  for (auto& m : retained) retain(std::move(m));
  route_planned(std::move(to_queues), std::move(to_private), need_verdict ? Completion(part) : nullptr);
}

void Broker::route_planned(std::vector<Routed> to_queues, std::vector<std::pair<TopicSubscriber, MessagePtr>> to_private,
                           Completion verdict) {
  const std::size_t n = peers_.size();
  std::vector<std::vector<Routed>> by_owner(n);
  for (auto& r : to_queues) by_owner[owner_shard(r.key, n).value()].push_back(std::move(r));
  std::size_t owners = 0;
  for (const auto& v : by_owner) owners += v.empty() ? 0 : 1;
  std::shared_ptr<FanIn> fan;
  if (verdict) {
    if (owners == 0) {
      verdict(ok());
    } else {
      fan = std::make_shared<FanIn>(FanIn{owners, ok(), std::move(verdict)});
    }
  }
  const ShardId home = self_;
  for (std::size_t s = 0; s < n; ++s) {
    if (by_owner[s].empty()) continue;
    Completion part;
    if (fan) {
      part = [this, fan, home](Status st) {
        complete_on(home, [fan](Status x) { fan->part(std::move(x)); }, std::move(st));
      };
    }
    if (s == self_.value()) {
      owner_enqueue(std::move(by_owner[s]), std::move(part));
    } else {
      post_to(ShardId(static_cast<std::uint32_t>(s)),
              [batch = std::move(by_owner[s]), part = std::move(part)](Broker& b) mutable {
                b.owner_enqueue(std::move(batch), std::move(part));
              });
    }
  }
  std::vector<std::vector<std::pair<ConsumerId, MessagePtr>>> by_home(n);
  for (auto& [s, m] : to_private) by_home[s.home.value()].emplace_back(s.id, std::move(m));
  for (std::size_t s = 0; s < n; ++s) {
    if (by_home[s].empty()) continue;
    if (s == self_.value()) {
      topic_enqueue(std::move(by_home[s]));
    } else {
      post_to(ShardId(static_cast<std::uint32_t>(s)),
              [batch = std::move(by_home[s])](Broker& b) mutable { b.topic_enqueue(std::move(batch)); });
    }
  }
}

void Broker::commit(Transaction tx, Completion done) {
  std::vector<Routed> to_queues;
  std::vector<std::pair<TopicSubscriber, MessagePtr>> to_private;
  std::vector<MessagePtr> retained;
  std::vector<MessagePtr> later;
  store::Batch batch;
  plan(admit(std::move(tx.sends), later, batch), to_queues, to_private, retained, batch);
  for (const auto& a : tx.acks) {
    auto it = subscriptions_.find(a.consumer);
    if (it == subscriptions_.end() || it->second.topic_private || !a.message || !a.message->persistent) continue;
    if (it->second.queue_key.rfind("queue:", 0) != 0 && !named_.contains(it->second.subscription_name)) continue;
    const bool stored = it->second.queue_key.rfind("queue:", 0) == 0 ||
                        (named_.contains(it->second.subscription_name) && named_.at(it->second.subscription_name).def.durable);
    if (stored) batch.push_back(store::Record::acked(it->second.queue_key, a.message->id));
  }
  auto apply = [this, tx = std::move(tx), to_queues = std::move(to_queues), to_private = std::move(to_private),
                retained = std::move(retained), later = std::move(later), done = std::move(done)](Status status) mutable {
    if (!status) {
      done(std::move(status));
      return;
    }
    for (auto& m : later) schedule_topic(std::move(m));
    for (auto& m : retained) retain(std::move(m));
    // A destination that refuses now (full, or a temporary queue gone) makes the COMMIT fail:
    // the producer hears of it instead of the message vanishing.
    const bool wait_verdict = needs_verdict(to_queues);
    Completion verdict;
    if (wait_verdict) verdict = std::move(done);
    route_planned(std::move(to_queues), std::move(to_private), std::move(verdict));
    // Group settlements per consumer; the ack records are already in the store.
    std::map<ConsumerId, std::vector<std::uint64_t>> acks;
    for (auto& a : tx.acks) acks[a.consumer].push_back(a.tag);
    for (auto& [id, tags] : acks) {
      auto it = subscriptions_.find(id);
      if (it == subscriptions_.end()) continue;
      if (it->second.topic_private) {
        ack(id, std::move(tags), nullptr);
      } else {
        post_to(it->second.owner, [key = it->second.queue_key, id, tags = std::move(tags)](Broker& b) mutable {
          b.owner_settle(std::move(key), id, std::move(tags), true, false, {}, nullptr);
        });
      }
    }
    std::map<std::pair<ConsumerId, bool>, std::vector<std::uint64_t>> nacks;
    for (auto& a : tx.nacks) nacks[{a.consumer, a.requeue}].push_back(a.tag);
    for (auto& [target, tags] : nacks) {
      if (target.second) {
        nack(target.first, std::move(tags), nullptr);
      } else {
        reject(target.first, std::move(tags), nullptr);
      }
    }
    if (done) done(ok());
  };
  if (batch.empty()) {
    apply(ok());
    return;
  }
  store_.append(std::move(batch), [this, apply = std::move(apply)](Status status) mutable {
    executor_.post(self_, [apply = std::move(apply), status = std::move(status)]() mutable { apply(std::move(status)); });
  });
}

// ---------------------------------------------------------------- consumer side

Result<ConsumerId> Broker::subscribe(SubscribeRequest request, Completion done) {
  if (auto st = check_destination(request.destination, true); !st) return unexpected(st.error());
  const ConsumerId id((static_cast<std::uint64_t>(self_.value()) << 48) | next_consumer_++);
  ConsumerRef ref{id, self_, std::move(request.consumer), request.ack_mode, request.prefetch, request.selector};
  if (ref.prefetch == 0) {
    ref.prefetch = request.ack_mode == AckMode::auto_ack ? options_.prefetch_auto : options_.prefetch_client;
  }
  if (request.destination.kind == DestinationKind::topic && !request.subscription_name.empty()) {
    return subscribe_named(std::move(request), std::move(ref), std::move(done));
  }
  if (request.destination.kind == DestinationKind::queue && DestinationTree::has_wildcards(request.destination.name)) {
    return subscribe_watcher(std::move(request), std::move(ref), std::move(done));
  }
  SubscriptionInfo info;
  info.destination = request.destination;
  if (request.destination.kind == DestinationKind::topic) {
    info.topic_private = true;
    // The selector is applied when the message is matched, before it reaches this queue.
    ref.selector = nullptr;
    auto queue = std::make_unique<Queue>("private:" + request.destination.name);
    queue->add_consumer(std::move(ref));
    topic_subscriptions_.emplace(id, TopicSubscription{request.destination.name, std::move(queue)});
    account(kQueueOverheadBytes);
    subscriptions_.emplace(id, std::move(info));
    TopicSubscriber sub{id, self_, {}, false, request.selector, request.no_local_origin};
    auto finish = std::move(done);
    if (request.want_retained) {
      finish = [this, filter = request.destination.name, sub, done = std::move(finish)](Status st) mutable {
        send_retained(filter, sub);
        if (done) done(std::move(st));
      };
    }
    broadcast([filter = request.destination.name, sub](Broker& b) { b.index_add(filter, sub); }, std::move(finish));
    return id;
  }
  info.queue_key = request.destination.key();
  info.owner = owner_shard(info.queue_key, peers_.size());
  const auto owner = info.owner;
  auto key = info.queue_key;
  subscriptions_.emplace(id, std::move(info));
  auto reply = [this, done = std::move(done)](Status st) mutable { complete_on(self_, std::move(done), std::move(st)); };
  // Posted even when this shard owns the queue: the caller learns the consumer id before the
  // first delivery can reach it.
  post_to(owner, [key = std::move(key), ref = std::move(ref), reply = std::move(reply)](Broker& b) mutable {
    b.owner_add_consumer(std::move(key), std::move(ref), std::move(reply));
  });
  return id;
}

void Broker::unsubscribe(ConsumerId id, Completion done) {
  auto it = subscriptions_.find(id);
  if (it == subscriptions_.end()) {
    complete_on(self_, std::move(done), unexpected(Errc::not_found, "no such subscription"));
    return;
  }
  SubscriptionInfo info = std::move(it->second);
  subscriptions_.erase(it);
  if (info.watcher) {
    unsubscribe_watcher(id, std::move(info), std::move(done));
    return;
  }
  if (info.topic_private) {
    auto sub = topic_subscriptions_.find(id);
    std::string filter = sub->second.filter;
    relieve_backlog(sub->second, true);  // a mark left behind would pause its topics for good
    for (auto& e : sub->second.queue->take_all()) account_release(*e.message);
    topic_subscriptions_.erase(sub);
    account(-kQueueOverheadBytes);
    broadcast([filter, id](Broker& b) { b.index_remove(filter, id); }, std::move(done));
    return;
  }
  auto reply = [this, done = std::move(done)](Status st) mutable { complete_on(self_, std::move(done), std::move(st)); };
  post_to(info.owner, [key = std::move(info.queue_key), id, reply = std::move(reply)](Broker& b) mutable {
    b.owner_remove_consumer(std::move(key), id, std::move(reply));
  });
}

void Broker::ack(ConsumerId id, std::vector<std::uint64_t> tags, Completion done) {
  settle(id, std::move(tags), true, {}, std::move(done));
}

void Broker::ack(ConsumerId id, std::vector<std::uint64_t> tags, std::vector<StateRecord> state, Completion done) {
  settle(id, std::move(tags), true, std::move(state), std::move(done));
}

void Broker::nack(ConsumerId id, std::vector<std::uint64_t> tags, Completion done) {
  settle(id, std::move(tags), false, {}, std::move(done));
}

void Broker::reject(ConsumerId id, std::vector<std::uint64_t> tags, Completion done) {
  settle(id, std::move(tags), false, {}, std::move(done), false);
}

void Broker::add_state(store::Batch& batch, std::vector<StateRecord> state) {
  for (auto& s : state) {
    const std::string key = Destination{DestinationKind::queue, s.queue}.key();
    if (s.add) batch.push_back(store::Record::added(key, std::move(s.add)));
    if (!s.remove.is_nil()) batch.push_back(store::Record::acked(key, s.remove));
  }
}

void Broker::write_state(std::vector<StateRecord> state, Completion done) {
  store::Batch batch;
  add_state(batch, std::move(state));
  if (batch.empty()) {
    complete_on(self_, std::move(done), ok());
    return;
  }
  store_.append(std::move(batch), [this, done = std::move(done)](Status st) mutable {
    complete_on(self_, std::move(done), std::move(st));
  });
}

void Broker::settle(ConsumerId id, std::vector<std::uint64_t> tags, bool is_ack, std::vector<StateRecord> state,
                    Completion done, bool requeue) {
  auto it = subscriptions_.find(id);
  if (it == subscriptions_.end()) {
    if (!state.empty()) {
      write_state(std::move(state), std::move(done));
      return;
    }
    complete_on(self_, std::move(done), unexpected(Errc::not_found, "no such subscription"));
    return;
  }
  if (it->second.topic_private) {
    auto& sub = topic_subscriptions_.at(id);
    if (is_ack) {
      auto outcome = sub.queue->ack(id, tags);
      for (const auto& m : outcome.removed) account_release(*m);
      dispatch(sub.queue->key(), *sub.queue, false);
    } else {
      auto outcome = sub.queue->nack(id, tags);
      if (requeue) {
        handle_returned(sub.queue->key(), *sub.queue, false, std::move(outcome.returned));
      } else {
        handle_rejected(sub.queue->key(), *sub.queue, false, std::move(outcome.returned));
      }
    }
    relieve_backlog(sub);
    if (!state.empty()) {
      write_state(std::move(state), std::move(done));
      return;
    }
    complete_on(self_, std::move(done), ok());
    return;
  }
  auto reply = [this, done = std::move(done)](Status st) mutable { complete_on(self_, std::move(done), std::move(st)); };
  const auto owner = it->second.owner;
  // Acks of persistent messages are recorded; nacks only move messages in memory.
  if (owner == self_) {
    owner_settle(it->second.queue_key, id, std::move(tags), is_ack, is_ack, std::move(state), std::move(reply),
                 requeue);
    return;
  }
  post_to(owner, [key = it->second.queue_key, id, tags = std::move(tags), is_ack, state = std::move(state),
                  reply = std::move(reply), requeue](Broker& b) mutable {
    b.owner_settle(std::move(key), id, std::move(tags), is_ack, is_ack, std::move(state), std::move(reply), requeue);
  });
}

void Broker::delete_queue(Destination destination, Completion done) {
  auto key = destination.key();
  auto reply = [this, done = std::move(done)](Status st) mutable { complete_on(self_, std::move(done), std::move(st)); };
  // The owner first: the lambda below takes `key` and argument order is unspecified.
  const auto owner = owner_shard(key, peers_.size());
  post_to(owner, [key = std::move(key), reply = std::move(reply)](Broker& b) mutable {
    b.owner_delete(std::move(key), std::move(reply));
  });
}

BrokerStats Broker::stats() const {
  BrokerStats s;
  s.queues = queues_.size();
  for (const auto& [k, q] : queues_) {
    s.messages_ready += q.queue->depth();
    s.messages_unacked += q.queue->unacked();
  }
  s.topic_subscriptions = topic_subscriptions_.size();
  s.named_subscriptions = named_.size();
  s.retained = retained_.size();
  s.scheduled = schedule_.size();
  s.backlog_dropped = backlog_dropped_;
  return s;
}

}  // namespace carrier::core
