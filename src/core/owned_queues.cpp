#include "core/owned_queues.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/named_subscriptions.hpp"
#include "core/queue_watchers.hpp"
#include "core/redelivery.hpp"
#include "model/queue_key.hpp"

namespace carrier::core {

using model::Destination;
using model::MessagePtr;

namespace {

// QueueKey's prefixes, looked up once: enqueue checks them per message.
const std::string_view kQueuePrefix = model::QueueKey::prefix(model::QueueKind::queue);
const std::string_view kTempQueuePrefix = model::QueueKey::prefix(model::QueueKind::temp_queue);
const std::string_view kSubscriptionPrefix = model::QueueKey::prefix(model::QueueKind::subscription);

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

}  // namespace

bool OwnedQueues::counts_as_destination(std::string_view key) {
  return starts_with(key, kQueuePrefix) || starts_with(key, kSubscriptionPrefix);
}

bool OwnedQueues::may_open(const std::string& key) const {
  if (shard_.destinations == nullptr || queues_.contains(key) || !starts_with(key, kQueuePrefix)) return true;
  if (shard_.configured_queues.contains(key.substr(kQueuePrefix.size()))) return true;
  return shard_.destinations->may_create();
}

Unexpected OwnedQueues::destinations_exhausted(std::string_view what) const {
  return unexpected(Errc::limit_exceeded, fmt::format("{} would be a new destination and the broker has its "
                                                      "maximum of {} ([limits] max_destinations)",
                                                      what, shard_.destinations->max()));
}

OwnedQueue& OwnedQueues::open(const std::string& key) {
  auto it = queues_.find(key);
  if (it != queues_.end()) return it->second;
  OwnedQueue q;
  q.queue = std::make_unique<Queue>(key);
  q.queue->touch(shard_.now_ms());
  q.stored = starts_with(key, kQueuePrefix);
  q.incarnation = next_incarnation_++;
  if (q.stored) {
    if (auto d = Destination::from_key(key)) {
      const auto& policy = shard_.policy_for(*d);
      if (policy.overflow == OverflowPolicy::block && (policy.max_messages != 0 || policy.max_bytes != 0)) {
        q.block_policy = &policy;
      }
    }
  }
  auto [ins, _] = queues_.emplace(key, std::move(q));
  shard_.account(kQueueOverheadBytes);
  if (shard_.destinations != nullptr && counts_as_destination(key)) shard_.destinations->add();
  watchers_.attach_new(key, ins->second);  // future queues of wildcard subscriptions
  return ins->second;
}

void OwnedQueues::drop(Map::iterator it) {
  if (it->second.counted_cold && shard_.memory != nullptr) shard_.memory->add_cold_queues(-1);
  watchers_.drop_queue(it->first, it->second);  // wildcard subscriptions re-attach if it comes back
  clear_pressure(it->first, it->second);
  if (shard_.destinations != nullptr && counts_as_destination(it->first)) shard_.destinations->remove();
  queues_.erase(it);
  shard_.account(-kQueueOverheadBytes);
}

void OwnedQueues::drop(const std::string& key) {
  auto it = queues_.find(key);
  if (it != queues_.end()) drop(it);
}

bool OwnedQueues::collectable(const std::string& key, const OwnedQueue& oq) const {
  if (!starts_with(key, kQueuePrefix) || !oq.subscription_name.empty()) return false;
  // No consumer means no unacked delivery either: those belong to consumers.
  const Queue& q = *oq.queue;
  // Wildcard queue subscriptions' children alone do not keep it: they re-attach if it comes back.
  if (q.depth() != 0 || !QueueWatchers::only_watched(oq) || oq.delayed != 0) return false;
  // Drops owed by a cold tail are read and acked through the queue.
  if (q.cold_active() || q.cold_reading() || !oq.warm_waiters.empty()) return false;
  return !shard_.configured_queues.contains(key.substr(kQueuePrefix.size()));
}

void OwnedQueues::collect_if_empty(const std::string& key) {
  auto it = queues_.find(key);
  if (it != queues_.end() && collectable(key, it->second)) drop(it);
}

void OwnedQueues::enqueue(std::vector<Routed> messages, Completion verdict) {
  const auto now = shard_.now_ms();
  Status outcome = ok();
  store::Batch batch;
  store::Batch spilled;
  std::vector<std::string> dirty;
  for (auto& r : messages) {
    auto& m = r.message;
    if (starts_with(r.key, kTempQueuePrefix) && !queues_.contains(r.key)) {
      if (outcome) {
        outcome = unexpected(Errc::not_found,
                             "temporary queue " + m->destination.uri() + " no longer exists");
      }
      continue;
    }
    if (starts_with(r.key, kSubscriptionPrefix) && !queues_.contains(r.key)) {
      // The subscription went away while the message was on its way.
      if (m->stored()) batch.push_back(store::Record::acked(r.key, m->id));
      continue;
    }
    if (m->deliver_at_ms > now) {
      shard_.account_hold(*m);
      shard_.at(m->deliver_at_ms, [this, r]() {
        shard_.account_release(*r.message);
        enqueue({r}, nullptr);
      });
      continue;
    }
    if (!may_open(r.key)) {
      if (outcome) outcome = destinations_exhausted(m->destination.uri());
      // Stored before it was routed (as for a full queue): forgotten again.
      if (m->stored()) batch.push_back(store::Record::acked(r.key, m->id));
      continue;
    }
    auto& oq = open(r.key);
    Queue& q = *oq.queue;
    const auto& policy = shard_.policy_for(m->destination);
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
        std::vector<Queue::Entry> gone;
        gone.push_back(std::move(oldest));
        release_entries(r.key, oq.stored, std::move(gone), batch);
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
      // Its location may have come first (routed once durable): the ack names that copy.
      if (oq.stored && m->stored()) batch.push_back(store::Record::acked(r.key, m->id, stored_ref(&oq, *m)));
      continue;
    }
    m = spill_if_due(r.key, oq, m, spilled);
    q.enqueue(m);
    shard_.account_hold(*m);
    // Behind a cold tail and already located (routed once durable): it joins the tail now.
    if (m->stored() && q.holding(m->priority)) {
      if (const auto at = located(oq, *m); at.valid() && join_cold(oq, m->id, at)) forget_location(oq, m->id);
    }
    if (dirty.empty() || dirty.back() != r.key) dirty.push_back(r.key);
  }
  // Before anything is dispatched: a spilled message's record goes ahead of its ack.
  if (!spilled.empty()) append_locating(std::move(spilled), [](Status) {});
  std::sort(dirty.begin(), dirty.end());
  dirty.erase(std::unique(dirty.begin(), dirty.end()), dirty.end());
  for (const auto& key : dirty) {
    auto it = queues_.find(key);
    if (it == queues_.end()) continue;
    dispatch(key, *it->second.queue, it->second.stored);
    update_pressure(key, it->second);
  }
  if (!batch.empty()) shard_.store.append(std::move(batch), [](Status) {});
  // Messages whose locations came first (routed once durable) may be paged as soon as they are in.
  if (!pageable_.empty()) page_if_over_budget();
  if (verdict) verdict(std::move(outcome));
}

