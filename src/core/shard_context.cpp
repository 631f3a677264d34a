#include "core/shard_context.hpp"

#include <algorithm>
#include <chrono>

#include "core/broker.hpp"

namespace carrier::core {

using model::ShardId;

namespace {

std::int64_t system_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Counts a broadcast's completions on the home shard; the last one reports.
struct Countdown {
  std::size_t remaining;
  Completion done;
};

}  // namespace

ShardContext::ShardContext(ShardId self_id, Executor& ex, store::Store& st, Options opts, Clock clk,
                           MemoryGauge* gauge)
    : self(self_id),
      executor(ex),
      store(st),
      options(std::move(opts)),
      clock(clk ? std::move(clk) : Clock(system_now_ms)),
      memory(gauge),
      policies(nullptr),
      configured_queues(options.queues.begin(), options.queues.end()),
      ids(static_cast<std::uint64_t>(system_now_ms()) * 1000003ULL + self_id.value()),
      random(static_cast<std::uint64_t>(system_now_ms()) ^ (self_id.value() * 0x9e3779b97f4a7c15ULL)) {
  replace_policies(options.policies);
}

void ShardContext::complete_on(ShardId shard, Completion done, Status status) {
  if (!done) return;
  if (executor.current() == shard) {
    done(std::move(status));
    return;
  }
  executor.post(shard, [done = std::move(done), status = std::move(status)]() mutable { done(std::move(status)); });
}

void ShardContext::post_to(ShardId shard, std::function<void(Broker&)> fn) {
  Broker* peer = peers[shard.value()];
  executor.post(shard, [peer, fn = std::move(fn)]() { fn(*peer); });
}

void ShardContext::broadcast(std::function<void(Broker&)> fn, Completion done) {
  auto count = std::make_shared<Countdown>(Countdown{peers.size(), std::move(done)});
  const ShardId home = self;
  Executor* ex = &executor;
  for (auto* peer : peers) {
    auto step = [peer, fn, count, home, ex]() {
      fn(*peer);
      // Counted on the home shard only: the countdown is not shared across threads.
      auto finish = [count]() {
        if (--count->remaining == 0 && count->done) count->done(ok());
      };
      if (peer->shard() == home) {
        finish();
      } else {
        ex->post(home, finish);
      }
    };
    if (peer->shard() == self) {
      step();
    } else {
      executor.post(peer->shard(), step);
    }
  }
}

void ShardContext::at(std::int64_t due_ms, Schedule::Task task) {
  schedule_.add(due_ms, std::move(task));
  if (due_ms < armed_due_) arm();
}

void ShardContext::arm() {
  if (schedule_.empty()) return;
  // A wake-up far ahead (a schedule a year away) is taken in steps of at most an hour: a timer
  // counts nanoseconds in 64 bits, and a stored time may be anything. on_wake arms the next step.
  constexpr std::uint64_t kMaxWakeMs = 3'600'000;
  const auto now = now_ms();
  const auto due = schedule_.next_due();
  const std::uint64_t ahead = due <= now ? 0 : static_cast<std::uint64_t>(due) - static_cast<std::uint64_t>(now);
  const auto delay = static_cast<std::int64_t>(std::min(ahead, kMaxWakeMs));
  armed_due_ = now + delay;
  executor.post_after(self, static_cast<std::uint64_t>(delay), [this]() { on_wake(); });
}

void ShardContext::on_wake() {
  armed_due_ = INT64_MAX;
  schedule_.run_due(now_ms());
  if (!schedule_.empty() && schedule_.next_due() < armed_due_) arm();
}

}  // namespace carrier::core
