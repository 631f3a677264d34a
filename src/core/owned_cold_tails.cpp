// OwnedQueues' cold tails (docs/storage.md, "Cold tails"): past [core] memory_budget_bytes, a
// stored queue of a store that can scan lets its lanes' tails go entirely, keeping a count, a
// byte total and a location to scan from; scans read them back a window ahead of the consumers.
// The queue keeps the tails (queue_cold_tail.cpp); this side issues the scans, keeps the
// locations of what is in memory (a scan skips those) and the memory accounting.
#include <algorithm>

#include "core/broker.hpp"
#include "core/owned_queues.hpp"
#include "core/redelivery.hpp"

namespace carrier::core {

using model::MessagePtr;

namespace {
constexpr std::size_t kColdAckScan = 1024;  // messages read per scan of a deleted queue's tail
}  // namespace

void OwnedQueues::track_cold(OwnedQueue& oq) {
  const bool cold = oq.queue->cold_active();
  if (cold == oq.counted_cold || shard_.memory == nullptr) return;
  oq.counted_cold = cold;
  shard_.memory->add_cold_queues(cold ? 1 : -1);
}

bool OwnedQueues::join_cold(OwnedQueue& oq, const model::MessageId& id, store::Location at) {
  Queue& q = *oq.queue;
  for (std::size_t p = 10; p-- > 0;) {
    if (!q.holding(p)) continue;
    if (MessagePtr m = q.join_cold(p, id, at)) {
      shard_.account_release(*m);
      ++shard_.counters.paged_out;
      return true;
    }
  }
  return false;
}

void OwnedQueues::read_cold(const std::string& key, OwnedQueue& oq) {
  auto read = oq.queue->cold_read(kReadWindow, !oq.warm_waiters.empty());
  if (!read) return;
  const auto self = shard_.self;
  auto& executor = shard_.executor;
  // Answered on one of the store's threads: back to this shard.
  shard_.store.scan(key, static_cast<std::uint8_t>(read->lane), read->from, read->max,
                    [this, self, &executor, key, incarnation = oq.incarnation, r = *read](Result<store::ScanResult> a) mutable {
                      executor.post(self, [this, key = std::move(key), incarnation, r, a = std::move(a)]() mutable {
                        cold_in(key, incarnation, r, std::move(a));
                      });
                    });
}

void OwnedQueues::cold_in(const std::string& key, std::uint64_t incarnation, Queue::ColdRead read,
                          Result<store::ScanResult> answer) {
  auto* oq = find(key);
  if (oq == nullptr || oq->incarnation != incarnation) return;
  Queue& q = *oq->queue;
  auto& counters = shard_.counters;
  std::vector<Queue::PageRead> entered;
  if (!answer) {
    if (answer.error().code == Errc::shutting_down) {
      q.cold_unread(read, false);  // the broker is stopping: nothing more will be dispatched
    } else {
      // Corrupt or unreadable: where the tail goes on is lost. Its messages stay in the store
      // and in the depth (a restart reads them again); what is in memory keeps flowing.
      const auto* t = q.cold_tail(read.lane);
      counters.page_in_failed += t != nullptr ? std::max<std::uint64_t>(t->count, 1) : 1;
      q.cold_unread(read, true);
    }
  } else {
    auto got = q.cold_scanned(read, std::move(*answer),
                              [oq](const model::MessageId& id) { return oq->locations && oq->locations->contains(id); },
                              shard_.now_ms());
    for (auto& e : got.entered) {
      shard_.account_hold(*e.message);
      if (!oq->locations) oq->locations = std::make_unique<std::unordered_map<model::MessageId, store::Location>>();
      (*oq->locations)[e.message->id] = e.location;  // so that a later scan skips it, and it can go cold again
      pageable_.insert(key);
      ++counters.paged_in;
      entered.push_back(Queue::PageRead{read.lane, e.seq, store::ReadItem{e.message->id, e.location}});
    }
    // The count was off (messages removed behind the tail's back): corrected, and counted.
    counters.page_in_missing += got.corrected;
    counters.page_in_failed += got.unreadable;
    store::Batch records;
    std::vector<Routed> moved;
    for (std::size_t i = 0; i < got.dropped.size(); ++i) {
      const auto& m = *got.dropped[i];
      if (oq->stored) records.push_back(store::Record::acked(key, m.id, stored_ref_at(got.dropped_at[i], m)));
    }
    for (std::size_t i = 0; i < got.expired.size(); ++i) {
      const auto& m = *got.expired[i].message;
      shard_.account_hold(m);
      // Into the map until expire() settles it, so that its ack names the copy it removes.
      if (!oq->locations) oq->locations = std::make_unique<std::unordered_map<model::MessageId, store::Location>>();
      (*oq->locations)[m.id] = got.expired_at[i];
      pageable_.insert(key);
    }
    expire(key, oq->stored, std::move(got.expired), records, moved);
    redelivery_.finish_dead_letters(std::move(records), std::move(moved));
  }
  if ((oq = find(key)) == nullptr || oq->incarnation != incarnation) return;
  dispatch(key, *oq->queue, oq->stored);
  if ((oq = find(key)) == nullptr || oq->incarnation != incarnation) return;
  repage_refused(*oq, entered);
  track_cold(*oq);
  if ((oq = find(key)) == nullptr || oq->incarnation != incarnation) return;
  if (!oq->warm_waiters.empty() && !oq->queue->cold_reading()) {
    if (oq->queue->cold_active()) {
      read_cold(key, *oq);
    } else {
      auto waiters = std::move(oq->warm_waiters);
      oq->warm_waiters.clear();
      for (auto& w : waiters) w();
      return;
    }
  }
  collect_if_empty(key);
}

void OwnedQueues::repage_refused(OwnedQueue& oq, const std::vector<Queue::PageRead>& entered) {
  // What was read and not taken (a selector refused it) would go cold again and be read again
  // by the next scan, over and over: past the budget it is paged instead (a paged entry each,
  // which dispatch does not offer again to the selectors that refused it). Its location stays in
  // the map, so that a scan skips it.
  if (entered.empty() || !paging() || !shard_.memory->over_budget()) return;
  const auto target = static_cast<std::int64_t>(shard_.memory->budget()) / 100 * 90;
  std::int64_t freed = 0;
  auto gone = oq.queue->page_out_again(
      entered, oq.queue->consumer_count() != 0 ? 2 * kReadWindow : 0,
      [&](const model::Message& m) { return located(oq, m); },
      [&](const model::Message& m) {
        freed += static_cast<std::int64_t>(m.footprint()) - kPagedEntryBytes;
        return shard_.memory->used() - freed <= target;
      });
  for (const auto& m : gone) {
    shard_.account_release(*m);
    shard_.account(kPagedEntryBytes);
  }
  shard_.counters.paged_out += gone.size();
}

void OwnedQueues::ack_cold(const std::string& key, std::vector<Queue::ColdCut> cuts) {
  if (cuts.empty()) return;
  ack_cold_step(key, std::move(cuts), 0);
}

void OwnedQueues::ack_cold_step(std::string key, std::vector<Queue::ColdCut> cuts, std::uint64_t acked) {
  while (!cuts.empty() && (cuts.back().count == 0)) cuts.pop_back();
  if (cuts.empty()) return;
  const Queue::ColdCut cut = cuts.back();
  const auto self = shard_.self;
  auto& executor = shard_.executor;
  shard_.store.scan(key, static_cast<std::uint8_t>(cut.lane), cut.from, std::min<std::uint64_t>(cut.count, kColdAckScan),
                    [this, self, &executor, key, cuts = std::move(cuts), acked](Result<store::ScanResult> a) mutable {
                      executor.post(self, [this, key = std::move(key), cuts = std::move(cuts), acked, a = std::move(a)]() mutable {
                        if (!a) return;  // closing, or unreadable: what is left stays for a restart
                        auto& cut = cuts.back();
                        // A queue made again under the key meanwhile keeps what it holds in memory.
                        auto* oq = find(key);
                        store::Batch batch;
                        for (const auto& sm : a->messages) {
                          if (!sm.message || cut.count == 0) break;
                          if (oq != nullptr && oq->locations && oq->locations->contains(sm.message->id)) continue;
                          batch.push_back(store::Record::acked(key, sm.message->id, stored_ref_at(sm.location, *sm.message)));
                          --cut.count;
                        }
                        acked += batch.size();
                        cut.from = a->next;
                        if (a->exhausted) cut.count = 0;
                        if (!batch.empty()) shard_.store.append(std::move(batch), [](Status) {});
                        ack_cold_step(std::move(key), std::move(cuts), acked);
                      });
                    });
}

}  // namespace carrier::core