void OwnedQueues::add_consumer(std::string key, ConsumerRef ref, Completion done) {
  if (!may_open(key)) {
    if (done) done(destinations_exhausted(key));
    return;
  }
  auto& oq = open(key);
  oq.queue->add_consumer(std::move(ref));
  oq.queue->touch(shard_.now_ms());
  if (done) done(ok());
  dispatch(key, *oq.queue, oq.stored);
}

void OwnedQueues::remove_consumer(std::string key, ConsumerId id, Completion done) {
  auto it = queues_.find(key);
  if (it != queues_.end()) {
    auto& oq = it->second;
    auto returned = oq.queue->remove_consumer(id);
    oq.queue->touch(shard_.now_ms());
    redelivery_.handle_returned(key, *oq.queue, oq.stored, std::move(returned));
    if (!oq.subscription_name.empty() && !oq.durable && oq.queue->consumer_count() == 0) {
      // A non-durable named (shared) subscription lives as long as it has consumers.
      named_.remove(oq.subscription_name, nullptr);
    }
    // The last consumer gone from a drained queue: free it now rather than at the next sweep,
    // so a client cycling through fresh names cannot pile up empty queues in between.
    collect_if_empty(key);
  }
  if (done) done(ok());
}

void OwnedQueues::pause_consumer(const std::string& key, ConsumerId id) {
  if (auto* oq = find(key)) oq->queue->pause_consumer(id);
}

