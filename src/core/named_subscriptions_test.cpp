#include "core/broker.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/broker_test_fixture.hpp"
#include "model/queue_key.hpp"

namespace carrier::core {

namespace {

// Named subscriptions: durable ones keep messages while detached; consumers of one name compete.

using namespace broker_testing;

TEST_F(BrokerTest, DurableSubscriptionKeepsMessagesWhileDetached) {
  auto c = std::make_shared<Collector>();
  ConsumerId id;
  SubscribeRequest req{kTopic, AckMode::auto_ack, 0, c};
  req.subscription_name = "stomp:app:s1";
  req.durable = true;
  on(0, [&](Broker& b) { id = *b.subscribe(req, nullptr); });
  store_.complete_all();
  ex_.drain();
  on(1, [&](Broker& b) { b.send({make("one", kTopic, true)}, nullptr); });
  EXPECT_EQ(c->bodies(), (std::vector<std::string>{"one"}));
  on(0, [&](Broker& b) { b.ack(id, {c->got[0].tag}, nullptr); });
  on(0, [&](Broker& b) { b.unsubscribe(id, nullptr); });
  on(2, [&](Broker& b) { b.send({make("two", kTopic, true)}, nullptr); });
  // The definition and the persistent message are in the store.
  EXPECT_TRUE(std::any_of(store_.records.begin(), store_.records.end(), [](const store::Record& r) {
    return r.queue == "subscription:stomp:app:s1" && r.kind == store::RecordKind::message && *r.message->body == "two";
  }));
  auto again = std::make_shared<Collector>();
  req.consumer = again;
  on(2, [&](Broker& b) { (void)b.subscribe(req, nullptr); });
  EXPECT_EQ(again->bodies(), (std::vector<std::string>{"two"}));
  EXPECT_EQ(brokers_[1]->named_subscriptions("stomp:app:").size(), 1u);
  on(2, [&](Broker& b) { b.remove_subscription("stomp:app:s1", nullptr); });
  store_.complete_all();
  ex_.drain();
  EXPECT_TRUE(brokers_[0]->named_subscriptions("stomp:").empty());
}

TEST_F(BrokerTest, ASubscriptionWithAnIdleExpiryGoesOnceNobodyAttachesForThatLong) {
  SubscribeRequest req{kTopic, AckMode::auto_ack, 0, nullptr};  // no consumer: made, not attached to
  req.subscription_name = "http:idle";
  req.durable = true;
  req.idle_expiry_ms = 1000;
  on(0, [&](Broker& b) { (void)b.subscribe(req, nullptr); });
  store_.complete_all();
  ex_.drain();
  ASSERT_NE(brokers_[1]->named().find("http:idle"), nullptr);
  // The expiry is kept with the durable definition (it survives a restart).
  auto def = std::find_if(store_.records.begin(), store_.records.end(), [](const store::Record& r) {
    return NamedSubscriptions::is_definitions_key(r.queue) && r.kind == store::RecordKind::message;
  });
  ASSERT_NE(def, store_.records.end());
  EXPECT_EQ(NamedSubscriptions::parse_definition(*def->message)->def.idle_expiry_ms, 1000u);
  auto sweep = [&] {
    for (std::uint32_t i = 0; i < kShards; ++i) on(i, [&](Broker& b) { b.named().sweep_idle(now_); });
    store_.complete_all();
    ex_.drain();
  };
  now_ += 999;
  sweep();
  ASSERT_NE(brokers_[0]->named().find("http:idle"), nullptr);
  // Attached: never idle.
  auto c = std::make_shared<Collector>();
  req.consumer = c;
  ConsumerId id;
  on(2, [&](Broker& b) { id = *b.subscribe(req, nullptr); });
  now_ += 5000;
  sweep();
  ASSERT_NE(brokers_[0]->named().find("http:idle"), nullptr);
  // Detached: idle from then on.
  on(2, [&](Broker& b) { b.unsubscribe(id, nullptr); });
  now_ += 999;
  sweep();
  ASSERT_NE(brokers_[0]->named().find("http:idle"), nullptr);
  now_ += 1;
  sweep();
  for (auto& b : brokers_) EXPECT_EQ(b->named().find("http:idle"), nullptr);
}

TEST_F(BrokerTest, NamedSubscriptionBelongsToItsOwner) {
  auto c = std::make_shared<Collector>();
  SubscribeRequest req{kTopic, AckMode::auto_ack, 0, c};
  req.subscription_name = "stomp:app:owned";
  req.durable = true;
  req.owner = "bob";
  on(0, [&](Broker& b) { ASSERT_TRUE(b.subscribe(req, nullptr).has_value()); });
  store_.complete_all();
  ex_.drain();
  // The owner is stored with the definition, and every shard's replica knows it.
  EXPECT_TRUE(std::any_of(store_.records.begin(), store_.records.end(), [](const store::Record& r) {
    return r.kind == store::RecordKind::message && r.message &&
           std::find(r.message->properties.begin(), r.message->properties.end(),
                     std::pair<std::string, std::string>{"owner", "bob"}) != r.message->properties.end();
  }));
  auto other = req;
  other.owner = "alice";
  on(1, [&](Broker& b) {
    auto refused = b.subscribe(other, nullptr);
    ASSERT_FALSE(refused.has_value());
    EXPECT_EQ(refused.error().code, Errc::permission_denied);
    EXPECT_FALSE(b.check_subscription_owner("stomp:app:owned", "").has_value());
    EXPECT_TRUE(b.check_subscription_owner("stomp:app:owned", "bob").has_value());
    EXPECT_TRUE(b.check_subscription_owner("stomp:app:nobody", "alice").has_value());
  });
  on(2, [&](Broker& b) { EXPECT_TRUE(b.subscribe(req, nullptr).has_value()); });
}

TEST_F(BrokerTest, SharedSubscriptionConsumersCompete) {
  auto a = std::make_shared<Collector>();
  auto b = std::make_shared<Collector>();
  SubscribeRequest req{kTopic, AckMode::auto_ack, 0, a};
  req.subscription_name = "shared:g";
  on(0, [&](Broker& br) { (void)br.subscribe(req, nullptr); });
  req.consumer = b;
  on(1, [&](Broker& br) { (void)br.subscribe(req, nullptr); });
  std::vector<MessagePtr> batch;
  for (int i = 0; i < 10; ++i) batch.push_back(make(std::to_string(i), kTopic));
  on(2, [&](Broker& br) { br.send(batch, nullptr); });
  EXPECT_EQ(a->got.size() + b->got.size(), 10u);
  EXPECT_EQ(a->got.size(), 5u);
}

// A durable definition is a message in `$subscriptions` that reads back as the same definition,
// and every shard's replica holds it.
TEST_F(BrokerTest, DurableDefinitionIsStoredAndReplicatedOnEveryShard) {
  auto c = std::make_shared<Collector>();
  SubscribeRequest req{{DestinationKind::topic, "news.>"}, AckMode::auto_ack, 0, c};
  req.subscription_name = "stomp:app:s2";
  req.durable = true;
  req.selector_text = "x = 1";
  on(1, [&](Broker& b) { (void)b.subscribe(req, nullptr); });
  store_.complete_all();
  ex_.drain();
  auto def = std::find_if(store_.records.begin(), store_.records.end(),
                          [](const store::Record& r) { return r.queue == "queue:$subscriptions"; });
  ASSERT_NE(def, store_.records.end());
  EXPECT_TRUE(NamedSubscriptions::is_definitions_key(def->queue));
  auto parsed = NamedSubscriptions::parse_definition(*def->message);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->def.name, "stomp:app:s2");
  EXPECT_EQ(parsed->def.filter, "news.>");
  EXPECT_EQ(parsed->def.selector, "x = 1");
  EXPECT_TRUE(parsed->def.durable);
  for (auto& b : brokers_) {
    const NamedEntry* e = b->named().find("stomp:app:s2");
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->definition_id, parsed->definition_id);
  }
  // Its queue lives on the shard owning its key only.
  const auto key = NamedSubscriptions::queue_key("stomp:app:s2");
  std::size_t owners = 0;
  for (auto& b : brokers_) owners += b->owned_queues().contains(key) ? 1 : 0;
  EXPECT_EQ(owners, 1u);
  Message junk;
  EXPECT_FALSE(NamedSubscriptions::parse_definition(junk).has_value());
}

}  // namespace
}  // namespace carrier::core
