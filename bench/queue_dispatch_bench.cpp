// Queue dispatch with selective consumers: what one send costs when a consumer's selector
// matches none of the backlog (the broker dispatches after every send), and what 10,000 matching
// messages cost behind a million refused ones. Before each consumer remembered what it had
// refused, every send re-evaluated the whole backlog.

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

MessagePtr make_tagged(std::uint64_t n, const char* region) {
  auto m = std::make_shared<Message>();
  m->id = MessageId{1, n};
  m->destination = {DestinationKind::queue, "q"};
  m->properties = {{"region", region}};
  m->body = std::make_shared<const std::string>("x");
  return m;
}

// Issue 17's selector target: 10,000 matching messages through a consumer whose selector refuses
// a backlog of state.range(0) messages queued ahead of them, against the same with no backlog
// (within 2x). state.range(1) = 0: the matching messages arrive one at a time while the consumer
// keeps up (send, dispatch, ack); 1: all 10,000 are queued behind the backlog first, then drained
// with a prefetch of 100 (each ack's dispatch must find the next matching one past the backlog).
// The backlog is built and refused once, outside the timing; one iteration is 10,000 messages.
void BM_MatchingFlowBehindUnmatchedBacklog(benchmark::State& state) {
  constexpr std::uint64_t kMatching = 10000;
  Queue q("queue:q");
  ConsumerRef consumer{ConsumerId(1), ShardId(0), nullptr, AckMode::client_individual, 100};
  consumer.selector = *selector::parse("region = 'eu'");
  q.add_consumer(consumer);
  std::vector<Queue::Entry> expired;
  // One message object for the whole backlog: the queue holds a reference per entry, as it does
  // for a topic's fan-out, so a million entries fit a small machine.
  const auto unmatched = make_tagged(0, "us");
  const auto backlog = static_cast<std::uint64_t>(state.range(0));
  for (std::uint64_t i = 0; i < backlog; ++i) q.enqueue(unmatched);
  (void)q.dispatch(0, expired);
  const bool queued_first = state.range(1) != 0;
  std::vector<MessagePtr> matching;
  for (std::uint64_t i = 0; i < kMatching; ++i) matching.push_back(make_tagged(i + 1, "eu"));
  std::vector<std::uint64_t> tags;
  std::uint64_t delivered = 0;
  const auto dispatch_and_ack = [&] {
    for (auto& d : q.dispatch(0, expired)) {
      tags.clear();
      for (const auto& one : d.batch) tags.push_back(one.tag);
      delivered += tags.size();
      (void)q.ack(ConsumerId(1), tags);
    }
  };
  for (auto _ : state) {
    const auto before = delivered;
    if (queued_first) {
      for (const auto& m : matching) q.enqueue(m);
      while (delivered - before < kMatching) dispatch_and_ack();
    } else {
      for (const auto& m : matching) {
        q.enqueue(m);
        dispatch_and_ack();
      }
    }
    if (delivered - before != kMatching || q.depth() != backlog) state.SkipWithError("a matching message was lost");
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kMatching));
  state.counters["backlog"] = static_cast<double>(backlog);
}

}  // namespace

BENCHMARK(BM_SendWithUnmatchedBacklog)->Arg(1000)->Arg(100000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MatchingFlowBehindUnmatchedBacklog)
    ->ArgsProduct({{0, 1000000}, {0, 1}})
    ->ArgNames({"backlog", "queued"})
    ->Unit(benchmark::kMillisecond);
