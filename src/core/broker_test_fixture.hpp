#pragma once

// What the Broker's tests share: several shards on one thread (FakeExecutor), a store whose
// batches complete when the test says (FakeStore), a consumer that records deliveries
// (Collector), and the fixture that wires three Brokers together.

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <tuple>

#include "core/broker.hpp"

namespace carrier::core::broker_testing {

// The model's types by their short names, for the tests over this fixture.
using model::Destination;
using model::DestinationKind;
using model::Message;
using model::MessageId;
using model::MessagePtr;
using model::ShardId;

// Several shards on one test thread: posted functions queue up and run in order when drained.
class FakeExecutor : public Executor {
 public:
  explicit FakeExecutor(std::size_t n) : n_(n) {}
  std::size_t shard_count() const override { return n_; }
  void post(model::ShardId shard, std::function<void()> fn) override { tasks_.emplace_back(shard, std::move(fn)); }
  void post_after(model::ShardId shard, std::uint64_t delay_ms, std::function<void()> fn) override {
    timers_.emplace_back(delay_ms, shard, std::move(fn));
  }
  // Fires every pending timer (time is the test's to move).
  void fire_timers() {
    auto timers = std::move(timers_);
    timers_.clear();
    for (auto& [delay, shard, fn] : timers) on(shard, fn);
    drain();
  }
  std::optional<model::ShardId> current() const override { return current_; }
  std::vector<std::uint64_t> timer_delays() const {
    std::vector<std::uint64_t> out;
    for (const auto& [delay, shard, fn] : timers_) out.push_back(delay);
    return out;
  }

  void on(model::ShardId shard, const std::function<void()>& fn) {
    auto prev = current_;
    current_ = shard;
    fn();
    current_ = prev;
  }
  void drain() {
    while (!tasks_.empty()) {
      auto [shard, fn] = std::move(tasks_.front());
      tasks_.pop_front();
      on(shard, fn);
    }
  }
  void set_current(std::optional<model::ShardId> s) { current_ = s; }

 private:
  std::size_t n_;
  std::deque<std::pair<model::ShardId, std::function<void()>>> tasks_;
  std::vector<std::tuple<std::uint64_t, model::ShardId, std::function<void()>>> timers_;
  std::optional<model::ShardId> current_;
};

// Completes batches only when told, on "no shard" (like the store's writer thread).
class FakeStore : public store::Store {
 public:
  explicit FakeStore(FakeExecutor& ex) : ex_(ex) {}
  Status open() override { return ok(); }
  Status recover(const std::function<void(store::RecoveredMessage)>&) override { return ok(); }
  void start() override {}
  void append(store::Batch batch, store::DurableCallback cb) override {
    for (auto& r : batch) records.push_back(r);
    pending_.emplace_back(std::move(cb));
  }
  void close() override {}
  void complete_all(Status st = ok()) {
    auto prev = ex_.current();
    ex_.set_current(std::nullopt);
    auto pending = std::move(pending_);
    pending_.clear();
    for (auto& cb : pending) cb(st);
    ex_.set_current(prev);
  }
  std::vector<store::Record> records;

 private:
  FakeExecutor& ex_;
  std::vector<store::DurableCallback> pending_;
};

struct Collector : Consumer {
  std::vector<Delivery> got;
  void deliver(ConsumerId, std::vector<Delivery> batch) override {
    for (auto& d : batch) got.push_back(std::move(d));
  }
  std::vector<std::string> bodies() const {
    std::vector<std::string> out;
    for (const auto& d : got) out.push_back(*d.message->body);
    return out;
  }
};

class BrokerTest : public ::testing::Test {
 protected:
  static constexpr std::size_t kShards = 3;
  BrokerTest() : ex_(kShards), store_(ex_) { build(Options{}); }

  void build(Options options, MemoryGauge* memory = nullptr) {
    brokers_.clear();
    for (std::size_t i = 0; i < kShards; ++i) {
      brokers_.push_back(std::make_unique<Broker>(model::ShardId(static_cast<std::uint32_t>(i)), ex_, store_, options,
                                                  [this] { return now_; }, memory != nullptr ? memory : &memory_));
    }
    std::vector<Broker*> peers;
    for (auto& b : brokers_) peers.push_back(b.get());
    for (auto& b : brokers_) b->set_peers(peers);
  }

  // Moves the clock and runs whatever became due.
  void advance(std::int64_t ms) {
    now_ += ms;
    ex_.fire_timers();
  }

  std::int64_t now_ = 1'000'000;

  model::MessagePtr make(std::string body, model::Destination d, bool persistent = false) {
    auto m = std::make_shared<model::Message>();
    m->id = brokers_[0]->next_message_id();
    m->destination = std::move(d);
    m->persistent = persistent;
    m->body = std::make_shared<const std::string>(std::move(body));
    return m;
  }

  // Runs `fn` as a session on `shard` would, then lets every posted function run.
  void on(std::uint32_t shard, const std::function<void(Broker&)>& fn) {
    ex_.on(model::ShardId(shard), [&] { fn(*brokers_[shard]); });
    ex_.drain();
  }

  std::size_t total_queues() const {
    std::size_t n = 0;
    for (const auto& b : brokers_) n += b->stats().queues;
    return n;
  }

  FakeExecutor ex_;
  FakeStore store_;
  MemoryGauge memory_;
  std::vector<std::unique_ptr<Broker>> brokers_;
};

inline const model::Destination kQueue{model::DestinationKind::queue, "orders"};
inline const model::Destination kTopic{model::DestinationKind::topic, "news"};

}  // namespace carrier::core::broker_testing
