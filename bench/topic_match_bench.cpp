// Topic matching: one published name against 10^5 subscriptions in core::DestinationTree (the
// per-shard replica every topic SEND is matched against), for exact filters, one-level `*`
// wildcards and `>` tails, and adding filters.

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "core/destination_tree.hpp"

namespace {

using carrier::core::ConsumerId;
using carrier::core::DestinationTree;
using carrier::model::ShardId;
using carrier::core::TopicSubscriber;

constexpr int kSubscriptions = 100'000;

// "prices.r<region>.SYM<symbol>", appended piecewise (g++ 12 warns falsely on chains of
// std::string operator+ under -O3, -Wrestrict).
std::string topic(int region, int symbol) {
  std::string name = "prices.r";
  name += std::to_string(region);
  name += ".SYM";
  name += std::to_string(symbol);
  return name;
}

TopicSubscriber subscriber(int i) {
  return TopicSubscriber{ConsumerId(static_cast<std::uint64_t>(i + 1)), ShardId(static_cast<std::uint32_t>(i % 2)), {},
                         false, nullptr, 0};
}

// 10^5 subscriptions in the shape of a market-data fan-out: 1000 symbols x 100 regions exact,
// then (with `wildcards`) every hundredth replaced by `prices.*.SYM` or `prices.REGION.>`.
DestinationTree& tree(bool wildcards) {
  static DestinationTree exact_tree, wildcard_tree;
  DestinationTree& t = wildcards ? wildcard_tree : exact_tree;
  if (t.size() > 0) return t;
  for (int i = 0; i < kSubscriptions; ++i) {
    std::string filter = topic(i % 100, i / 100);
    if (wildcards && i % 100 == 1) filter = "prices.*.SYM" + std::to_string(i / 100);
    if (wildcards && i % 100 == 2) filter = "prices.r2.>";
    t.add(filter, subscriber(i));
  }
  return t;
}

void BM_MatchOne(benchmark::State& state) {
  const DestinationTree& t = tree(state.range(0) != 0);
  std::vector<TopicSubscriber> out;
  std::size_t matched = 0;
  int i = 0;
  for (auto _ : state) {
    out.clear();
    t.match(topic(i % 100, (i * 7) % 1000), out);
    matched += out.size();
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["subscribers_per_match"] =
      benchmark::Counter(static_cast<double>(matched) / static_cast<double>(state.iterations()));
}
BENCHMARK(BM_MatchOne)->Arg(0)->Arg(1)->ArgName("wildcards");

void BM_MatchNone(benchmark::State& state) {
  const DestinationTree& t = tree(true);
  std::vector<TopicSubscriber> out;
  for (auto _ : state) {
    out.clear();
    t.match("orders.eu.new", out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MatchNone);

void BM_Add100k(benchmark::State& state) {
  for (auto _ : state) {
    DestinationTree t;
    for (int i = 0; i < kSubscriptions; ++i) {
      t.add(topic(i % 100, i / 100), subscriber(i));
    }
    benchmark::DoNotOptimize(t.size());
  }
  state.SetItemsProcessed(state.iterations() * kSubscriptions);
}
BENCHMARK(BM_Add100k)->Unit(benchmark::kMillisecond);

}  // namespace
