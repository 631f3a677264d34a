#pragma once

#include <thread>
#include <vector>

#include "store/commit_queue.hpp"
#include "store/store.hpp"

namespace carrier::store::memory {

// No durability: for tests and non-persistent deployments. It keeps nothing (the broker holds
// every message in memory anyway) and recovers nothing; it only honours the Store contract,
// so the core cannot tell it from a durable backend except by speed.
//
// Threads: append() from any shard queues the callback; one thread of its own runs the
// callbacks in append order, like the log store's writer. Running them inline would be
// simpler but would break the ordering contract for concurrent appenders (two shards could
// see their callbacks swapped) and run the callback on the appending shard's stack, where a
// caller holding its own lock could deadlock on re-entry.
class MemoryStore final : public Store {
 public:
  MemoryStore() = default;
  ~MemoryStore() override;

  Status open() override;
  Status recover(const std::function<void(RecoveredMessage)>& visit) override;
  void start() override;
  void append(Batch batch, DurableCallback on_durable) override;
  void close() override;

 private:
  void run();

  CommitQueue<DurableCallback> queue_;
  std::thread thread_;
  bool closed_ = false;
};

}  // namespace carrier::store::memory
