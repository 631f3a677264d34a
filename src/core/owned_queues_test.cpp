#include "core/broker.hpp"

#include <gtest/gtest.h>

#include "core/broker_test_fixture.hpp"
#include "model/queue_key.hpp"

namespace carrier::core {

namespace {

// Queue ownership and dispatch: empty auto-created queues are freed, queues that hold something,
// or have a lifecycle of their own, are not; limits, overflow and block pressure; scheduled sends.

using namespace broker_testing;

TEST_F(BrokerTest, DrainedQueueIsFreedWhenItsLastConsumerLeaves) {
  auto c = std::make_shared<Collector>();
  ConsumerId id;
  on(1, [&](Broker& b) { id = *b.subscribe({kQueue, AckMode::client_individual, 10, c}, nullptr); });
  on(2, [&](Broker& b) { b.send({make("a", kQueue, true)}, nullptr); });
  store_.complete_all();
  ASSERT_EQ(c->got.size(), 1u);
  EXPECT_EQ(total_queues(), 1u);
  on(1, [&](Broker& b) { b.ack(id, {c->got[0].tag}, nullptr); });
  EXPECT_EQ(total_queues(), 1u) << "a consumer is attached";
  on(1, [&](Broker& b) { b.unsubscribe(id, nullptr); });
  EXPECT_EQ(total_queues(), 0u);
  EXPECT_EQ(memory_.used(), 0) << "the queue's overhead is given back with it";
}

TEST_F(BrokerTest, QueueOverheadCountsTowardsTheMemoryGauge) {
  std::vector<ConsumerId> ids;
  for (int i = 0; i < 10; ++i) {
    on(0, [&](Broker& b) {
      ids.push_back(*b.subscribe({{DestinationKind::queue, "q" + std::to_string(i)}, AckMode::auto_ack, 0,
                                  std::make_shared<Collector>()},
                                 nullptr));
    });
  }
  on(0, [&](Broker& b) {
    ids.push_back(*b.subscribe({kTopic, AckMode::auto_ack, 0, std::make_shared<Collector>()}, nullptr));
  });
  EXPECT_EQ(memory_.used(), 11 * Broker::kQueueOverheadBytes);
  for (auto id : ids) on(0, [&](Broker& b) { b.unsubscribe(id, nullptr); });
  EXPECT_EQ(total_queues(), 0u);
  EXPECT_EQ(memory_.used(), 0);
}

TEST_F(BrokerTest, QueueHoldingMessagesIsKept) {
  auto c = std::make_shared<Collector>();
  ConsumerId id;
  on(1, [&](Broker& b) { id = *b.subscribe({kQueue, AckMode::client_individual, 1, c}, nullptr); });
  on(2, [&](Broker& b) { b.send({make("a", kQueue), make("b", kQueue)}, nullptr); });
  ASSERT_EQ(c->got.size(), 1u);
  on(1, [&](Broker& b) { b.unsubscribe(id, nullptr); });  // "a" unacked, "b" ready: both stay
  EXPECT_EQ(total_queues(), 1u);
  for (auto& b : brokers_) ex_.on(b->shard(), [&] { b->start(); });
  advance(1000);  // a sweep
  EXPECT_EQ(total_queues(), 1u);
  auto later = std::make_shared<Collector>();
  on(0, [&](Broker& b) { (void)b.subscribe({kQueue, AckMode::auto_ack, 0, later}, nullptr); });
  EXPECT_EQ(later->bodies(), (std::vector<std::string>{"a", "b"}));
}

TEST_F(BrokerTest, QueueWaitingOutARedeliveryDelayIsKept) {
  Options o;
  o.sweep_interval_ms = 100;
  DestinationPolicy p;
  p.redelivery_delay_ms = 500;
  p.redelivery_jitter = 0;
  o.policies.push_back(p);
  build(o);
  for (auto& b : brokers_) ex_.on(b->shard(), [&] { b->start(); });
  auto c = std::make_shared<Collector>();
  ConsumerId id;
  on(1, [&](Broker& b) { id = *b.subscribe({kQueue, AckMode::client_individual, 10, c}, nullptr); });
  on(2, [&](Broker& b) { b.send({make("a", kQueue, true)}, nullptr); });
  store_.complete_all();
  ASSERT_EQ(c->got.size(), 1u);
  on(1, [&](Broker& b) { b.nack(id, {c->got[0].tag}, nullptr); });
  on(1, [&](Broker& b) { b.unsubscribe(id, nullptr); });
  for (int i = 0; i < 3; ++i) advance(100);  // sweeps while the message waits outside the queue
  EXPECT_EQ(total_queues(), 1u);
  advance(500);
  auto later = std::make_shared<Collector>();
  on(0, [&](Broker& b) { (void)b.subscribe({kQueue, AckMode::auto_ack, 0, later}, nullptr); });
  EXPECT_EQ(later->bodies(), (std::vector<std::string>{"a"}));
  EXPECT_FALSE(std::any_of(store_.records.begin(), store_.records.end(),
                           [](const store::Record& r) { return r.kind == store::RecordKind::ack; }))
      << "not dropped from the store either";
}

TEST_F(BrokerTest, QueueEmptiedByExpiryIsFreedByTheSweep) {
  Options o;
  o.sweep_interval_ms = 100;
  build(o);
  for (auto& b : brokers_) ex_.on(b->shard(), [&] { b->start(); });
  auto m = std::make_shared<Message>(*make("short", kQueue));
  m->expires_ms = now_ + 50;
  on(1, [&](Broker& b) { b.send({m}, nullptr); });
  EXPECT_EQ(total_queues(), 1u);
  advance(100);
  EXPECT_EQ(total_queues(), 0u);
  EXPECT_EQ(memory_.used(), 0);
}

TEST_F(BrokerTest, RecoveredScheduledMessageOutlivesItsCollectedQueue) {
  Options o;
  o.sweep_interval_ms = 100;
  build(o);
  auto m = std::make_shared<Message>(*make("later", kQueue, true));
  m->deliver_at_ms = now_ + 500;
  std::vector<Broker*> peers;
  for (auto& b : brokers_) peers.push_back(b.get());
  Broker::recover(peers, store::RecoveredMessage{kQueue.key(), m, 0, {}});
  for (auto& b : brokers_) ex_.on(b->shard(), [&] { b->start(); });
  advance(100);
  EXPECT_EQ(total_queues(), 0u) << "empty while the message waits in the schedule";
  advance(400);
  auto c = std::make_shared<Collector>();
  on(0, [&](Broker& b) { (void)b.subscribe({kQueue, AckMode::auto_ack, 0, c}, nullptr); });
  EXPECT_EQ(c->bodies(), (std::vector<std::string>{"later"}));
}

TEST_F(BrokerTest, ConfiguredTemporaryAndNamedQueuesAreNotCollected) {
  Options o;
  o.queues = {"orders"};
  build(o);
  const Destination temp{DestinationKind::temp_queue, "s1-reply"};
  on(0, [&](Broker& b) { b.open_temp_queue(temp); });
  std::vector<ConsumerId> ids;
  on(0, [&](Broker& b) {
    ids.push_back(*b.subscribe({kQueue, AckMode::auto_ack, 0, std::make_shared<Collector>()}, nullptr));
    ids.push_back(*b.subscribe({temp, AckMode::auto_ack, 0, std::make_shared<Collector>()}, nullptr));
    SubscribeRequest named{kTopic, AckMode::auto_ack, 0, std::make_shared<Collector>()};
    named.subscription_name = "keep";
    named.durable = true;
    ids.push_back(*b.subscribe(named, nullptr));
  });
  store_.complete_all();
  ex_.drain();
  EXPECT_EQ(total_queues(), 3u);
  for (auto id : ids) on(0, [&](Broker& b) { b.unsubscribe(id, nullptr); });
  EXPECT_EQ(total_queues(), 3u);
}

// A wildcard queue subscriber: records which child each delivery came as, and checks that the

TEST_F(BrokerTest, ScheduledMessageWaitsForItsTime) {
  auto c = std::make_shared<Collector>();
  on(0, [&](Broker& b) { (void)b.subscribe({kQueue, AckMode::auto_ack, 0, c}, nullptr); });
  auto m = std::make_shared<Message>(*make("later", kQueue));
  m->deliver_at_ms = now_ + 500;
  on(1, [&](Broker& b) { b.send({m}, nullptr); });
  EXPECT_TRUE(c->got.empty());
  advance(500);
  EXPECT_EQ(c->bodies(), (std::vector<std::string>{"later"}));
}

TEST_F(BrokerTest, OverflowRejectReachesTheProducer) {
  Options o;
  DestinationPolicy p;
  p.max_messages = 2;
  o.policies.push_back(p);
  build(o);
  std::vector<Status> results;
  for (int i = 0; i < 3; ++i) {
    on(1, [&](Broker& b) { b.send({make(std::to_string(i), kQueue)}, [&](Status st) { results.push_back(st); }); });
  }
  ASSERT_EQ(results.size(), 3u);
  EXPECT_TRUE(results[0].has_value());
  EXPECT_TRUE(results[1].has_value());
  ASSERT_FALSE(results[2].has_value());
  EXPECT_EQ(results[2].error().code, Errc::limit_exceeded);
}

TEST_F(BrokerTest, OverflowDropOldest) {
  Options o;
  DestinationPolicy p;
  p.max_messages = 2;
  p.overflow = OverflowPolicy::drop_oldest;
  o.policies.push_back(p);
  build(o);
  for (int i = 0; i < 4; ++i) on(1, [&](Broker& b) { b.send({make(std::to_string(i), kQueue)}, nullptr); });
  auto c = std::make_shared<Collector>();
  on(0, [&](Broker& b) { (void)b.subscribe({kQueue, AckMode::auto_ack, 0, c}, nullptr); });
  EXPECT_EQ(c->bodies(), (std::vector<std::string>{"2", "3"}));
}

TEST_F(BrokerTest, OverflowBlockTakesTheMessageAndMarksTheQueueUntilItDrains) {
  Options o;
  DestinationPolicy p;
  p.max_messages = 10;
  p.overflow = OverflowPolicy::block;
  o.policies.push_back(p);
  build(o);
  DestinationPressure pressure;
  int reliefs = 0;
  pressure.set_on_relief([&] { ++reliefs; });
  for (auto& b : brokers_) b->set_pressure(&pressure);
  std::vector<Status> results;
  for (int i = 0; i < 12; ++i) {
    on(1, [&](Broker& b) { b.send({make(std::to_string(i), kQueue)}, [&](Status st) { results.push_back(st); }); });
  }
  ASSERT_EQ(results.size(), 12u);
  for (const auto& st : results) EXPECT_TRUE(st.has_value());  // taken, never refused
  EXPECT_TRUE(pressure.any());
  EXPECT_TRUE(pressure.blocked(kQueue.key()));
  auto c = std::make_shared<Collector>();
  ConsumerId id;
  on(0, [&](Broker& b) { id = *b.subscribe({kQueue, AckMode::client_individual, 100, c}, nullptr); });
  ASSERT_EQ(c->got.size(), 12u);
  for (std::size_t i = 0; i < 3; ++i) on(0, [&](Broker& b) { b.ack(id, {c->got[i].tag}, nullptr); });
  EXPECT_TRUE(pressure.blocked(kQueue.key()));  // 9 left: not yet under 90% of 10
  on(0, [&](Broker& b) { b.ack(id, {c->got[3].tag}, nullptr); });
  EXPECT_FALSE(pressure.any());
  EXPECT_EQ(reliefs, 1);
}

TEST_F(BrokerTest, SweeperRemovesExpiredAndIdleQueues) {
  Options o;
  o.sweep_interval_ms = 100;
  DestinationPolicy p;
  p.idle_expiry_ms = 1000;
  o.policies.push_back(p);
  build(o);
  for (auto& b : brokers_) ex_.on(b->shard(), [&] { b->start(); });
  auto m = std::make_shared<Message>(*make("short", kQueue, true));
  m->expires_ms = now_ + 50;
  on(1, [&](Broker& b) { b.send({m, make("long", kQueue)}, nullptr); });
  store_.complete_all();
  advance(100);
  EXPECT_TRUE(std::any_of(store_.records.begin(), store_.records.end(),
                          [](const store::Record& r) { return r.kind == store::RecordKind::ack; }))
      << "the expired persistent message is removed from the store too";
  std::size_t ready = 0;
  for (auto& b : brokers_) ready += b->stats().messages_ready;
  EXPECT_EQ(ready, 1u);
  for (int i = 0; i < 11; ++i) advance(100);
  std::size_t queues = 0;
  for (auto& b : brokers_) queues += b->stats().queues;
  EXPECT_EQ(queues, 0u) << "idle for longer than idle_expiry_ms";
}

}  // namespace
}  // namespace carrier::core
