// Queue dispatch with selective consumers: what one send costs when a consumer's selector
// matches none of the backlog (the broker dispatches after every send). Before each consumer
// remembered what it had refused, every send re-evaluated the whole backlog.

#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "core/queue.hpp"
#include "model/message.hpp"
#include "selector/selector.hpp"

namespace {

using namespace carrier;
using namespace carrier::core;
using namespace carrier::model;

MessagePtr make_message(std::uint64_t n) {
  auto m = std::make_shared<Message>();
  m->id = MessageId{1, n};
  m->destination = {DestinationKind::queue, "q"};
  m->properties = {{"region", "us"}, {"n", std::to_string(n)}};
  m->body = std::make_shared<const std::string>("x");
  return m;
}

// state.range(0): the backlog nobody matches. Each iteration: one send and its dispatch.
void BM_SendWithUnmatchedBacklog(benchmark::State& state) {
  Queue q("queue:q");
  ConsumerRef consumer{ConsumerId(1), ShardId(0), nullptr, AckMode::client_individual, 100};
  consumer.selector = *selector::parse("region = 'eu'");
  q.add_consumer(consumer);
  const auto backlog = static_cast<std::uint64_t>(state.range(0));
  std::vector<Queue::Entry> expired;
  for (std::uint64_t i = 0; i < backlog; ++i) q.enqueue(make_message(i));
  (void)q.dispatch(0, expired);
  std::uint64_t n = backlog;
  for (auto _ : state) {
    q.enqueue(make_message(n++));
    auto out = q.dispatch(0, expired);
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations());
}

}  // namespace

BENCHMARK(BM_SendWithUnmatchedBacklog)->Arg(1000)->Arg(100000)->Unit(benchmark::kMicrosecond);