void OwnedQueues::settle(std::string key, ConsumerId id, std::vector<std::uint64_t> tags, bool is_ack,
                         bool persist_acks, std::vector<StateRecord> state, Completion done, bool requeue) {
  auto it = queues_.find(key);
  if (it == queues_.end()) {
    if (!state.empty()) {
      store::Batch batch;
      add_state(batch, std::move(state));
      shard_.store.append(std::move(batch), [done = std::move(done)](Status st) mutable {
        if (done) done(std::move(st));
      });
      return;
    }
    if (done) done(unexpected(Errc::not_found, "queue " + key));
    return;
  }
  auto& oq = it->second;
  Queue& q = *oq.queue;
  q.touch(shard_.now_ms());
  if (!is_ack) {
    auto outcome = q.nack(id, tags);
    if (requeue) {
      redelivery_.handle_returned(key, q, oq.stored, std::move(outcome.returned));
    } else {
      redelivery_.handle_rejected(key, q, oq.stored, std::move(outcome.returned));
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
  shard_.store.append(std::move(batch), [done = std::move(done)](Status st) mutable {
    if (done) done(std::move(st));
  });
}

void OwnedQueues::remove(std::string key, Completion done) {
  auto it = queues_.find(key);
  if (it == queues_.end()) {
    if (done) done(ok());
    return;
  }
  auto& oq = it->second;
  store::Batch batch;
  auto cold = oq.queue->cut_cold();
  const bool stored = oq.stored;
  release_entries(key, oq.stored, oq.queue->take_all(), batch);
  drop(it);
  if (!batch.empty()) {
    shard_.store.append(std::move(batch), [done = std::move(done)](Status st) mutable {
      if (done) done(std::move(st));
    });
  } else if (done) {
    done(ok());
  }
  // After the acks above: a scan called now does not see what they removed.
  if (stored) ack_cold(key, std::move(cold));
}

void OwnedQueues::restore(const std::string& key, MessagePtr m, std::uint32_t delivery_count,
                          store::Location location) {
  if (starts_with(key, kSubscriptionPrefix) && !queues_.contains(key)) return;  // its subscription is gone
  auto& oq = open(key);
  if (location.valid() && m->persistent && m->deliver_at_ms <= shard_.now_ms() && oq.queue->holding(m->priority) &&
      cold_capable(key, oq)) {
    // Behind a cold tail: it joins it (its delivery count comes back with the scan).
    oq.queue->add_cold(m->priority, static_cast<std::uint32_t>(std::min<std::size_t>(m->footprint(), UINT32_MAX)), location,
                       m->timestamp_ms);
    track_cold(oq);
    return;
  }
  shard_.account_hold(*m);
  // Kept even when the broker does not page: an ack of a recovered message names its copy (a
  // journal keeps nothing per message for what it recovered from its checkpoint).
  if (location.valid() && oq.stored && m->persistent && pageable_key(key)) {
    if (!oq.locations) oq.locations = std::make_unique<std::unordered_map<model::MessageId, store::Location>>();
    (*oq.locations)[m->id] = location;
    pageable_.insert(key);
  }
  if (m->deliver_at_ms > shard_.now_ms()) {
    shard_.at(m->deliver_at_ms, [this, key, m, delivery_count, location]() {
      // A queue collected as empty meanwhile comes back, as for any send; a subscription's
      // queue that is gone means the subscription was removed.
      if (starts_with(key, kSubscriptionPrefix) && !queues_.contains(key)) {
        shard_.account_release(*m);
        return;
      }
      auto& oq = open(key);
      if (location.valid() && oq.stored && m->persistent && pageable_key(key)) {
        if (oq.queue->holding(m->priority) && cold_capable(key, oq)) {
          // Due behind a cold tail: it joins it, as a due summary does.
          shard_.account_release(*m);
          forget_location(oq, m->id);
          oq.queue->add_cold(m->priority, static_cast<std::uint32_t>(std::min<std::size_t>(m->footprint(), UINT32_MAX)),
                             location, m->timestamp_ms);
          track_cold(oq);
          dispatch(key, *oq.queue, oq.stored);
          return;
        }
        // Back into the map: a prune while it waited (it is in no queue) may have dropped it.
        if (!oq.locations) oq.locations = std::make_unique<std::unordered_map<model::MessageId, store::Location>>();
        (*oq.locations)[m->id] = location;
        pageable_.insert(key);
      }
      oq.queue->restore(m, delivery_count);
      dispatch(key, *oq.queue, oq.stored);
    });
    return;
  }
  oq.queue->restore(m, delivery_count);
  // A backlog larger than the budget is restored without being held: its tail leaves as it comes.
  page_if_over_budget();
}

void OwnedQueues::restore_tail(const store::RecoveredTail& tail) {
  if (tail.count == 0) return;
  if (starts_with(tail.queue, kSubscriptionPrefix) && !queues_.contains(tail.queue)) {
    pending_tails_.push_back(tail);  // its definition comes later in the recovery
    return;
  }
  auto& oq = open(tail.queue);
  // Only a paging broker over a store that can scan asks for tails: nothing else reads them.
  if (!cold_capable(tail.queue, oq)) return;
  oq.queue->add_cold_run(tail.priority, tail.count, tail.bytes, tail.from);
  track_cold(oq);
}

void OwnedQueues::finish_recovery() {
  auto tails = std::move(pending_tails_);
  pending_tails_.clear();
  for (const auto& t : tails) {
    if (queues_.contains(t.queue)) restore_tail(t);
  }
}

void OwnedQueues::restore_summary(const std::string& key, const store::MessageSummary& summary,
                                  store::Location location, std::uint32_t delivery_count) {
  if (starts_with(key, kSubscriptionPrefix) && !queues_.contains(key)) return;
  if (auto& oq = open(key); cold_capable(key, oq) && location.valid() && summary.deliver_at_ms <= shard_.now_ms()) {
    // Folded into its lane's cold tail: no per-message state (its delivery count comes back
    // with the scan that reads it).
    oq.queue->add_cold(summary.priority, summary.footprint, location, summary.timestamp_ms);
    track_cold(oq);
    return;
  }
  shard_.account(kPagedEntryBytes);
  auto enter = [this, key, summary, location, delivery_count]() {
    auto& oq = open(key);
    if (location.valid() && oq.queue->holding(summary.priority) && cold_capable(key, oq)) {
      // Due behind a cold tail (a scheduled message whose time came): it joins the tail, as a
      // due arrival does; a paged entry would come back from the tail's scan a second time.
      shard_.account(-kPagedEntryBytes);
      oq.queue->add_cold(summary.priority, summary.footprint, location, summary.timestamp_ms);
      track_cold(oq);
      return &oq;
    }
    oq.queue->restore_paged(summary, location, delivery_count);
    return &oq;
  };
  if (summary.deliver_at_ms > shard_.now_ms()) {
    shard_.at(summary.deliver_at_ms, [this, key, enter]() {
      if (starts_with(key, kSubscriptionPrefix) && !queues_.contains(key)) {
        shard_.account(-kPagedEntryBytes);
        return;
      }
      auto* oq = enter();
      dispatch(key, *oq->queue, oq->stored);
    });
    return;
  }
  (void)enter();
}

void OwnedQueues::page_in_all(const std::string& key, std::function<void()> then) {
  auto* oq = find(key);
  if (oq != nullptr && oq->queue->cold_active()) {
    // The whole cold tail first, window after window, then the paged entries (if any).
    const bool first = oq->warm_waiters.empty();
    oq->warm_waiters.push_back([this, key, then = std::move(then)]() mutable { page_in_all(key, std::move(then)); });
    if (first && !oq->queue->cold_reading()) read_cold(key, *oq);
    return;
  }
  if (oq == nullptr || oq->queue->paged() == 0) {
    then();
    return;
  }
  auto reads = oq->queue->paged_entries();
  std::vector<store::ReadItem> items;
  items.reserve(reads.size());
  for (const auto& r : reads) items.push_back(r.item);
  const auto self = shard_.self;
  auto& executor = shard_.executor;
  shard_.store.read(key, std::move(items),
                    [this, self, &executor, key, incarnation = oq->incarnation, reads = std::move(reads),
                     then = std::move(then)](std::vector<Result<MessagePtr>> answers) mutable {
                      executor.post(self, [this, key = std::move(key), incarnation, reads = std::move(reads),
                                           answers = std::move(answers), then = std::move(then)]() mutable {
                        auto* q = find(key);
                        if (q != nullptr && q->incarnation == incarnation) apply_answers(key, *q, reads, answers);
                        then();
                      });
                    });
}

void OwnedQueues::set_durable(const std::string& key, bool durable, store::Batch& batch) {
  auto it = queues_.find(key);
  if (it == queues_.end()) return;
  auto& oq = it->second;
  oq.durable = durable;
  if (oq.stored == durable) return;
  // The messages it holds enter (or leave) the store with it. Leaving, none is paged: the
  // caller read them back first (page_in_all); any still paged stays where it is stored.
  oq.queue->for_each([&](const Queue::Entry& e) {
    // Entering, only persistent ones are stored; leaving, spilled ones go too.
    if (!e.message || !(durable ? e.message->persistent : e.message->stored())) return;
    batch.push_back(durable ? store::Record::added(key, e.message)
                            : store::Record::acked(key, e.message->id, stored_ref(&oq, *e.message)));
  });
  if (!durable) oq.locations.reset();
  oq.stored = durable;
}

void OwnedQueues::update_pressure(const std::string& key, OwnedQueue& oq) {
  if (oq.block_policy == nullptr || shard_.pressure == nullptr) return;
  const DestinationPolicy& p = *oq.block_policy;
  const Queue& q = *oq.queue;
  const std::uint64_t count = q.depth() + q.unacked();
  const std::uint64_t bytes = q.ready_bytes();
  if (!oq.blocked) {
    if ((p.max_messages != 0 && count >= p.max_messages) || (p.max_bytes != 0 && bytes >= p.max_bytes)) {
      oq.blocked = true;
      shard_.pressure->block(key);
    }
    return;
  }
  // Cleared below 90%, so producers do not pause and resume at every message.
  if ((p.max_messages == 0 || count * 10 < p.max_messages * 9) && (p.max_bytes == 0 || bytes * 10 < p.max_bytes * 9)) {
    clear_pressure(key, oq);
  }
}

void OwnedQueues::clear_pressure(const std::string& key, OwnedQueue& oq) {
  if (!oq.blocked) return;
  oq.blocked = false;
  shard_.pressure->clear(key);
}

void OwnedQueues::release(const std::string& key, bool stored, const std::vector<MessagePtr>& gone,
                          store::Batch& batch) {
  OwnedQueue* oq = nullptr;
  if (!pageable_.empty() && pageable_.contains(key)) oq = find(key);
  for (const auto& m : gone) {
    // Looked up before it is forgotten: the ack names the copy it removes.
    const auto ref = stored && m->stored() ? stored_ref(oq, *m) : store::StoredRef{};
    if (oq != nullptr) forget_location(*oq, m->id);
    shard_.account_release(*m);
    if (stored && m->stored()) batch.push_back(store::Record::acked(key, m->id, ref));
  }
}

void OwnedQueues::dispatch(const std::string& key, Queue& queue, bool stored) {
  std::vector<Queue::Entry> expired;
  const std::int64_t now = shard_.now_ms();
  auto batches = queue.dispatch(now, expired);
  store::Batch records;
  std::vector<Routed> moved;
  expire(key, stored, std::move(expired), records, moved);
  auto& counters = shard_.counters;
  for (auto& d : batches) {
    counters.delivered += d.batch.size();
    for (const auto& del : d.batch) {
      if (del.delivery_count > 1) {
        ++counters.redelivered;
      } else {
        // The id's top 48 bits are the Unix milliseconds at which the broker took the message.
        counters.publish_to_deliver.record(now - static_cast<std::int64_t>(del.message->id.hi >> 16));
      }
    }
    // Delivery records let a restart flag these messages redelivered; auto-acked ones are acked
    // as soon as they are written, so they need none.
    if (stored && d.consumer.ack_mode != AckMode::auto_ack) {
      const OwnedQueue* oq = pageable_.contains(key) ? find(key) : nullptr;
      for (const auto& del : d.batch) {
        if (del.message->persistent) {
          records.push_back(store::Record::delivered(key, del.message->id, del.delivery_count, stored_ref(oq, *del.message)));
        }
      }
    }
    if (d.consumer.home == shard_.self) {
      d.consumer.consumer->deliver(d.consumer.id, std::move(d.batch));
    } else {
      shard_.executor.post(d.consumer.home, [c = d.consumer.consumer, id = d.consumer.id, batch = std::move(d.batch)]() mutable {
        c->deliver(id, std::move(batch));
      });
    }
  }
  redelivery_.finish_dead_letters(std::move(records), std::move(moved));
  if (queue.paged() != 0 && !queue.reading()) {
    if (auto* oq = find(key); oq != nullptr && oq->queue.get() == &queue) read_ahead(key, *oq);
  }
  if (queue.cold_tail(0) != nullptr) {
    if (auto* oq = find(key); oq != nullptr && oq->queue.get() == &queue) {
      if (queue.cold_active() && !queue.cold_reading()) read_cold(key, *oq);
      track_cold(*oq);
    }
  }
}

void OwnedQueues::sweep(std::int64_t now, store::Batch& batch, std::vector<Routed>& moved) {
  std::vector<std::string> idle;
  std::vector<std::string> empty;
  for (auto& [key, oq] : queues_) {
    expire(key, oq.stored, oq.queue->take_expired(now), batch, moved);
    prune_locations(oq);
    // Emptied by expiry, overflow or dead-lettering, or created by a send that was refused.
    if (collectable(key, oq)) {
      empty.push_back(key);
      continue;
    }
    update_pressure(key, oq);
    if (!starts_with(key, kQueuePrefix) && !starts_with(key, kTempQueuePrefix)) continue;
    auto d = Destination::from_key(key);
    if (!d) continue;
    const auto& policy = shard_.policy_for(*d);
    // Wildcard subscriptions' children do not keep a queue alive: it is re-attached if recreated.
    if (policy.idle_expiry_ms != 0 && QueueWatchers::only_watched(oq) &&
        now - oq.queue->last_activity_ms() >= static_cast<std::int64_t>(policy.idle_expiry_ms)) {
      idle.push_back(key);
    }
  }
  for (const auto& key : idle) {
    auto it = queues_.find(key);
    auto cold = it->second.queue->cut_cold();
    const bool stored = it->second.stored;
    release_entries(key, stored, it->second.queue->take_all(), batch);
    drop(it);
    if (stored && !cold.empty()) {
      // The sweep's batch is appended after this returns: the scans start after it.
      shard_.executor.post(shard_.self, [this, key, cold = std::move(cold)]() mutable { ack_cold(key, std::move(cold)); });
    }
  }
  for (const auto& key : empty) drop(queues_.find(key));
  // A burst of queues leaves a bucket array sized for it behind; give it back once they are gone.
  if (queues_.bucket_count() > 1024 && queues_.bucket_count() > 8 * queues_.size()) queues_.rehash(0);
}

void OwnedQueues::add_stats(BrokerStats& s) const {
  s.queues = queues_.size();
  for (const auto& [k, q] : queues_) {
    s.messages_ready += q.queue->depth();
    s.messages_cold += q.queue->cold();
    s.messages_unacked += q.queue->unacked();
  }
}

}  // namespace carrier::core
