// The Broker's hot path on one shard: send → route → enqueue → dispatch → deliver → ack, for a
// queue and for a topic with plain subscribers. Measures the core alone (no sockets, no store
// writes: non-persistent messages), so a change in how the Broker is put together shows here.

#include <benchmark/benchmark.h>

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/broker.hpp"

namespace {

using namespace carrier;
using namespace carrier::core;
using namespace carrier::model;

// One shard on the benchmark's thread: posts queue up and run when drained.
class LoopExecutor : public Executor {
 public:
  std::size_t shard_count() const override { return 1; }
  void post(ShardId, std::function<void()> fn) override { tasks_.push_back(std::move(fn)); }
  void post_after(ShardId, std::uint64_t, std::function<void()>) override {}
  std::optional<ShardId> current() const override { return ShardId(0); }
  void drain() {
    while (!tasks_.empty()) {
      auto fn = std::move(tasks_.front());
      tasks_.pop_front();
      fn();
    }
  }

 private:
  std::deque<std::function<void()>> tasks_;
};

class NullStore : public store::Store {
 public:
  Status open() override { return ok(); }
  Status recover(const std::function<void(store::RecoveredMessage)>&) override { return ok(); }
  void start() override {}
  void append(store::Batch, store::DurableCallback cb) override { cb(ok()); }
  void close() override {}
};

struct Tags : Consumer {
  std::vector<std::uint64_t> tags;
  void deliver(ConsumerId, std::vector<Delivery> batch) override {
    for (const auto& d : batch) tags.push_back(d.tag);
  }
};

MessagePtr make_message(Destination d) {
  auto m = std::make_shared<Message>();
  m->destination = std::move(d);
  m->body = std::make_shared<const std::string>(std::string(64, 'x'));
  return m;
}

// state.range(0): consumers (queue: competing; topic: each its own subscription).
void run(benchmark::State& state, DestinationKind kind) {
  LoopExecutor ex;
  NullStore store;
  MemoryGauge memory;
  Broker broker(ShardId(0), ex, store, Options{}, {}, &memory);
  broker.set_peers({&broker});
  const Destination d{kind, "bench"};
  std::vector<std::pair<ConsumerId, std::shared_ptr<Tags>>> consumers;
  for (std::int64_t i = 0; i < state.range(0); ++i) {
    auto c = std::make_shared<Tags>();
    auto id = broker.subscribe({d, AckMode::client_individual, 0, c}, nullptr);
    consumers.emplace_back(*id, c);
  }
  ex.drain();
  for (auto _ : state) {
    broker.send({make_message(d)}, nullptr);
    ex.drain();
    for (auto& [id, c] : consumers) {
      if (c->tags.empty()) continue;
      broker.ack(id, std::move(c->tags), nullptr);
      c->tags.clear();
    }
    ex.drain();
  }
  state.SetItemsProcessed(state.iterations());
}

// auto_ack: the session acks once the delivery is written, so the core holds it until then.
struct Counter : Consumer {
  ConsumerId id;
  std::uint64_t delivered = 0;
  std::vector<std::uint64_t> written;
  void deliver(ConsumerId, std::vector<Delivery> batch) override {
    delivered += batch.size();
    for (const auto& d : batch) written.push_back(d.tag);
  }
};

// Topic fan-out in the core alone: state.range(0) plain auto-ack subscribers, a batch of
// state.range(1) messages per send (what one read of a publisher's socket hands over). The cost
// per delivery against the subscriber count is what `carrier bench fanout` measures end to
// end; here without sockets, codecs or a second shard.
void BM_TopicFanOut(benchmark::State& state) {
  LoopExecutor ex;
  NullStore store;
  MemoryGauge memory;
  Broker broker(ShardId(0), ex, store, Options{}, {}, &memory);
  broker.set_peers({&broker});
  const Destination d{DestinationKind::topic, "bench.fanout"};
  std::vector<std::shared_ptr<Counter>> subscribers;
  for (std::int64_t i = 0; i < state.range(0); ++i) {
    subscribers.push_back(std::make_shared<Counter>());
    subscribers.back()->id = *broker.subscribe({d, AckMode::auto_ack, 0, subscribers.back()}, nullptr);
  }
  ex.drain();
  std::uint64_t deliveries = 0;
  for (auto _ : state) {
    std::vector<MessagePtr> batch;
    for (std::int64_t i = 0; i < state.range(1); ++i) batch.push_back(make_message(d));
    broker.send(std::move(batch), nullptr);
    ex.drain();
    for (auto& s : subscribers) {
      if (s->written.empty()) continue;
      broker.ack(s->id, std::move(s->written), nullptr);
      s->written.clear();
    }
    ex.drain();
    deliveries += static_cast<std::uint64_t>(state.range(0) * state.range(1));
  }
  std::uint64_t got = 0;
  for (const auto& s : subscribers) got += s->delivered;
  if (got != deliveries) state.SkipWithError("a delivery went missing");
  state.SetItemsProcessed(static_cast<std::int64_t>(deliveries));
  state.counters["ns_per_delivery"] = benchmark::Counter(
      static_cast<double>(deliveries), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_QueueSendDispatchAck(benchmark::State& state) { run(state, DestinationKind::queue); }
void BM_TopicSendDispatchAck(benchmark::State& state) { run(state, DestinationKind::topic); }

}  // namespace

BENCHMARK(BM_QueueSendDispatchAck)->Arg(1)->Arg(4);
BENCHMARK(BM_TopicSendDispatchAck)->Arg(1)->Arg(4);
BENCHMARK(BM_TopicFanOut)
    ->Args({4, 64})
    ->Args({100, 64})
    ->Args({1000, 64})
    ->Args({10000, 64})
    ->Args({10000, 1})
    ->Unit(benchmark::kMillisecond);
