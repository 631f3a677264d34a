#include "core/broker.hpp"

#include <gtest/gtest.h>

#include "core/broker_test_fixture.hpp"
#include "model/queue_key.hpp"

namespace carrier::core {

namespace {

// Shared subscriptions kept by holders: stored while a holder remains.

using namespace broker_testing;

TEST_F(BrokerTest, SharedSubscriptionWithHoldersIsKeptWhileAHolderRemains) {
  auto count_live = [&](const std::string& key) {
    std::map<MessageId, int> live;
    for (const auto& r : store_.records) {
      if (r.queue != key) continue;
      if (r.kind == store::RecordKind::message) ++live[r.message_id];
      if (r.kind == store::RecordKind::ack) --live[r.message_id];
    }
    int n = 0;
    for (auto& [id, v] : live) n += v > 0 ? 1 : 0;
    return n;
  };
  auto settle = [&] {
    for (int i = 0; i < 4; ++i) {
      store_.complete_all();
      ex_.drain();
    }
  };
  const std::string key = "subscription:share:g";
  // A member without a holder makes a plain shared (non-durable) group.
  auto plain = std::make_shared<Collector>();
  SubscribeRequest req{kTopic, AckMode::client_individual, 10, plain};
  req.subscription_name = "share:g";
  ConsumerId plain_id;
  on(0, [&](Broker& b) { plain_id = *b.subscribe(req, nullptr); });
  settle();
  EXPECT_FALSE(brokers_[1]->named_subscriptions("share:")[0].durable);
  // A member with a holder makes it durable; what it holds enters the store.
  on(1, [&](Broker& b) { b.send({make("before", kTopic, true)}, nullptr); });
  auto held = std::make_shared<Collector>();
  SubscribeRequest hreq{kTopic, AckMode::client_individual, 10, held};
  hreq.subscription_name = "share:g";
  hreq.durable = true;
  hreq.holder = "alice";
  ConsumerId held_id;
  bool joined = false;
  on(2, [&](Broker& b) { held_id = *b.subscribe(hreq, [&](Status st) { joined = st.has_value(); }); });
  settle();
  EXPECT_TRUE(joined);
  auto defs = brokers_[0]->named_subscriptions("share:");
  ASSERT_EQ(defs.size(), 1u);
  EXPECT_TRUE(defs[0].durable);
  EXPECT_EQ(defs[0].holders, (std::vector<std::string>{"alice"}));
  EXPECT_EQ(count_live("queue:$subscriptions"), 1);
  EXPECT_EQ(count_live(key), 1) << "the message it held before is stored now";
  // Everyone leaves: the messages wait, in the store.
  on(0, [&](Broker& b) { b.unsubscribe(plain_id, nullptr); });
  on(2, [&](Broker& b) { b.unsubscribe(held_id, nullptr); });
  settle();
  on(1, [&](Broker& b) { b.send({make("while away", kTopic, true)}, nullptr); });
  settle();
  EXPECT_EQ(count_live(key), 2);
  EXPECT_EQ(brokers_[2]->named_subscriptions("share:").size(), 1u);
  // A second holder, then the first goes: still kept, one definition.
  hreq.holder = "bob";
  auto bob = std::make_shared<Collector>();
  hreq.consumer = bob;
  ConsumerId bob_id;
  on(1, [&](Broker& b) { bob_id = *b.subscribe(hreq, nullptr); });
  settle();
  EXPECT_EQ(bob->got.size(), 2u);
  on(1, [&](Broker& b) { b.unsubscribe(bob_id, nullptr); });
  on(0, [&](Broker& b) { b.release_holder("share:g", "alice", nullptr); });
  settle();
  defs = brokers_[1]->named_subscriptions("share:");
  ASSERT_EQ(defs.size(), 1u);
  EXPECT_EQ(defs[0].holders, (std::vector<std::string>{"bob"}));
  EXPECT_EQ(count_live("queue:$subscriptions"), 1);
  // The last holder goes with nobody attached: the group ends with its messages.
  bool released = false;
  on(2, [&](Broker& b) { b.release_holder("share:g", "bob", [&](Status st) { released = st.has_value(); }); });
  settle();
  EXPECT_TRUE(released);
  EXPECT_TRUE(brokers_[0]->named_subscriptions("share:").empty());
  EXPECT_EQ(count_live("queue:$subscriptions"), 0);
  EXPECT_EQ(count_live(key), 0);
}

TEST_F(BrokerTest, SharedSubscriptionLosingItsLastHolderWithMembersAttachedStopsBeingStored) {
  auto plain = std::make_shared<Collector>();
  SubscribeRequest req{kTopic, AckMode::client_individual, 10, plain};
  req.subscription_name = "share:h";
  ConsumerId plain_id;
  on(0, [&](Broker& b) { plain_id = *b.subscribe(req, nullptr); });
  auto held = std::make_shared<Collector>();
  SubscribeRequest hreq = req;
  hreq.consumer = held;
  hreq.durable = true;
  hreq.holder = "alice";
  ConsumerId held_id;
  on(1, [&](Broker& b) { held_id = *b.subscribe(hreq, nullptr); });
  for (int i = 0; i < 4; ++i) {
    store_.complete_all();
    ex_.drain();
  }
  on(2, [&](Broker& b) { b.release_holder("share:h", "alice", nullptr); });
  for (int i = 0; i < 4; ++i) {
    store_.complete_all();
    ex_.drain();
  }
  auto defs = brokers_[0]->named_subscriptions("share:");
  ASSERT_EQ(defs.size(), 1u);
  EXPECT_FALSE(defs[0].durable);
  EXPECT_TRUE(defs[0].holders.empty());
  // It now goes with its last consumer, as any non-durable shared subscription.
  on(0, [&](Broker& b) { b.unsubscribe(plain_id, nullptr); });
  on(1, [&](Broker& b) { b.unsubscribe(held_id, nullptr); });
  for (int i = 0; i < 4; ++i) {
    store_.complete_all();
    ex_.drain();
  }
  EXPECT_TRUE(brokers_[2]->named_subscriptions("share:").empty());
}

// Releasing a holder the subscription does not list changes nothing, and writes nothing.
TEST_F(BrokerTest, ReleasingAnUnknownHolderChangesNothing) {
  auto c = std::make_shared<Collector>();
  SubscribeRequest req{{DestinationKind::topic, "news"}, AckMode::auto_ack, 0, c};
  req.subscription_name = "group:g1";
  req.holder = "client-a";
  on(0, [&](Broker& b) { (void)b.subscribe(req, nullptr); });
  store_.complete_all();
  ex_.drain();
  ASSERT_EQ(brokers_[2]->named_subscriptions("group:").size(), 1u);
  const auto records = store_.records.size();
  bool done = false;
  on(1, [&](Broker& b) { b.release_holder("group:g1", "client-b", [&](Status st) { done = st.has_value(); }); });
  EXPECT_TRUE(done);
  EXPECT_EQ(store_.records.size(), records);
  auto subs = brokers_[1]->named_subscriptions("group:");
  ASSERT_EQ(subs.size(), 1u);
  EXPECT_TRUE(subs[0].durable);
  EXPECT_EQ(subs[0].holders, (std::vector<std::string>{"client-a"}));
}

}  // namespace
}  // namespace carrier::core
