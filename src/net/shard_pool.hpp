#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "core/executor.hpp"
#include "net/asio.hpp"

namespace carrier::net {

class Connection;

// N shards, each one thread running one io_context (concurrency hint 1). Everything a shard owns
// is touched only by its thread; other threads reach it with post().
// Runs on: constructed, started and joined by the main thread; post() from any thread.
class ShardPool : public core::Executor {
 public:
  explicit ShardPool(std::size_t shards);
  ~ShardPool() override;

  std::size_t shard_count() const override { return shards_.size(); }
  void post(model::ShardId shard, std::function<void()> fn) override;
  void post_after(model::ShardId shard, std::uint64_t delay_ms, std::function<void()> fn) override;
  std::optional<model::ShardId> current() const override;

  asio::io_context& context(model::ShardId shard) { return shards_[shard.value()]->context; }

  void start();
  // Lets each shard's loop end once it has no more work, then joins the threads.
  void stop();
  // Stops the loops at once (after stop() timed out, or in tests).
  void force_stop();

 private:
  struct Shard {
    explicit Shard(model::ShardId id) : id(id), context(1), work(asio::make_work_guard(context)) {}
    model::ShardId id;
    asio::io_context context;
    asio::executor_work_guard<asio::io_context::executor_type> work;
    std::thread thread;
  };
  std::vector<std::unique_ptr<Shard>> shards_;
};

}  // namespace carrier::net
