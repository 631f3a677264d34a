// The federation dedup window on a receiving node: one insert per message pushed over a link, in
// a window already full (every insert forgets the oldest), ids as the broker makes them.

#include <benchmark/benchmark.h>

#include <vector>

#include "federation/dedup_window.hpp"
#include "model/message_id.hpp"

namespace {

using namespace carrier;

void BM_PushIntoFullWindow(benchmark::State& state) {
  const auto capacity = static_cast<std::size_t>(state.range(0));
  model::MessageIdGenerator ids(42);
  federation::DedupWindow window(capacity);
  for (std::size_t i = 0; i < capacity; ++i) window.insert(ids.next(), {});
  std::vector<model::MessageId> forgotten;
  for (auto _ : state) {
    federation::HopInfo* taken = window.insert(ids.next(), federation::HopInfo{4, 1, {}, {}, {7}, {}}, &forgotten);
    benchmark::DoNotOptimize(taken);
    forgotten.clear();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PushIntoFullWindow)->Arg(10'000)->Arg(100'000)->Arg(1'000'000);

}  // namespace
