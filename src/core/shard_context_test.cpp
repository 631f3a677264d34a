#include "core/broker.hpp"

#include <gtest/gtest.h>

#include <optional>

#include <algorithm>

#include "core/broker_test_fixture.hpp"
#include "model/queue_key.hpp"

namespace carrier::core {

namespace {

// The shard context: one bounded wake-up for the schedule, memory counted once per message.

using namespace broker_testing;

// The wake-up for a time far ahead is taken in bounded steps, never as one huge timer.
TEST_F(BrokerTest, FarScheduleArmsABoundedTimer) {
  auto c = std::make_shared<Collector>();
  on(0, [&](Broker& b) { (void)b.subscribe({kQueue, AckMode::auto_ack, 0, c}, nullptr); });
  auto m = std::make_shared<Message>(*make("far", kQueue));
  m->deliver_at_ms = INT64_MAX - 1;
  on(1, [&](Broker& b) { b.send({m}, nullptr); });
  for (const auto& delay : ex_.timer_delays()) EXPECT_LE(delay, 3'600'000u);
  advance(3'600'000);
  EXPECT_TRUE(c->got.empty());
  for (const auto& delay : ex_.timer_delays()) EXPECT_LE(delay, 3'600'000u);
}

TEST_F(BrokerTest, MemoryGaugeCountsAFannedOutMessageOnce) {
  // One slow subscriber's share of a fan-out must not count as many copies of the message.
  MemoryGauge gauge(1 << 20);
  build(Options{}, &gauge);
  const Destination topic{DestinationKind::topic, "fan"};
  std::vector<std::shared_ptr<Collector>> subs;
  std::vector<std::pair<std::uint32_t, ConsumerId>> ids;
  for (std::uint32_t i = 0; i < 6; ++i) {
    subs.push_back(std::make_shared<Collector>());
    on(i % kShards, [&](Broker& b) {
      ids.emplace_back(i % kShards, *b.subscribe({topic, AckMode::client_individual, 0, subs.back()}, nullptr));
    });
  }
  // Each subscription's queue object counts its fixed overhead; the message comes on top.
  const std::int64_t queues = 6 * Broker::kQueueOverheadBytes;
  EXPECT_EQ(gauge.used(), queues);
  auto m = make(std::string(100000, 'x'), topic);
  on(0, [&](Broker& b) { b.send({m}, nullptr); });
  for (auto& s : subs) ASSERT_EQ(s->got.size(), 1u);
  EXPECT_EQ(gauge.used(), queues + static_cast<std::int64_t>(m->footprint()));
  for (std::size_t i = 0; i + 1 < ids.size(); ++i) {
    on(ids[i].first, [&](Broker& b) { b.ack(ids[i].second, {subs[i]->got[0].tag}, nullptr); });
  }
  EXPECT_EQ(gauge.used(), queues + static_cast<std::int64_t>(m->footprint()));
  on(ids.back().first, [&](Broker& b) { b.ack(ids.back().second, {subs.back()->got[0].tag}, nullptr); });
  EXPECT_EQ(gauge.used(), queues);
}

// A broadcast runs on every shard, then completes once, on the shard that asked.
TEST_F(BrokerTest, BroadcastRunsEverywhereThenCompletesOnItsHome) {
  std::vector<std::uint32_t> ran;
  int completions = 0;
  std::optional<ShardId> completed_on;
  on(1, [&](Broker& b) {
    b.context().broadcast([&](Broker& peer) { ran.push_back(peer.shard().value()); },
                          [&](Status st) {
                            EXPECT_TRUE(st.has_value());
                            ++completions;
                            completed_on = ex_.current();
                          });
  });
  std::sort(ran.begin(), ran.end());
  EXPECT_EQ(ran, (std::vector<std::uint32_t>{0, 1, 2}));
  EXPECT_EQ(completions, 1);
  EXPECT_EQ(completed_on, ShardId(1));
}

// Consumer ids carry their home shard: two shards never hand out the same one.
TEST_F(BrokerTest, ConsumerIdsAreUniqueAcrossShards) {
  const auto a = brokers_[0]->context().next_consumer_id();
  const auto b = brokers_[1]->context().next_consumer_id();
  EXPECT_NE(a, b);
  EXPECT_EQ(a.value() >> 48, 0u);
  EXPECT_EQ(b.value() >> 48, 1u);
}

}  // namespace
}  // namespace carrier::core
