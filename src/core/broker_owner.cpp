// The owner side of Broker: the queues this shard owns, their dispatch, redelivery, dead
// letters, limits, sweeps and the shard's schedule.
#include <algorithm>
#include <cmath>

#include "core/broker.hpp"
#include "model/queue_key.hpp"
#include "selector/selector.hpp"

namespace carrier::core {

using model::Destination;
using model::DestinationKind;
using model::Message;
using model::MessagePtr;
using model::owner_shard;

namespace {

constexpr std::string_view kQueuePrefix = "queue:";
constexpr std::string_view kSubscriptionPrefix = "subscription:";
constexpr std::string_view kDefinitionsKey = "queue:$subscriptions";

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

}  // namespace

void Broker::account(std::int64_t bytes) {
  if (memory_ == nullptr || bytes == 0) return;
  if (bytes > 0) {
    memory_->add(bytes);
  } else {
    memory_->sub(-bytes);
  }
}

void Broker::account_hold(const Message& m) {
  if (memory_ != nullptr && m.holders.count.fetch_add(1, std::memory_order_relaxed) == 0) {
    memory_->add(static_cast<std::int64_t>(m.footprint()));
  }
}

void Broker::account_release(const Message& m) {
  if (memory_ != nullptr && m.holders.count.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    memory_->sub(static_cast<std::int64_t>(m.footprint()));
  }
}

Broker::OwnedQueue& Broker::owned(const std::string& key) {
  auto it = queues_.find(key);
  if (it != queues_.end()) return it->second;
  OwnedQueue q;
  q.queue = std::make_unique<Queue>(key);
  q.queue->touch(now_ms());
  q.stored = starts_with(key, kQueuePrefix);
  q.incarnation = next_incarnation_++;
  if (q.stored) {
    if (auto d = Destination::from_key(key)) {
      const auto& policy = policy_for(*d);
      if (policy.overflow == OverflowPolicy::block && (policy.max_messages != 0 || policy.max_bytes != 0)) {
        q.block_policy = &policy;
      }
    }
  }
  auto [ins, _] = queues_.emplace(key, std::move(q));
  account(kQueueOverheadBytes);
  watch_attach_new(key, ins->second);  // future queues of wildcard subscriptions
  return ins->second;
}

void Broker::drop_queue(OwnedQueues::iterator it) {
  watch_drop_queue(it->first, it->second);  // wildcard subscriptions re-attach if it comes back
  clear_pressure(it->first, it->second);
  queues_.erase(it);
  account(-kQueueOverheadBytes);
}

bool Broker::collectable(const std::string& key, const OwnedQueue& oq) const {
  if (!starts_with(key, kQueuePrefix) || !oq.subscription_name.empty()) return false;
  // No consumer means no unacked delivery either: those belong to consumers.
  const Queue& q = *oq.queue;
  // Wildcard queue subscriptions' children alone do not keep it: they re-attach if it comes back.
  if (q.depth() != 0 || !only_watched(oq) || oq.delayed != 0) return false;
  return !configured_queues_.contains(key.substr(kQueuePrefix.size()));
}

void Broker::collect_if_empty(const std::string& key) {
  auto it = queues_.find(key);
  if (it != queues_.end() && collectable(key, it->second)) drop_queue(it);
}

void Broker::owner_enqueue(std::vector<Routed> messages, Completion verdict) {
  const auto now = now_ms();
  Status outcome = ok();
  store::Batch batch;
  std::vector<std::string> dirty;
  for (auto& r : messages) {
    const auto& m = r.message;
    if (starts_with(r.key, "temp-queue:") && !queues_.contains(r.key)) {
      if (outcome) {
        outcome = unexpected(Errc::not_found,
                             "temporary queue " + m->destination.uri() + " no longer exists");
      }
      continue;
    }
    if (starts_with(r.key, kSubscriptionPrefix) && !queues_.contains(r.key)) {
      // The subscription went away while the message was on its way.
      if (m->persistent) batch.push_back(store::Record::acked(r.key, m->id));
      continue;
    }
    if (m->deliver_at_ms > now) {
      account_hold(*m);
      at(m->deliver_at_ms, [this, r]() {
        account_release(*r.message);
        owner_enqueue({r}, nullptr);
      });
      continue;
    }
    auto& oq = owned(r.key);
    Queue& q = *oq.queue;
    const auto& policy = policy_for(m->destination);
    auto full = [&]() {
      return (policy.max_messages != 0 && q.depth() + q.unacked() >= policy.max_messages) ||
             (policy.max_bytes != 0 && q.ready_bytes() + m->footprint() > policy.max_bytes);
    };
    bool refused = false;
    while (full()) {
      // Taken: its producers pause until the queue drains (update_pressure below).
      if (oq.block_policy != nullptr) break;
      Queue::Entry oldest;
      if (policy.overflow == OverflowPolicy::drop_oldest && q.take_oldest(oldest)) {
        release(r.key, oq.stored, {oldest.message}, batch);
        continue;
      }
      refused = true;
      break;
    }
    if (refused) {
      if (outcome) {
        outcome = unexpected(Errc::limit_exceeded,
                             "destination " + m->destination.uri() + " is full (max_messages " +
                                 std::to_string(policy.max_messages) + ", max_bytes " + std::to_string(policy.max_bytes) + ")");
      }
      if (oq.stored && m->persistent) batch.push_back(store::Record::acked(r.key, m->id));
      continue;
    }
    q.enqueue(m);
    account_hold(*m);
    if (dirty.empty() || dirty.back() != r.key) dirty.push_back(r.key);
  }
  std::sort(dirty.begin(), dirty.end());
  dirty.erase(std::unique(dirty.begin(), dirty.end()), dirty.end());
  for (const auto& key : dirty) {
    auto it = queues_.find(key);
    if (it == queues_.end()) continue;
    dispatch(key, *it->second.queue, it->second.stored);
    update_pressure(key, it->second);
  }
  if (!batch.empty()) store_.append(std::move(batch), [](Status) {});
  if (verdict) verdict(std::move(outcome));
}

void Broker::owner_add_consumer(std::string key, ConsumerRef ref, Completion done) {
  auto& oq = owned(key);
  oq.queue->add_consumer(std::move(ref));
  oq.queue->touch(now_ms());
  if (done) done(ok());
  dispatch(key, *oq.queue, oq.stored);
}

void Broker::owner_remove_consumer(std::string key, ConsumerId id, Completion done) {
  auto it = queues_.find(key);
  if (it != queues_.end()) {
    auto& oq = it->second;
    auto returned = oq.queue->remove_consumer(id);
    oq.queue->touch(now_ms());
    handle_returned(key, *oq.queue, oq.stored, std::move(returned));
    if (!oq.subscription_name.empty() && !oq.durable && oq.queue->consumer_count() == 0) {
      // A non-durable named (shared) subscription lives as long as it has consumers.
      remove_subscription(oq.subscription_name, nullptr);
    }
    // The last consumer gone from a drained queue: free it now rather than at the next sweep,
    // so a client cycling through fresh names cannot pile up empty queues in between.
    collect_if_empty(key);
  }
  if (done) done(ok());
}

void Broker::owner_settle(std::string key, ConsumerId id, std::vector<std::uint64_t> tags, bool is_ack,
                          bool persist_acks, std::vector<StateRecord> state, Completion done, bool requeue) {
  auto it = queues_.find(key);
  if (it == queues_.end()) {
    if (!state.empty()) {
      store::Batch batch;
      add_state(batch, std::move(state));
      store_.append(std::move(batch), [done = std::move(done)](Status st) mutable {
        if (done) done(std::move(st));
      });
      return;
    }
    if (done) done(unexpected(Errc::not_found, "queue " + key));
    return;
  }
  auto& oq = it->second;
  Queue& q = *oq.queue;
  q.touch(now_ms());
  if (!is_ack) {
    auto outcome = q.nack(id, tags);
    if (requeue) {
      handle_returned(key, q, oq.stored, std::move(outcome.returned));
    } else {
      handle_rejected(key, q, oq.stored, std::move(outcome.returned));
    }
    if (done) done(ok());
    return;
  }
  auto outcome = q.ack(id, tags);
  store::Batch batch;
  release(key, oq.stored && persist_acks, outcome.removed, batch);
  add_state(batch, std::move(state));
  dispatch(key, q, oq.stored);
  update_pressure(key, oq);
  if (batch.empty()) {
    if (done) done(ok());
    return;
  }
  // `done` is the caller's reply, which hops to the consumer's shard itself.
  store_.append(std::move(batch), [done = std::move(done)](Status st) mutable {
    if (done) done(std::move(st));
  });
}

void Broker::owner_delete(std::string key, Completion done) {
  auto it = queues_.find(key);
  if (it == queues_.end()) {
    if (done) done(ok());
    return;
  }
  auto& oq = it->second;
  std::vector<MessagePtr> gone;
  for (auto& e : oq.queue->take_all()) gone.push_back(std::move(e.message));
  store::Batch batch;
  release(key, oq.stored, gone, batch);
  drop_queue(it);
  if (batch.empty()) {
    if (done) done(ok());
    return;
  }
  store_.append(std::move(batch), [done = std::move(done)](Status st) mutable {
    if (done) done(std::move(st));
  });
}

void Broker::update_pressure(const std::string& key, OwnedQueue& oq) {
  if (oq.block_policy == nullptr || pressure_ == nullptr) return;
  const DestinationPolicy& p = *oq.block_policy;
  const Queue& q = *oq.queue;
  const std::uint64_t count = q.depth() + q.unacked();
  const std::uint64_t bytes = q.ready_bytes();
  if (!oq.blocked) {
    if ((p.max_messages != 0 && count >= p.max_messages) || (p.max_bytes != 0 && bytes >= p.max_bytes)) {
      oq.blocked = true;
      pressure_->block(key);
    }
    return;
  }
  // Cleared below 90%, so producers do not pause and resume at every message.
  if ((p.max_messages == 0 || count * 10 < p.max_messages * 9) && (p.max_bytes == 0 || bytes * 10 < p.max_bytes * 9)) {
    clear_pressure(key, oq);
  }
}

void Broker::clear_pressure(const std::string& key, OwnedQueue& oq) {
  if (!oq.blocked) return;
  oq.blocked = false;
  pressure_->clear(key);
}

void Broker::release(const std::string& key, bool stored, const std::vector<MessagePtr>& gone, store::Batch& batch) {
  for (const auto& m : gone) {
    account_release(*m);
    if (stored && m->persistent) batch.push_back(store::Record::acked(key, m->id));
  }
}

void Broker::dispatch(const std::string& key, Queue& queue, bool stored) {
  std::vector<Queue::Entry> expired;
  auto batches = queue.dispatch(now_ms(), expired);
  store::Batch records;
  std::vector<Routed> moved;
  for (auto& e : expired) {
    if (policy_for(e.message->destination).expired_to_dlq) {
      dead_letter(key, stored, std::move(e), "expired", records, moved);
    } else {
      release(key, stored, {e.message}, records);
    }
  }
  for (auto& d : batches) {
    // Delivery records let a restart flag these messages redelivered; auto-acked ones are acked
    // as soon as they are written, so they need none.
    if (stored && d.consumer.ack_mode != AckMode::auto_ack) {
      for (const auto& del : d.batch) {
        if (del.message->persistent) {
          records.push_back(store::Record::delivered(key, del.message->id, del.delivery_count));
        }
      }
    }
    if (d.consumer.home == self_) {
      d.consumer.consumer->deliver(d.consumer.id, std::move(d.batch));
    } else {
      executor_.post(d.consumer.home, [c = d.consumer.consumer, id = d.consumer.id, batch = std::move(d.batch)]() mutable {
        c->deliver(id, std::move(batch));
      });
    }
  }
  finish_dead_letters(std::move(records), std::move(moved));
}

std::int64_t Broker::redelivery_delay(const DestinationPolicy& p, std::uint32_t deliveries) {
  if (p.redelivery_delay_ms == 0) return 0;
  const double exponent = deliveries > 0 ? static_cast<double>(deliveries - 1) : 0.0;
  double delay = static_cast<double>(p.redelivery_delay_ms) * std::pow(p.redelivery_multiplier, exponent);
  delay = std::min(delay, static_cast<double>(p.redelivery_max_delay_ms));
  if (p.redelivery_jitter > 0) {
    std::uniform_real_distribution<double> spread(-p.redelivery_jitter, p.redelivery_jitter);
    delay *= 1.0 + spread(random_);
  }
  return std::max<std::int64_t>(0, static_cast<std::int64_t>(delay));
}

void Broker::handle_returned(const std::string& key, Queue& queue, bool stored, std::vector<Queue::Entry> entries) {
  if (entries.empty()) return;
  store::Batch batch;
  std::vector<Routed> moved;
  const auto now = now_ms();
  for (auto& e : entries) {
    const auto& policy = policy_for(e.message->destination);
    if (policy.max_deliveries != 0 && e.delivery_count >= policy.max_deliveries) {
      dead_letter(key, stored, std::move(e), "max-deliveries", batch, moved);
      continue;
    }
    const auto delay = redelivery_delay(policy, e.delivery_count);
    if (delay == 0) {
      queue.requeue(std::move(e));
      continue;
    }
    // Counted so that the queue is not collected as empty while the message waits outside it.
    std::uint64_t incarnation = 0;
    if (auto it = queues_.find(key); it != queues_.end()) {
      ++it->second.delayed;
      incarnation = it->second.incarnation;
    }
    at(now + delay, [this, key, e, stored, incarnation]() mutable {
      // The queue may be gone (a private subscription closed, a temporary queue deleted).
      Queue* q = nullptr;
      if (auto it = queues_.find(key); it != queues_.end()) {
        q = it->second.queue.get();
        // Only the queue that counted it: one deleted and re-created since has its own count.
        if (it->second.incarnation == incarnation) --it->second.delayed;
      } else {
        for (auto& [id, sub] : topic_subscriptions_) {
          if (sub.queue->key() == key) q = sub.queue.get();
        }
      }
      if (q == nullptr) {
        store::Batch gone;
        release(key, stored, {e.message}, gone);
        if (!gone.empty()) store_.append(std::move(gone), [](Status) {});
        return;
      }
      q->requeue(std::move(e));
      dispatch(key, *q, stored);
    });
  }
  dispatch(key, queue, stored);
  finish_dead_letters(std::move(batch), std::move(moved));
}

void Broker::handle_rejected(const std::string& key, Queue& queue, bool stored, std::vector<Queue::Entry> entries) {
  if (entries.empty()) return;
  store::Batch batch;
  std::vector<Routed> moved;
  for (auto& e : entries) dead_letter(key, stored, std::move(e), "rejected", batch, moved);
  dispatch(key, queue, stored);
  finish_dead_letters(std::move(batch), std::move(moved));
}

void Broker::dead_letter(const std::string& key, bool stored, Queue::Entry entry, std::string_view reason,
                         store::Batch& batch, std::vector<Routed>& moved) {
  const Message& m = *entry.message;
  const auto& policy = policy_for(m.destination);
  account_release(m);
  if (policy.dead_letter_queue.empty()) {
    if (stored && m.persistent) batch.push_back(store::Record::acked(key, m.id));
    return;
  }
  std::string dlq = policy.dead_letter_queue;
  if (auto pos = dlq.find("{name}"); pos != std::string::npos) dlq.replace(pos, 6, m.destination.name);
  auto copy = std::make_shared<Message>(m);
  copy->destination = Destination{DestinationKind::queue, dlq};
  copy->expires_ms = 0;  // it is here because it expired, or to be looked at: it must stay
  copy->deliver_at_ms = 0;
  copy->properties.emplace_back("original-destination", m.destination.uri());
  copy->properties.emplace_back("dlq-reason", std::string(reason));
  copy->properties.emplace_back("dlq-delivery-count", std::to_string(entry.delivery_count));
  auto dlq_key = copy->destination.key();
  // One batch: gone from the source and present in the DLQ together, never both, never neither.
  if (m.persistent) {
    if (stored) batch.push_back(store::Record::acked(key, m.id));
    batch.push_back(store::Record::added(dlq_key, copy));
  }
  moved.push_back(Routed{std::move(dlq_key), std::move(copy)});
}

void Broker::finish_dead_letters(store::Batch batch, std::vector<Routed> moved) {
  auto route = [this](std::vector<Routed> moved) { route_planned(std::move(moved), {}, nullptr); };
  if (batch.empty()) {
    if (!moved.empty()) route(std::move(moved));
    return;
  }
  if (moved.empty()) {
    store_.append(std::move(batch), [](Status) {});
    return;
  }
  store_.append(std::move(batch), [this, route, moved = std::move(moved)](Status st) mutable {
    // If the move could not be stored the messages still go to the DLQ in memory: dropping them
    // would lose what the store still holds in the source queue for the next start.
    executor_.post(self_, [route, moved = std::move(moved)]() mutable { route(std::move(moved)); });
  });
}

// ---------------------------------------------------------------- schedule and sweeps

void Broker::at(std::int64_t due_ms, Schedule::Task task) {
  schedule_.add(due_ms, std::move(task));
  if (due_ms < armed_due_) arm();
}

void Broker::arm() {
  if (schedule_.empty()) return;
  // A wake-up far ahead (a schedule a year away) is taken in steps of at most an hour: a timer
  // counts nanoseconds in 64 bits, and a stored time may be anything. on_wake arms the next step.
  constexpr std::uint64_t kMaxWakeMs = 3'600'000;
  const auto now = now_ms();
  const auto due = schedule_.next_due();
  const std::uint64_t ahead = due <= now ? 0 : static_cast<std::uint64_t>(due) - static_cast<std::uint64_t>(now);
  const auto delay = static_cast<std::int64_t>(std::min(ahead, kMaxWakeMs));
  armed_due_ = now + delay;
  executor_.post_after(self_, static_cast<std::uint64_t>(delay), [this]() { on_wake(); });
}

void Broker::on_wake() {
  armed_due_ = INT64_MAX;
  schedule_.run_due(now_ms());
  if (!schedule_.empty() && schedule_.next_due() < armed_due_) arm();
}

void Broker::start() {
  if (options_.sweep_interval_ms == 0) return;
  at(now_ms() + options_.sweep_interval_ms, [this]() { sweep(); });
}

void Broker::sweep() {
  const auto now = now_ms();
  store::Batch batch;
  std::vector<Routed> moved;
  std::vector<std::string> idle;
  std::vector<std::string> empty;
  for (auto& [key, oq] : queues_) {
    for (auto& e : oq.queue->take_expired(now)) {
      if (policy_for(e.message->destination).expired_to_dlq) {
        dead_letter(key, oq.stored, std::move(e), "expired", batch, moved);
      } else {
        release(key, oq.stored, {e.message}, batch);
      }
    }
    // Emptied by expiry, overflow or dead-lettering, or created by a send that was refused.
    if (collectable(key, oq)) {
      empty.push_back(key);
      continue;
    }
    update_pressure(key, oq);
    if (!starts_with(key, kQueuePrefix) && !starts_with(key, "temp-queue:")) continue;
    auto d = Destination::from_key(key);
    if (!d) continue;
    const auto& policy = policy_for(*d);
    // Wildcard subscriptions' children do not keep a queue alive: it is re-attached if recreated.
    if (policy.idle_expiry_ms != 0 && only_watched(oq) &&
        now - oq.queue->last_activity_ms() >= static_cast<std::int64_t>(policy.idle_expiry_ms)) {
      idle.push_back(key);
    }
  }
  for (auto& [id, sub] : topic_subscriptions_) {
    std::vector<MessagePtr> gone;
    for (auto& e : sub.queue->take_expired(now)) gone.push_back(std::move(e.message));
    if (!gone.empty()) release(sub.queue->key(), false, gone, batch);
    relieve_backlog(sub);
  }
  for (const auto& key : idle) {
    auto it = queues_.find(key);
    std::vector<MessagePtr> gone;
    for (auto& e : it->second.queue->take_all()) gone.push_back(std::move(e.message));
    release(key, it->second.stored, gone, batch);
    drop_queue(it);
  }
  for (const auto& key : empty) drop_queue(queues_.find(key));
  // A burst of queues leaves a bucket array sized for it behind; give it back once they are gone.
  if (queues_.bucket_count() > 1024 && queues_.bucket_count() > 8 * queues_.size()) queues_.rehash(0);
  finish_dead_letters(std::move(batch), std::move(moved));
  at(now + options_.sweep_interval_ms, [this]() { sweep(); });
}

// ---------------------------------------------------------------- recovery

void Broker::recover(const std::vector<Broker*>& brokers, store::RecoveredMessage r) {
  const std::size_t n = brokers.size();
  const auto& m = r.message;
  if (r.queue == kDefinitionsKey) {
    NamedEntry entry;
    for (const auto& [k, v] : m->properties) {
      if (k == "name") entry.def.name = v;
      if (k == "filter") entry.def.filter = v;
      if (k == "selector") entry.def.selector = v;
      if (k == "holder") entry.def.holders.push_back(v);
    }
    std::sort(entry.def.holders.begin(), entry.def.holders.end());
    entry.def.durable = true;
    entry.definition_id = m->id;
    if (entry.def.name.empty() || entry.def.filter.empty()) return;
    const auto owner = owner_shard(std::string(kSubscriptionPrefix) + entry.def.name, n).value();
    for (auto* b : brokers) {
      NamedEntry copy = entry;
      if (!copy.def.selector.empty()) {
        auto parsed = selector::parse(copy.def.selector);
        if (parsed) copy.selector = *parsed;
      }
      b->named_remove(copy.def.name);  // a later definition of the same name replaces it
      b->named_add(std::move(copy), owner);
    }
    return;
  }
  if (starts_with(r.queue, kScheduledTopicPrefix)) {
    brokers[owner_shard(r.queue, n).value()]->schedule_topic(m);
    return;
  }
  if (starts_with(r.queue, "retained:")) {
    Broker* b = brokers[owner_shard(r.queue, n).value()];
    auto copy = std::make_shared<Message>(*m);
    copy->from_retained = true;
    b->account_hold(*copy);
    b->retained_[r.queue.substr(9)] = std::move(copy);
    return;
  }
  Broker* b = brokers[owner_shard(r.queue, n).value()];
  if (starts_with(r.queue, kSubscriptionPrefix) && !b->queues_.contains(r.queue)) return;  // its subscription is gone
  auto& oq = b->owned(r.queue);
  b->account_hold(*m);
  if (m->deliver_at_ms > b->now_ms()) {
    b->at(m->deliver_at_ms, [b, key = r.queue, m, count = r.delivery_count]() {
      // A queue collected as empty meanwhile comes back, as for any send; a subscription's
      // queue that is gone means the subscription was removed.
      if (starts_with(key, kSubscriptionPrefix) && !b->queues_.contains(key)) return;
      auto& oq = b->owned(key);
      oq.queue->restore(m, count);
      b->dispatch(key, *oq.queue, oq.stored);
    });
    return;
  }
  oq.queue->restore(m, r.delivery_count);
}

}  // namespace carrier::core
