#include "core/broker.hpp"

#include <gtest/gtest.h>

#include "core/broker_test_fixture.hpp"
#include "model/queue_key.hpp"

namespace carrier::core {

namespace {

// Redelivery and dead letters: returned deliveries wait their delay, then the dead-letter queue;
// rejected ones go at once.

using namespace broker_testing;

TEST_F(BrokerTest, RedeliveryWaitsItsDelayThenDeadLetters) {
  Options o;
  DestinationPolicy p;
  p.match = "queue:orders";
  p.redelivery_delay_ms = 100;
  p.redelivery_jitter = 0;
  p.max_deliveries = 2;
  o.policies.push_back(p);
  build(o);
  auto c = std::make_shared<Collector>();
  ConsumerId id;
  on(0, [&](Broker& b) { id = *b.subscribe({kQueue, AckMode::client_individual, 10, c}, nullptr); });
  on(1, [&](Broker& b) { b.send({make("poison", kQueue, true)}, nullptr); });
  ASSERT_EQ(c->got.size(), 1u);
  on(0, [&](Broker& b) { b.nack(id, {c->got[0].tag}, nullptr); });
  EXPECT_EQ(c->got.size(), 1u) << "not before its delay";
  advance(100);
  ASSERT_EQ(c->got.size(), 2u);
  EXPECT_TRUE(c->got[1].redelivered);
  EXPECT_EQ(c->got[1].delivery_count, 2u);
  auto dlq = std::make_shared<Collector>();
  on(2, [&](Broker& b) { (void)b.subscribe({{DestinationKind::queue, "DLQ.orders"}, AckMode::auto_ack, 0, dlq}, nullptr); });
  on(0, [&](Broker& b) { b.nack(id, {c->got[1].tag}, nullptr); });
  store_.complete_all();
  ex_.drain();
  ASSERT_EQ(dlq->got.size(), 1u);
  const auto& props = dlq->got[0].message->properties;
  EXPECT_NE(std::find(props.begin(), props.end(), std::pair<std::string, std::string>{"dlq-reason", "max-deliveries"}),
            props.end());
  EXPECT_NE(std::find(props.begin(), props.end(), std::pair<std::string, std::string>{"original-destination", "/queue/orders"}),
            props.end());
  EXPECT_EQ(c->got.size(), 2u) << "never in both";
}

TEST_F(BrokerTest, RejectDeadLettersAtOnceAndNeverRedelivers) {
  auto c = std::make_shared<Collector>();
  ConsumerId id;
  on(0, [&](Broker& b) { id = *b.subscribe({kQueue, AckMode::client_individual, 10, c}, nullptr); });
  auto dlq = std::make_shared<Collector>();
  on(2, [&](Broker& b) { (void)b.subscribe({{DestinationKind::queue, "DLQ.orders"}, AckMode::auto_ack, 0, dlq}, nullptr); });
  on(1, [&](Broker& b) { b.send({make("poison", kQueue, true), make("next", kQueue, true)}, nullptr); });
  ASSERT_EQ(c->got.size(), 2u);
  on(0, [&](Broker& b) { b.reject(id, {c->got[0].tag}, nullptr); });
  store_.complete_all();
  ex_.drain();
  ASSERT_EQ(dlq->bodies(), (std::vector<std::string>{"poison"}));
  const auto& props = dlq->got[0].message->properties;
  EXPECT_NE(std::find(props.begin(), props.end(), std::pair<std::string, std::string>{"dlq-reason", "rejected"}),
            props.end());
  EXPECT_EQ(c->bodies(), (std::vector<std::string>{"poison", "next"})) << "a rejected message is not offered again";
}

// The delay grows by the multiplier per delivery, up to its cap; jitter spreads it both ways.
TEST_F(BrokerTest, RedeliveryDelayGrowsUpToItsCapWithinItsJitter) {
  DestinationPolicy p;
  p.redelivery_delay_ms = 100;
  p.redelivery_multiplier = 2.0;
  p.redelivery_max_delay_ms = 1000;
  p.redelivery_jitter = 0;
  auto& r = brokers_[0]->redelivery();
  EXPECT_EQ(r.redelivery_delay(p, 1), 100);
  EXPECT_EQ(r.redelivery_delay(p, 2), 200);
  EXPECT_EQ(r.redelivery_delay(p, 4), 800);
  EXPECT_EQ(r.redelivery_delay(p, 5), 1000);
  EXPECT_EQ(r.redelivery_delay(p, 40), 1000);
  p.redelivery_jitter = 0.5;
  for (int i = 0; i < 50; ++i) {
    const auto d = r.redelivery_delay(p, 1);
    EXPECT_GE(d, 50);
    EXPECT_LE(d, 150);
  }
  p.redelivery_delay_ms = 0;
  EXPECT_EQ(r.redelivery_delay(p, 3), 0);
}

}  // namespace
}  // namespace carrier::core
