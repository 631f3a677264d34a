#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include "model/shard_id.hpp"

namespace carrier::core {

// How core crosses shards without knowing about threads or Asio: a posted function runs later
// on the named shard's thread, in the order posted from any one thread. net::ShardPool implements
// it for the broker; tests implement it with a plain queue.
class Executor {
 public:
  virtual ~Executor() = default;
  virtual std::size_t shard_count() const = 0;
  virtual void post(model::ShardId shard, std::function<void()> fn) = 0;
  // Runs `fn` on `shard` once `delay_ms` has passed. The Broker keeps one such wake-up per shard
  // for its whole schedule, so this is not called per message.
  virtual void post_after(model::ShardId shard, std::uint64_t delay_ms, std::function<void()> fn) = 0;
  // The shard whose thread is calling, or nullopt on any other thread (the store's writer).
  virtual std::optional<model::ShardId> current() const = 0;
};

}  // namespace carrier::core
