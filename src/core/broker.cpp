// The Broker front: what protocol sessions call, handed to the parts (broker.hpp).
#include "core/broker.hpp"

#include <map>

#include <fmt/format.h>

#include "model/queue_key.hpp"

namespace carrier::core {

using model::Destination;
using model::DestinationKind;
using model::MessagePtr;
using model::ShardId;

Broker::Broker(ShardId self, Executor& executor, store::Store& store, Options options, Clock clock,
               MemoryGauge* memory)
    : shard_(self, executor, store, std::move(options), std::move(clock), memory),
      queues_(shard_, redelivery_, watchers_, named_),
      redelivery_(shard_, queues_, topics_, router_),
      router_(shard_, queues_, topics_),
      topics_(shard_, subscriptions_, queues_, redelivery_, router_, retained_),
      retained_(shard_),
      named_(shard_, subscriptions_, queues_, topics_, retained_),
      shared_(shard_, named_, queues_),
      watchers_(shard_, subscriptions_, queues_, redelivery_),
      leases_(shard_, *this) {}

void Broker::start() {
  if (shard_.options.sweep_interval_ms == 0) return;
  shard_.at(now_ms() + shard_.options.sweep_interval_ms, [this]() { sweep(); });
}

void Broker::sweep() {
  const auto now = now_ms();
  store::Batch batch;
  std::vector<Routed> moved;
  queues_.sweep(now, batch, moved);
  topics_.sweep(now, batch);
  named_.sweep_idle(now);
  redelivery_.finish_dead_letters(std::move(batch), std::move(moved));
  shard_.at(now + shard_.options.sweep_interval_ms, [this]() { sweep(); });
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
  if (!shard_.options.auto_create && d.kind == DestinationKind::queue && !shard_.configured_queues.contains(d.name)) {
    return unexpected(Errc::not_found, "queue '" + d.name + "' does not exist and auto_create is off");
  }
  return ok();
}

// ---------------------------------------------------------------- producer side

void Broker::open_temp_queue(Destination destination) {
  auto key = destination.key();
  const auto owner = shard_.owner_of(key);
  // Inline on the owning shard: a send routed right after must find it (Router::route enqueues
  // inline there too).
  if (owner == shard_.self) {
    (void)queues_.open(key);
    return;
  }
  shard_.post_to(owner, [key = std::move(key)](Broker& b) { (void)b.owned_queues().open(key); });
}

void Broker::send(std::vector<MessagePtr> messages, Completion done) { send(std::move(messages), {}, std::move(done)); }

void Broker::send(std::vector<MessagePtr> messages, std::vector<StateRecord> state, Completion done) {
  send_messages(std::move(messages), std::move(state), std::move(done), nullptr);
}

void Broker::send(std::vector<MessagePtr> messages, std::vector<StateRecord> state, Completion done,
                  std::vector<bool>& unmatched) {
  send_messages(std::move(messages), std::move(state), std::move(done), &unmatched);
}

void Broker::send_messages(std::vector<MessagePtr> messages, std::vector<StateRecord> state, Completion done,
                           std::vector<bool>* unmatched) {
  const std::size_t total = messages.size();
  shard_.counters.published += total;
  std::vector<MessagePtr> later;
  store::Batch batch;
  std::vector<std::size_t> ready_at;  // with `unmatched`: where each ready message sat in `messages`
  std::vector<MessagePtr> ready =
      router_.admit(std::move(messages), later, batch, unmatched != nullptr ? &ready_at : nullptr);
  for (auto& m : later) topics_.schedule(std::move(m));

  std::vector<Routed> to_queues;
  Router::ToPrivate to_private;
  std::vector<MessagePtr> retained;
  router_.plan(ready, to_queues, to_private, retained, batch, unmatched);
  if (unmatched != nullptr && ready.size() != total) {
    // Spread back over the messages as given; the scheduled ones count as matched.
    std::vector<bool> spread(total, false);
    for (std::size_t j = 0; j < ready.size(); ++j) spread[ready_at[j]] = (*unmatched)[j];
    *unmatched = std::move(spread);
  }
  add_state(batch, std::move(state));

  const bool need_verdict = router_.needs_verdict(to_queues);
  const std::size_t parts = (batch.empty() ? 0 : 1) + (need_verdict ? 1 : 0);
  if (parts == 0) {
    for (auto& m : retained) retained_.retain(std::move(m));
    router_.route(std::move(to_queues), std::move(to_private), nullptr);
    shard_.complete_on(shard_.self, std::move(done), ok());
    return;
  }
  auto fan = std::make_shared<FanIn>(FanIn{parts, ok(), std::move(done)});
  auto part = [this, fan](Status st) mutable {
    shard_.complete_on(shard_.self, [fan](Status s) { fan->part(std::move(s)); }, std::move(st));
  };
  // Append before routing: the store's order then puts every message record ahead of any ack
  // record for it, whichever shard writes the ack.
  if (!batch.empty()) queues_.append_locating(std::move(batch), part);
  for (auto& m : retained) retained_.retain(std::move(m));
  router_.route(std::move(to_queues), std::move(to_private), need_verdict ? Completion(part) : nullptr);
}

void Broker::commit(Transaction tx, Completion done) {
  std::vector<Routed> to_queues;
  Router::ToPrivate to_private;
  std::vector<MessagePtr> retained;
  std::vector<MessagePtr> later;
  store::Batch batch;
  router_.plan(router_.admit(std::move(tx.sends), later, batch), to_queues, to_private, retained, batch);
  for (const auto& a : tx.acks) {
    auto it = subscriptions_.find(a.consumer);
    if (it == subscriptions_.end() || it->second.topic_private || !a.message || !a.message->stored()) continue;
    const NamedEntry* named = named_.find(it->second.subscription_name);
    const bool queue = it->second.queue_key.starts_with(model::QueueKey::prefix(model::QueueKind::queue));
    if (!queue && named == nullptr) continue;
    const bool stored = queue || (named != nullptr && named->def.durable);
    if (!stored) continue;
    // The ack names the copy it removes when this shard owns the queue (its location map is
    // here). Another owner's would take a hop before the append, and then this batch could
    // land behind a later send of the same producer: that ack names none (the journal then
    // finds the copy by queue and id).
    const auto ref = it->second.owner == shard_.self ? queues_.stored_ref(it->second.queue_key, *a.message)
                                                     : store::StoredRef{};
    batch.push_back(store::Record::acked(it->second.queue_key, a.message->id, ref));
  }
  auto apply = [this, tx = std::move(tx), to_queues = std::move(to_queues), to_private = std::move(to_private),
                retained = std::move(retained), later = std::move(later), done = std::move(done)](Status status) mutable {
    if (!status) {
      done(std::move(status));
      return;
    }
    for (auto& m : later) topics_.schedule(std::move(m));
    for (auto& m : retained) retained_.retain(std::move(m));
    // A destination that refuses now (full, or a temporary queue gone) makes the COMMIT fail:
    // the producer hears of it instead of the message vanishing.
    const bool wait_verdict = router_.needs_verdict(to_queues);
    Completion verdict;
    if (wait_verdict) verdict = std::move(done);
    router_.route(std::move(to_queues), std::move(to_private), std::move(verdict));
    // Group settlements per consumer; the ack records are already in the store.
    std::map<ConsumerId, std::vector<std::uint64_t>> acks;
    for (auto& a : tx.acks) acks[a.consumer].push_back(a.tag);
    for (auto& [id, tags] : acks) {
      auto it = subscriptions_.find(id);
      if (it == subscriptions_.end()) continue;
      if (it->second.topic_private) {
        ack(id, std::move(tags), nullptr);
      } else {
        shard_.post_to(it->second.owner, [key = it->second.queue_key, id, tags = std::move(tags)](Broker& b) mutable {
          b.owned_queues().settle(std::move(key), id, std::move(tags), true, false, {}, nullptr);
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
  queues_.append_locating(std::move(batch), [this, apply = std::move(apply)](Status status) mutable {
    shard_.executor.post(shard_.self, [apply = std::move(apply), status = std::move(status)]() mutable { apply(std::move(status)); });
  });
}

// ---------------------------------------------------------------- consumer side

Result<ConsumerId> Broker::subscribe(SubscribeRequest request, Completion done) {
  if (demand_observer_ == nullptr || request.bridge) return subscribe_consumer(std::move(request), std::move(done));
  model::Destination destination = request.destination;
  auto id = subscribe_consumer(std::move(request), std::move(done));
  if (id) {
    demand_observer_->consumer_added(destination);
    demand_consumers_.emplace(*id, std::move(destination));
  }
  return id;
}

Result<ConsumerId> Broker::subscribe_consumer(SubscribeRequest request, Completion done) {
  if (auto st = check_destination(request.destination, true); !st) return unexpected(st.error());
  if (!request.subscription_name.empty()) {
    if (auto st = named_.check_owner(request.subscription_name, request.owner); !st) return unexpected(st.error());
  }
  const ConsumerId id = shard_.next_consumer_id();
  ConsumerRef ref{id, shard_.self, std::move(request.consumer), request.ack_mode, request.prefetch, request.selector};
  if (ref.prefetch == 0) {
    ref.prefetch = request.ack_mode == AckMode::auto_ack ? shard_.options.prefetch_auto : shard_.options.prefetch_client;
  }
  if (request.destination.kind == DestinationKind::topic && !request.subscription_name.empty()) {
    // A new named subscription is a new destination ([limits] max_destinations); every shard
    // holds the replica, so this shard knows whether it is new.
    if (shard_.destinations != nullptr && named_.find(request.subscription_name) == nullptr &&
        !shard_.destinations->may_create()) {
      return unexpected(Errc::limit_exceeded,
                        fmt::format("subscription '{}' would be a new destination and the broker has its maximum of "
                                    "{} ([limits] max_destinations)",
                                    request.subscription_name, shard_.destinations->max()));
    }
    return named_.subscribe(std::move(request), std::move(ref), std::move(done));
  }
  if (request.destination.kind == DestinationKind::queue && DestinationTree::has_wildcards(request.destination.name)) {
    return watchers_.subscribe(std::move(request), std::move(ref), std::move(done));
  }
  if (request.destination.kind == DestinationKind::topic) {
    return topics_.subscribe(std::move(request), std::move(ref), std::move(done));
  }
  SubscriptionInfo info;
  info.destination = request.destination;
  info.queue_key = request.destination.key();
  info.owner = shard_.owner_of(info.queue_key);
  const auto owner = info.owner;
  auto key = info.queue_key;
  subscriptions_.emplace(id, std::move(info));
  auto reply = [this, done = std::move(done)](Status st) mutable {
    shard_.complete_on(shard_.self, std::move(done), std::move(st));
  };
  // Posted even when this shard owns the queue: the caller learns the consumer id before the
  // first delivery can reach it.
  shard_.post_to(owner, [key = std::move(key), ref = std::move(ref), reply = std::move(reply)](Broker& b) mutable {
    b.owned_queues().add_consumer(std::move(key), std::move(ref), std::move(reply));
  });
  return id;
}

void Broker::unsubscribe(ConsumerId id, Completion done) {
  if (demand_observer_ != nullptr) {
    if (auto d = demand_consumers_.find(id); d != demand_consumers_.end()) {
      demand_observer_->consumer_removed(d->second);
      demand_consumers_.erase(d);
    }
  }
  auto it = subscriptions_.find(id);
  if (it == subscriptions_.end()) {
    shard_.complete_on(shard_.self, std::move(done), unexpected(Errc::not_found, "no such subscription"));
    return;
  }
  SubscriptionInfo info = std::move(it->second);
  subscriptions_.erase(it);
  if (info.watcher) {
    watchers_.unsubscribe(id, info, std::move(done));
    return;
  }
  if (info.topic_private) {
    topics_.unsubscribe(id, std::move(done));
    return;
  }
  auto reply = [this, done = std::move(done)](Status st) mutable {
    shard_.complete_on(shard_.self, std::move(done), std::move(st));
  };
  shard_.post_to(info.owner, [key = std::move(info.queue_key), id, reply = std::move(reply)](Broker& b) mutable {
    b.owned_queues().remove_consumer(std::move(key), id, std::move(reply));
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

void Broker::write_state(std::vector<StateRecord> state, Completion done) {
  store::Batch batch;
  add_state(batch, std::move(state));
  if (batch.empty()) {
    shard_.complete_on(shard_.self, std::move(done), ok());
    return;
  }
  shard_.store.append(std::move(batch), [this, done = std::move(done)](Status st) mutable {
    shard_.complete_on(shard_.self, std::move(done), std::move(st));
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
    shard_.complete_on(shard_.self, std::move(done), unexpected(Errc::not_found, "no such subscription"));
    return;
  }
  if (it->second.topic_private) {
    topics_.settle(id, std::move(tags), is_ack, requeue);
    if (!state.empty()) {
      write_state(std::move(state), std::move(done));
      return;
    }
    shard_.complete_on(shard_.self, std::move(done), ok());
    return;
  }
  auto reply = [this, done = std::move(done)](Status st) mutable {
    shard_.complete_on(shard_.self, std::move(done), std::move(st));
  };
  const auto owner = it->second.owner;
  // Acks of persistent messages are recorded; nacks only move messages in memory.
  if (owner == shard_.self) {
    queues_.settle(it->second.queue_key, id, std::move(tags), is_ack, is_ack, std::move(state), std::move(reply),
                 requeue);
    return;
  }
  shard_.post_to(owner, [key = it->second.queue_key, id, tags = std::move(tags), is_ack, state = std::move(state),
                         reply = std::move(reply), requeue](Broker& b) mutable {
    b.owned_queues().settle(std::move(key), id, std::move(tags), is_ack, is_ack, std::move(state), std::move(reply), requeue);
  });
}

void Broker::pause(ConsumerId id) {
  auto it = subscriptions_.find(id);
  if (it == subscriptions_.end() || it->second.topic_private || it->second.watcher) return;
  shard_.post_to(it->second.owner, [key = it->second.queue_key, id](Broker& b) { b.owned_queues().pause_consumer(key, id); });
}

void Broker::end_lease(const LeaseId& id, LeaseEnd how, Completion done) {
  if (id.shard == shard_.self) {
    leases_.end(id, how, std::move(done));
    return;
  }
  if (id.shard.value() >= shard_.shard_count()) {
    shard_.complete_on(shard_.self, std::move(done), unexpected(Errc::not_found, "no lease '" + id.to_string() + "'"));
    return;
  }
  shard_.post_to(id.shard, [id, how, home = shard_.self, done = std::move(done)](Broker& b) mutable {
    b.leases().end(id, how, [&b, home, done = std::move(done)](Status st) mutable {
      b.context().complete_on(home, std::move(done), std::move(st));
    });
  });
}

void Broker::delete_queue(Destination destination, Completion done) {
  auto key = destination.key();
  auto reply = [this, done = std::move(done)](Status st) mutable {
    shard_.complete_on(shard_.self, std::move(done), std::move(st));
  };
  // The owner first: the lambda below takes `key` and argument order is unspecified.
  const auto owner = shard_.owner_of(key);
  shard_.post_to(owner, [key = std::move(key), reply = std::move(reply)](Broker& b) mutable {
    b.owned_queues().remove(std::move(key), std::move(reply));
  });
}

BrokerStats Broker::stats() const {
  BrokerStats s;
  queues_.add_stats(s);
  s.topic_subscriptions = topics_.size();
  s.named_subscriptions = named_.size();
  s.retained = retained_.size();
  s.scheduled = shard_.scheduled();
  s.backlog_dropped = topics_.backlog_dropped();
  return s;
}

}  // namespace carrier::core
