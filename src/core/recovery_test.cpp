#include "core/broker.hpp"

#include <gtest/gtest.h>

#include "core/broker_test_fixture.hpp"
#include "model/queue_key.hpp"

namespace carrier::core {

namespace {

// Recovery routing: records read back from the store reach the part that keeps them.

using namespace broker_testing;

TEST_F(BrokerTest, RecoveredScheduledTopicMessageIsPublishedWhenDue) {
  auto c = std::make_shared<Collector>();
  on(0, [&](Broker& b) { (void)b.subscribe({kTopic, AckMode::auto_ack, 0, c}, nullptr); });
  auto m = std::make_shared<Message>(*make("recovered", kTopic, true));
  m->deliver_at_ms = now_ + 300;
  std::vector<Broker*> peers;
  for (auto& b : brokers_) peers.push_back(b.get());
  Broker::recover(peers, store::RecoveredMessage{"queue:$scheduled-topic:" + kTopic.name, m, 0, {}});
  advance(299);
  EXPECT_TRUE(c->got.empty());
  advance(1);
  EXPECT_EQ(c->bodies(), (std::vector<std::string>{"recovered"}));
}

namespace {
std::vector<Broker*> peers_of(const std::vector<std::unique_ptr<Broker>>& brokers) {
  std::vector<Broker*> peers;
  for (const auto& b : brokers) peers.push_back(b.get());
  return peers;
}
}  // namespace

// A recovered definition reaches every shard's replica; its queue comes back on its owner and
// the recovered messages of that subscription land in it.
TEST_F(BrokerTest, RecoveredDefinitionReachesEveryShardAndItsMessagesTheirQueue) {
  auto def = std::make_shared<Message>();
  def->id = brokers_[0]->next_message_id();
  def->destination = {DestinationKind::queue, "$subscriptions"};
  def->persistent = true;
  def->properties = {{"name", "stomp:app:r1"}, {"filter", "news"}, {"selector", ""}};
  const auto peers = peers_of(brokers_);
  Broker::recover(peers, store::RecoveredMessage{"queue:$subscriptions", def, 0, {}});
  Broker::recover(peers, store::RecoveredMessage{"subscription:stomp:app:r1", make("kept", kTopic, true), 1, {}});
  // A message of a subscription nobody defined is dropped.
  Broker::recover(peers, store::RecoveredMessage{"subscription:gone", make("lost", kTopic, true), 0, {}});
  for (auto& b : brokers_) EXPECT_NE(b->named().find("stomp:app:r1"), nullptr);
  auto c = std::make_shared<Collector>();
  SubscribeRequest req{kTopic, AckMode::client, 0, c};
  req.subscription_name = "stomp:app:r1";
  req.durable = true;
  on(1, [&](Broker& b) { (void)b.subscribe(req, nullptr); });
  ASSERT_EQ(c->bodies(), (std::vector<std::string>{"kept"}));
  EXPECT_TRUE(c->got[0].redelivered);
  std::size_t queues = 0;
  for (auto& b : brokers_) queues += b->owned_queues().contains("subscription:gone") ? 1 : 0;
  EXPECT_EQ(queues, 0u);
}

// A recovered retained message is offered to a subscriber that asks for retained messages.
TEST_F(BrokerTest, RecoveredRetainedMessageReachesASubscriber) {
  const Destination t{DestinationKind::topic, "sensors.t3"};
  Broker::recover(peers_of(brokers_), store::RecoveredMessage{"retained:sensors.t3", make("18C", t, true), 0, {}});
  auto c = std::make_shared<Collector>();
  SubscribeRequest req{{DestinationKind::topic, "sensors.>"}, AckMode::auto_ack, 0, c};
  req.want_retained = true;
  on(2, [&](Broker& b) { (void)b.subscribe(req, nullptr); });
  ASSERT_EQ(c->bodies(), (std::vector<std::string>{"18C"}));
  EXPECT_TRUE(c->got[0].message->from_retained);
}

}  // namespace
}  // namespace carrier::core
