#include "admin/snapshot_cache.hpp"

#include <utility>

namespace carrier::admin {

Snapshot make_snapshot(std::vector<ShardSnapshot> shards, SnapshotScope scope) {
  Snapshot s{merge(std::move(shards)), {}};
  // The destination list needs the rows; the store keys stay for /metrics-style readers.
  if (scope.queues) s.destinations = destination_rows(s.merged.queues);
  return s;
}

void SnapshotCache::get(core::Broker& here, SnapshotScope scope, Done done) {
  if (max_age_.count() == 0) {
    // Nothing shared: the snapshot is taken after this call, so a client that sent a message
    // and then asks sees it (a collect already under way may have read a shard before).
    {
      std::lock_guard lock(mutex_);
      ++collects_;
    }
    collect(here, scope, [scope, done = std::move(done)](std::vector<ShardSnapshot> shards) {
      done(std::make_shared<const Snapshot>(make_snapshot(std::move(shards), scope)));
    });
    return;
  }
  const std::size_t slot = index(scope);
  std::shared_ptr<Round> round;
  std::uint64_t generation = 0;
  {
    std::unique_lock lock(mutex_);
    // Any fresh snapshot that holds at least what is asked serves (a destinations snapshot
    // answers an overview too).
    const auto now = Clock::now();
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      const Slot& s = slots_[i];
      if ((i & slot) != slot || !s.snapshot || now - s.taken >= max_age_) continue;
      auto snapshot = s.snapshot;
      lock.unlock();
      done(std::move(snapshot));
      return;
    }
    Slot& s = slots_[slot];
    if (s.round) {
      s.round->waiters.push_back(Waiter{&here.context(), std::move(done)});
      return;  // answered when the collect under way completes
    }
    s.round = round = std::make_shared<Round>();
    round->waiters.push_back(Waiter{&here.context(), std::move(done)});
    generation = generation_;
    ++collects_;
  }
  core::ShardContext* home = &here.context();
  collect(here, scope, [this, slot, scope, home, generation, round](std::vector<ShardSnapshot> shards) {
    auto snapshot = std::make_shared<const Snapshot>(make_snapshot(std::move(shards), scope));
    {
      std::lock_guard lock(mutex_);
      Slot& s = slots_[slot];
      if (s.round == round) s.round.reset();
      if (generation == generation_) {
        s.snapshot = snapshot;
        s.taken = Clock::now();
      }
    }
    finish(round, std::move(snapshot), home);
  });
}

void SnapshotCache::finish(std::shared_ptr<Round> round, std::shared_ptr<const Snapshot> snapshot,
                           core::ShardContext* here) {
  std::vector<Waiter> waiters;
  {
    std::lock_guard lock(mutex_);
    waiters.swap(round->waiters);  // no one joins a round once it is out of its slot
  }
  for (auto& w : waiters) {
    if (w.context == here) {
      w.done(snapshot);
    } else {
      here->post_to(w.context->self, [done = std::move(w.done), snapshot](core::Broker&) { done(snapshot); });
    }
  }
}

void SnapshotCache::invalidate() {
  std::lock_guard lock(mutex_);
  ++generation_;
  // A collect under way may have read a shard before the change: later callers start anew
  // (its own callers still get it).
  for (auto& s : slots_) {
    s.snapshot.reset();
    s.round.reset();
  }
}

std::uint64_t SnapshotCache::collects() const {
  std::lock_guard lock(mutex_);
  return collects_;
}

}  // namespace carrier::admin
