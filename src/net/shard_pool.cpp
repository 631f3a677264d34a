#include "net/shard_pool.hpp"

#include <algorithm>

#include "base/logging.hpp"

namespace carrier::net {

namespace {
thread_local std::optional<model::ShardId> t_current_shard;
}  // namespace

ShardPool::ShardPool(std::size_t shards) {
  if (shards == 0) shards = 1;
  for (std::size_t i = 0; i < shards; ++i) {
    shards_.push_back(std::make_unique<Shard>(model::ShardId(static_cast<std::uint32_t>(i))));
  }
}

ShardPool::~ShardPool() { force_stop(); }

void ShardPool::post(model::ShardId shard, std::function<void()> fn) {
  asio::post(shards_[shard.value()]->context, std::move(fn));
}

void ShardPool::post_after(model::ShardId shard, std::uint64_t delay_ms, std::function<void()> fn) {
  // The timer counts nanoseconds in 64 bits (292 years): a longer delay would overflow it.
  // 2^42 ms (139 years) is past any interval a client can ask for (MQTT's are 32-bit seconds).
  constexpr std::uint64_t kMaxDelayMs = std::uint64_t{1} << 42;
  delay_ms = std::min(delay_ms, kMaxDelayMs);
  auto timer = std::make_shared<asio::steady_timer>(shards_[shard.value()]->context,
                                                    std::chrono::milliseconds(static_cast<std::int64_t>(delay_ms)));
  timer->async_wait([timer, fn = std::move(fn)](const boost::system::error_code& ec) {
    if (!ec) fn();
  });
}

std::optional<model::ShardId> ShardPool::current() const { return t_current_shard; }

void ShardPool::start() {
  for (auto& shard : shards_) {
    Shard* s = shard.get();
    s->thread = std::thread([s] {
      t_current_shard = s->id;
      for (;;) {
        try {
          s->context.run();
          break;
        } catch (const std::exception& e) {
          // A handler threw: log it and keep the shard alive for everyone else on it.
          logging::get("net")->error("shard {}: unhandled exception: {}", s->id.value(), e.what());
        }
      }
      t_current_shard.reset();
    });
  }
}

void ShardPool::stop() {
  for (auto& s : shards_) s->work.reset();
  for (auto& s : shards_) {
    if (s->thread.joinable()) s->thread.join();
  }
}

void ShardPool::force_stop() {
  for (auto& s : shards_) {
    s->work.reset();
    s->context.stop();
  }
  for (auto& s : shards_) {
    if (s->thread.joinable()) s->thread.join();
  }
}

}  // namespace carrier::net
