#include "core/broker.hpp"

#include <gtest/gtest.h>

#include "core/broker_test_fixture.hpp"

namespace carrier::core {

using model::Destination;
using model::DestinationKind;
using model::Message;

namespace {

// Empty auto-created queues are freed; queues that hold something, or have a lifecycle of their
// own, are not.

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
  Broker::recover(peers, store::RecoveredMessage{kQueue.key(), m, 0});
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

}  // namespace
}  // namespace carrier::core
