// OwnedQueues' paging (docs/storage.md, "Paging"): persistent messages already in the store
// leave memory when the broker is over [core] memory_budget_bytes, the tails of queues first,
// and are read back a window ahead of the consumers. The queue moves entries between memory and
// paged (Queue::page_out, read_ahead, page_in); this side keeps the store locations, the memory
// accounting and the reads.
#include <algorithm>

#include "core/broker.hpp"
#include "core/disk_alarm.hpp"
#include "core/owned_queues.hpp"
#include "core/redelivery.hpp"
#include "model/queue_key.hpp"

namespace carrier::core {

using model::MessagePtr;

namespace {

const std::string_view kQueuePrefix = model::QueueKey::prefix(model::QueueKind::queue);
const std::string_view kSubscriptionPrefix = model::QueueKey::prefix(model::QueueKind::subscription);

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// Page until usage is this far under the budget, so that every new message does not page one.
constexpr std::int64_t kHysteresisPercent = 90;

}  // namespace

bool OwnedQueues::pageable_key(std::string_view key) {
  // `queue:$...` names are the protocols' own state (MQTT sessions, the relay's records), read
  // in full at recovery by their protocol: never paged.
  if (starts_with(key, kQueuePrefix)) return key.size() == kQueuePrefix.size() || key[kQueuePrefix.size()] != '$';
  return starts_with(key, kSubscriptionPrefix);
}

store::Location OwnedQueues::located(const OwnedQueue& oq, const model::Message& m) const {
  if (!oq.locations) return {};
  auto it = oq.locations->find(m.id);
  return it == oq.locations->end() ? store::Location{} : it->second;
}

void OwnedQueues::forget_location(OwnedQueue& oq, const model::MessageId& id) {
  if (oq.locations) oq.locations->erase(id);
}

store::StoredRef OwnedQueues::stored_ref_at(store::Location at, const model::Message& m) {
  if (!at.valid()) return {};
  return store::StoredRef{at, m.priority, static_cast<std::uint32_t>(std::min<std::size_t>(m.footprint(), UINT32_MAX))};
}

store::StoredRef OwnedQueues::stored_ref(const OwnedQueue* oq, const model::Message& m) const {
  return oq == nullptr ? store::StoredRef{} : stored_ref_at(located(*oq, m), m);
}

store::StoredRef OwnedQueues::stored_ref(const OwnedQueue* oq, const Queue::Entry& e) const {
  if (e.is_paged()) return store::StoredRef{e.paged->location, e.paged->summary.priority, e.paged->summary.footprint};
  return e.message ? stored_ref(oq, *e.message) : store::StoredRef{};
}

store::StoredRef OwnedQueues::stored_ref(const std::string& key, const model::Message& m) const {
  auto it = queues_.find(key);
  return it == queues_.end() ? store::StoredRef{} : stored_ref(&it->second, m);
}

store::StoredRef OwnedQueues::take_stored_ref(const std::string& key, const model::Message& m) {
  auto* oq = find(key);
  if (oq == nullptr) return {};
  const auto ref = stored_ref(oq, m);
  forget_location(*oq, m.id);
  return ref;
}

void OwnedQueues::note_delayed(const std::string& key, const model::MessageId& id, bool waiting) {
  auto* oq = find(key);
  if (oq == nullptr || !oq->locations) return;
  if (waiting) {
    if (!oq->locations->contains(id)) return;
    if (!oq->delayed_ids) oq->delayed_ids = std::make_unique<std::unordered_set<model::MessageId>>();
    oq->delayed_ids->insert(id);
  } else if (oq->delayed_ids) {
    oq->delayed_ids->erase(id);
    if (oq->delayed_ids->empty()) oq->delayed_ids.reset();
  }
}

void OwnedQueues::note_locations(std::vector<LocatedMessage> located_messages) {
  for (auto& l : located_messages) {
    if (!l.location.valid()) continue;
    auto* oq = find(l.key);
    // Messages routed once durable (a transaction's, dead-letter copies) may find their queue
    // not made yet: it is made now, as their arrival would (and collected if they never come).
    if (oq == nullptr && starts_with(l.key, kQueuePrefix) && may_open(l.key)) oq = &open(l.key);
    // A subscription's queue is paged only while it is durable (its messages in the store).
    if (oq == nullptr || !oq->stored) continue;
    // Held behind a cold tail until now: it joins the tail and leaves memory.
    if (oq->queue->cold_tail(0) != nullptr && join_cold(*oq, l.id, l.location)) continue;
    if (!oq->locations) oq->locations = std::make_unique<std::unordered_map<model::MessageId, store::Location>>();
    (*oq->locations)[l.id] = l.location;
    pageable_.insert(l.key);
  }
  page_if_over_budget();
}

void OwnedQueues::append_locating(store::Batch batch, Completion done) {
  // Where each message record of a pageable queue lands, so its owner can page it out later.
  // Only once memory is past half the budget (counting this batch): below it nothing will be
  // paged soon, and the messages that arrived then stay in memory (at most half the budget), so
  // a broker far from its budget pays no location map and no extra post per send.
  std::vector<std::pair<std::size_t, LocatedMessage>> wanted;
  if (paging()) {
    std::int64_t bytes = 0;
    for (const auto& r : batch) {
      if (r.kind == store::RecordKind::message && r.message) bytes += static_cast<std::int64_t>(r.message->footprint());
    }
    // With a store that can scan, always: a cold tail may start before any message in memory,
    // and its scan must know each one by location (or hand it out twice); and an ack that names
    // its copy is what a journal without per-message state needs.
    if (shard_.store.can_scan() || shard_.memory->any_cold() ||
        shard_.memory->used() + bytes > static_cast<std::int64_t>(shard_.memory->budget() / 2)) {
      for (std::size_t i = 0; i < batch.size(); ++i) {
        const auto& r = batch[i];
        if (r.kind == store::RecordKind::message && OwnedQueues::pageable_key(r.queue)) {
          wanted.emplace_back(i, LocatedMessage{r.queue, r.message_id, {}});
        }
      }
    }
  }
  if (wanted.empty()) {
    shard_.store.append(std::move(batch), std::move(done));
    return;
  }
  shard_.store.append_located(std::move(batch), [this, wanted = std::move(wanted), done = std::move(done)](
                                                    Status st, std::vector<store::Location> at) mutable {
    // On the store's writer thread: each owner hears of its queues' locations by a post.
    if (st && at.size() > 0) {
      std::vector<std::vector<LocatedMessage>> by_owner(shard_.shard_count());
      for (auto& [i, l] : wanted) {
        if (i >= at.size() || !at[i].valid()) continue;
        l.location = at[i];
        by_owner[shard_.owner_of(l.key).value()].push_back(std::move(l));
      }
      for (std::size_t s = 0; s < by_owner.size(); ++s) {
        if (by_owner[s].empty()) continue;
        shard_.post_to(model::ShardId(static_cast<std::uint32_t>(s)), [located = std::move(by_owner[s])](Broker& b) mutable {
          b.owned_queues().note_locations(std::move(located));
        });
      }
    }
    if (done) done(std::move(st));
  });
}

model::MessagePtr OwnedQueues::spill_if_due(const std::string& key, const OwnedQueue& oq, const model::MessagePtr& m,
                                            store::Batch& records) {
  if (m->stored() || !shard_.options.page_non_persistent || !cold_capable(key, oq)) return m;
  // Disk short ([journal] disk_free_limit_bytes): not written, as with non-persistent traffic
  // that keeps flowing then; it stays in memory (and may pass a cold tail).
  if (shard_.disk != nullptr && shard_.disk->holding()) return m;
  if (!shard_.memory->over_budget() && !oq.queue->holding(m->priority)) return m;
  // A copy per queue: the same message may sit unspilled in other queues (private topic
  // subscriptions, a non-durable shared one).
  auto copy = std::make_shared<model::Message>(*m);
  copy->spilled = true;
  records.push_back(store::Record::added(key, copy));
  ++shard_.counters.spilled;
  return copy;
}

void OwnedQueues::page_if_over_budget() {
  if (!paging() || !shard_.memory->over_budget()) return;
  std::int64_t freed = 0;
  for (auto it = pageable_.begin(); it != pageable_.end();) {
    auto* oq = find(*it);
    if (oq == nullptr || !oq->locations || oq->locations->empty()) {
      it = pageable_.erase(it);
      continue;
    }
    page_queue(*it, *oq, freed);
    if (oq->locations->empty()) {
      it = pageable_.erase(it);
    } else {
      ++it;
    }
    if (!shard_.memory->over_budget(freed)) break;
  }
}

void OwnedQueues::page_queue(const std::string& key, OwnedQueue& oq, std::int64_t& freed) {
  const auto budget = static_cast<std::int64_t>(shard_.memory->budget());
  const auto target = budget / 100 * kHysteresisPercent;
  // A queue with consumers keeps its head for them; one without gives all it can.
  const std::size_t keep = oq.queue->consumer_count() != 0 ? kReadWindow : 0;
  if (cold_capable(key, oq)) {
    // Into the cold tails: nothing of them stays in memory. With consumers, the head a read
    // keeps (half a window plus the window read) stays, so a window read is not let go again.
    auto cold = oq.queue->go_cold(
        keep * 2, [&](const model::Message& m) { return located(oq, m); },
        [&](const model::Message& m) {
          freed += static_cast<std::int64_t>(m.footprint());
          return shard_.memory->used() - freed <= target;
        });
    for (const auto& gone : cold) {
      shard_.account_release(*gone.message);
      if (gone.paged) {
        shard_.account(kPagedEntryBytes);  // its location stays in the map: a scan skips it
      } else {
        forget_location(oq, gone.message->id);
      }
    }
    shard_.counters.paged_out += cold.size();
    track_cold(oq);
    freed = 0;
    return;
  }
  auto gone = oq.queue->page_out(
      keep, [&](const model::Message& m) { return located(oq, m); },
      [&](const model::Message& m) {
        freed += static_cast<std::int64_t>(m.footprint()) - kPagedEntryBytes;
        return shard_.memory->used() - freed <= target;
      });
  for (const auto& m : gone) {
    forget_location(oq, m->id);  // the paged entry carries it now
    shard_.account_release(*m);
    shard_.account(kPagedEntryBytes);
  }
  shard_.counters.paged_out += gone.size();
  // What the walk counted is in the gauge now.
  freed = 0;
}

void OwnedQueues::read_ahead(const std::string& key, OwnedQueue& oq) {
  auto reads = oq.queue->read_ahead(kReadWindow);
  if (reads.empty()) return;
  std::vector<store::ReadItem> items;
  items.reserve(reads.size());
  for (const auto& r : reads) items.push_back(r.item);
  const auto self = shard_.self;
  auto& executor = shard_.executor;
  // Answered on one of the store's threads: back to this shard, never blocking it meanwhile.
  shard_.store.read(key, std::move(items),
                    [this, self, &executor, key, incarnation = oq.incarnation,
                     reads = std::move(reads)](std::vector<Result<MessagePtr>> answers) mutable {
                      executor.post(self, [this, key = std::move(key), incarnation, reads = std::move(reads),
                                           answers = std::move(answers)]() mutable {
                        paged_in(key, incarnation, std::move(reads), std::move(answers));
                      });
                    });
}

void OwnedQueues::paged_in(const std::string& key, std::uint64_t incarnation, std::vector<Queue::PageRead> reads,
                           std::vector<Result<MessagePtr>> answers) {
  auto* oq = find(key);
  // Deleted, or deleted and made again (its seqs start over): the answers are for nobody.
  if (oq == nullptr || oq->incarnation != incarnation) return;
  Queue& q = *oq->queue;
  apply_answers(key, *oq, reads, answers);
  q.read_done();
  dispatch(key, q, oq->stored);
  // What was read back and not taken (a selector refused it) goes out again if memory is short.
  if (paging() && shard_.memory->over_budget() && (oq = find(key)) != nullptr) {
    const auto target = static_cast<std::int64_t>(shard_.memory->budget()) / 100 * kHysteresisPercent;
    std::int64_t freed = 0;
    auto gone = oq->queue->page_out_again(
        // Beyond the head a read-ahead keeps (up to half a window in memory plus the window read):
        // what a consumer will take next is not paged again.
        reads, oq->queue->consumer_count() != 0 ? 2 * kReadWindow : 0,
        [&](const model::Message& m) { return located(*oq, m); },
        [&](const model::Message& m) {
          freed += static_cast<std::int64_t>(m.footprint()) - kPagedEntryBytes;
          return shard_.memory->used() - freed <= target;
        });
    for (const auto& m : gone) {
      forget_location(*oq, m->id);
      shard_.account_release(*m);
      shard_.account(kPagedEntryBytes);
    }
    shard_.counters.paged_out += gone.size();
  }
}

void OwnedQueues::apply_answers(const std::string& key, OwnedQueue& oq, const std::vector<Queue::PageRead>& reads,
                                std::vector<Result<MessagePtr>>& answers) {
  Queue& q = *oq.queue;
  auto& counters = shard_.counters;
  for (std::size_t i = 0; i < reads.size(); ++i) {
    const auto& at = reads[i];
    if (i >= answers.size()) {
      q.unmark_reading(at);
      continue;
    }
    auto& answer = answers[i];
    if (answer) {
      MessagePtr m = std::move(*answer);
      if (!q.page_in(at, m)) continue;  // expired, purged or dropped while being read
      shard_.account_hold(*m);
      shard_.account(-kPagedEntryBytes);
      if (oq.stored) {
        if (!oq.locations) oq.locations = std::make_unique<std::unordered_map<model::MessageId, store::Location>>();
        (*oq.locations)[m->id] = at.item.location;  // so that it can be paged again
        pageable_.insert(key);
      }
      ++counters.paged_in;
      continue;
    }
    switch (answer.error().code) {
      case Errc::shutting_down:
        q.unmark_reading(at);  // the broker is stopping: nothing more will be dispatched
        break;
      case Errc::not_found:
        // Acked or removed since it was paged: nothing to deliver.
        if (q.take_paged(at)) {
          shard_.account(-kPagedEntryBytes);
          ++counters.page_in_missing;
        }
        break;
      default:
        // Corrupt or unreadable: out of dispatch, so the messages behind it still flow; it stays
        // in the store (not acked), and a restart tries it again.
        if (q.take_paged(at)) {
          shard_.account(-kPagedEntryBytes);
          ++counters.page_in_failed;
        }
        break;
    }
  }
}

void OwnedQueues::release_entries(const std::string& key, bool stored, std::vector<Queue::Entry> gone,
                                  store::Batch& batch) {
  auto* oq = find(key);
  for (auto& e : gone) {
    if (e.empty()) continue;
    // Looked up before the location is forgotten: the ack names the copy it removes.
    const auto ref = stored && e.stored() ? stored_ref(oq, e) : store::StoredRef{};
    if (e.is_paged()) {
      shard_.account(-kPagedEntryBytes);
    } else {
      shard_.account_release(*e.message);
      if (oq != nullptr) forget_location(*oq, e.message->id);
    }
    if (stored && e.stored()) batch.push_back(store::Record::acked(key, e.id(), ref));
  }
}

void OwnedQueues::expire(const std::string& key, bool stored, std::vector<Queue::Entry> expired,
                         store::Batch& batch, std::vector<Routed>& moved) {
  if (expired.empty()) return;
  // A `queue:` queue's messages have its destination: its policy says, without reading them.
  // A subscription's have their topic's, known once read.
  std::optional<bool> to_dlq;
  if (starts_with(key, kQueuePrefix)) {
    if (auto d = model::Destination::from_key(key)) to_dlq = shard_.policy_for(*d).expired_to_dlq;
  }
  std::vector<Queue::Entry> unread;
  for (auto& e : expired) {
    if (e.is_paged()) {
      if (to_dlq && !*to_dlq) {
        std::vector<Queue::Entry> one;
        one.push_back(std::move(e));
        release_entries(key, stored, std::move(one), batch);
      } else {
        unread.push_back(std::move(e));
      }
      continue;
    }
    if (shard_.policy_for(e.message->destination).expired_to_dlq) {
      // Its location goes with it: dead_letter() acks the copy it names.
      redelivery_.dead_letter(key, stored, std::move(e), "expired", batch, moved);
    } else {
      release(key, stored, {e.message}, batch);
    }
  }
  if (unread.empty()) return;
  read_back(key, std::move(unread), [this, key, stored](std::vector<Queue::Entry> read) {
    store::Batch records;
    std::vector<Routed> dead;
    expire(key, stored, std::move(read), records, dead);
    redelivery_.finish_dead_letters(std::move(records), std::move(dead));
  });
}

void OwnedQueues::read_back(const std::string& key, std::vector<Queue::Entry> entries,
                            std::function<void(std::vector<Queue::Entry>)> then) {
  std::vector<store::ReadItem> items;
  for (const auto& e : entries) {
    if (e.is_paged()) items.push_back(store::ReadItem{e.paged->summary.id, e.paged->location});
  }
  if (items.empty()) {
    then(std::move(entries));
    return;
  }
  const auto self = shard_.self;
  auto& executor = shard_.executor;
  auto held = std::make_shared<std::vector<Queue::Entry>>(std::move(entries));
  shard_.store.read(key, std::move(items),
                    [this, self, &executor, key, held, then = std::move(then)](std::vector<Result<MessagePtr>> answers) mutable {
                      executor.post(self, [this, key = std::move(key), held, then = std::move(then), answers = std::move(answers)]() mutable {
                        std::vector<Queue::Entry> out;
                        std::size_t next = 0;
                        for (auto& e : *held) {
                          if (!e.is_paged()) {
                            out.push_back(std::move(e));
                            continue;
                          }
                          const std::size_t i = next++;
                          shard_.account(-kPagedEntryBytes);
                          if (i < answers.size() && answers[i] && *answers[i]) {
                            e.message = std::move(*answers[i]);
                            // Its location into the map, so that what settles it acks the copy it names.
                            if (auto* oq = find(key); oq != nullptr && oq->stored) {
                              if (!oq->locations) oq->locations = std::make_unique<std::unordered_map<model::MessageId, store::Location>>();
                              (*oq->locations)[e.message->id] = e.paged->location;
                              pageable_.insert(key);
                            }
                            e.paged.reset();
                            shard_.account_hold(*e.message);
                            ++shard_.counters.paged_in;
                            out.push_back(std::move(e));
                          } else if (i < answers.size() && !answers[i] && answers[i].error().code == Errc::not_found) {
                            ++shard_.counters.page_in_missing;
                          } else {
                            ++shard_.counters.page_in_failed;
                          }
                        }
                        then(std::move(out));
                      });
                    });
}

void OwnedQueues::prune_locations(OwnedQueue& oq) {
  if (!oq.locations) return;
  const std::size_t delayed = oq.delayed_ids ? oq.delayed_ids->size() : 0;
  const std::size_t live = oq.queue->depth() + oq.queue->unacked() + delayed;
  if (oq.locations->size() <= live + kReadWindow * 8) return;
  std::unordered_map<model::MessageId, store::Location> kept;
  // Redeliveries waiting out their delay: a scan must skip them, their ack name their copy.
  if (oq.delayed_ids) {
    for (const auto& id : *oq.delayed_ids) {
      auto it = oq.locations->find(id);
      if (it != oq.locations->end()) kept.emplace(it->first, it->second);
    }
  }
  // Paged entries too: a cold tail's scan skips what the map names.
  oq.queue->for_each([&](const Queue::Entry& e) {
    if (e.empty()) return;
    auto it = oq.locations->find(e.id());
    if (it != oq.locations->end()) kept.emplace(it->first, it->second);
  });
  *oq.locations = std::move(kept);
}

}  // namespace carrier::core
