#include "core/broker.hpp"

#include <gtest/gtest.h>

#include "core/broker_test_fixture.hpp"
#include "model/queue_key.hpp"

namespace carrier::core {

using model::Destination;
using model::DestinationKind;
using model::Message;
using model::MessageId;
using model::MessagePtr;
using model::owner_shard;
using model::ShardId;

namespace {

using namespace broker_testing;

TEST_F(BrokerTest, QueueAcrossShardsDeliversAndCompletes) {
  auto c = std::make_shared<Collector>();
  bool subscribed = false;
  on(1, [&](Broker& b) {
    auto id = b.subscribe({kQueue, AckMode::client_individual, 10, c}, [&](Status st) { subscribed = st.has_value(); });
    ASSERT_TRUE(id.has_value());
  });
  EXPECT_TRUE(subscribed);
  bool sent = false;
  on(2, [&](Broker& b) { b.send({make("a", kQueue), make("b", kQueue)}, [&](Status st) { sent = st.has_value(); }); });
  EXPECT_TRUE(sent);
  EXPECT_EQ(c->bodies(), (std::vector<std::string>{"a", "b"}));
}

TEST_F(BrokerTest, NoDeliveryBeforeSubscribeReturnsOnTheOwningShard) {
  // The queue already holds a message and is owned by the subscriber's own shard.
  const auto owner = owner_shard(kQueue.key(), kShards).value();
  on(owner, [&](Broker& b) { b.send({make("early", kQueue)}, nullptr); });
  auto c = std::make_shared<Collector>();
  ex_.on(ShardId(owner), [&] {
    ASSERT_TRUE(brokers_[owner]->subscribe({kQueue, AckMode::auto_ack, 0, c}, nullptr).has_value());
    EXPECT_TRUE(c->got.empty()) << "delivered before the session knew its consumer id";
  });
  ex_.drain();
  EXPECT_EQ(c->bodies(), (std::vector<std::string>{"early"}));
}

TEST_F(BrokerTest, PersistentSendCompletesOnlyWhenDurable) {
  bool sent = false;
  on(0, [&](Broker& b) { b.send({make("p", kQueue, true)}, [&](Status st) { sent = st.has_value(); }); });
  EXPECT_FALSE(sent);
  ASSERT_EQ(store_.records.size(), 1u);
  EXPECT_EQ(store_.records[0].kind, store::RecordKind::message);
  EXPECT_EQ(store_.records[0].queue, "queue:orders");
  store_.complete_all();
  ex_.drain();
  EXPECT_TRUE(sent);
}

TEST_F(BrokerTest, StoreFailureReachesTheProducer) {
  Status result;
  on(0, [&](Broker& b) { b.send({make("p", kQueue, true)}, [&](Status st) { result = st; }); });
  store_.complete_all(unexpected(Errc::io_error, "disk full"));
  ex_.drain();
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code, Errc::io_error);
}

TEST_F(BrokerTest, AckOfPersistentMessageIsRecorded) {
  auto c = std::make_shared<Collector>();
  ConsumerId id;
  on(1, [&](Broker& b) { id = *b.subscribe({kQueue, AckMode::client_individual, 10, c}, nullptr); });
  on(2, [&](Broker& b) { b.send({make("p", kQueue, true)}, nullptr); });
  ASSERT_EQ(c->got.size(), 1u);
  bool acked = false;
  on(1, [&](Broker& b) { b.ack(id, {c->got[0].tag}, [&](Status st) { acked = st.has_value(); }); });
  store_.complete_all();
  ex_.drain();
  EXPECT_TRUE(acked);
  ASSERT_EQ(store_.records.size(), 3u);  // message, delivered, ack
  EXPECT_EQ(store_.records[1].kind, store::RecordKind::delivered);
  EXPECT_EQ(store_.records[2].kind, store::RecordKind::ack);
}

TEST_F(BrokerTest, StateRecordsShareTheBatchOfTheirSendOrAck) {
  auto c = std::make_shared<Collector>();
  ConsumerId id;
  on(1, [&](Broker& b) { id = *b.subscribe({kQueue, AckMode::client_individual, 10, c}, nullptr); });
  auto state = make("in flight", Destination{DestinationKind::queue, "$proto-state"}, true);
  bool sent = false;
  on(2, [&](Broker& b) {
    b.send({make("p", kQueue, true)}, {StateRecord{"$proto-state", state, {}}}, [&](Status st) { sent = st.has_value(); });
  });
  // One append: the message and the state record land together (then the delivery record).
  ASSERT_EQ(store_.records.size(), 3u);
  EXPECT_EQ(store_.records[0].queue, "queue:orders");
  EXPECT_EQ(store_.records[1].queue, "queue:$proto-state");
  EXPECT_EQ(store_.records[1].kind, store::RecordKind::message);
  EXPECT_FALSE(sent);
  store_.complete_all();
  ex_.drain();
  EXPECT_TRUE(sent);
  ASSERT_EQ(c->got.size(), 1u);
  store_.records.clear();
  auto next = make("owed", Destination{DestinationKind::queue, "$proto-state"}, true);
  bool acked = false;
  on(1, [&](Broker& b) {
    b.ack(id, {c->got[0].tag}, {StateRecord{"$proto-state", next, state->id}}, [&](Status st) { acked = st.has_value(); });
  });
  ASSERT_EQ(store_.records.size(), 3u);  // ack, new state, old state removed: one batch
  EXPECT_EQ(store_.records[0].kind, store::RecordKind::ack);
  EXPECT_EQ(store_.records[1].message_id, next->id);
  EXPECT_EQ(store_.records[2].kind, store::RecordKind::ack);
  EXPECT_EQ(store_.records[2].message_id, state->id);
  EXPECT_FALSE(acked);
  store_.complete_all();
  ex_.drain();
  EXPECT_TRUE(acked);
  // Never routed: nobody can consume a state queue, and it holds nothing in memory.
  EXPECT_EQ(brokers_[owner_shard("queue:$proto-state", kShards).value()]->stats().messages_ready, 0u);
  store_.records.clear();
  bool written = false;
  on(0, [&](Broker& b) { b.write_state({StateRecord{"$proto-state", nullptr, next->id}}, [&](Status st) { written = st.has_value(); }); });
  ASSERT_EQ(store_.records.size(), 1u);
  store_.complete_all();
  ex_.drain();
  EXPECT_TRUE(written);
}

TEST_F(BrokerTest, UnsubscribeReturnsUnackedToOtherConsumers) {
  auto c1 = std::make_shared<Collector>();
  auto c2 = std::make_shared<Collector>();
  ConsumerId id1;
  on(0, [&](Broker& b) { id1 = *b.subscribe({kQueue, AckMode::client, 1, c1}, nullptr); });
  on(2, [&](Broker& b) { b.send({make("x", kQueue)}, nullptr); });
  ASSERT_EQ(c1->got.size(), 1u);
  on(1, [&](Broker& b) { (void)b.subscribe({kQueue, AckMode::client, 1, c2}, nullptr); });
  EXPECT_TRUE(c2->got.empty());
  on(0, [&](Broker& b) { b.unsubscribe(id1, nullptr); });
  ASSERT_EQ(c2->got.size(), 1u);
  EXPECT_TRUE(c2->got[0].redelivered);
}

TEST_F(BrokerTest, TopicFanOutWithWildcardsAcrossShards) {
  auto a = std::make_shared<Collector>();
  auto b = std::make_shared<Collector>();
  auto c = std::make_shared<Collector>();
  on(0, [&](Broker& br) { (void)br.subscribe({{DestinationKind::topic, "prices.*"}, AckMode::auto_ack, 0, a}, nullptr); });
  on(1, [&](Broker& br) { (void)br.subscribe({{DestinationKind::topic, "prices.>"}, AckMode::auto_ack, 0, b}, nullptr); });
  on(2, [&](Broker& br) { (void)br.subscribe({{DestinationKind::topic, "other"}, AckMode::auto_ack, 0, c}, nullptr); });
  on(2, [&](Broker& br) {
    br.send({make("1", {DestinationKind::topic, "prices.eu"}), make("2", {DestinationKind::topic, "prices.eu.de"})},
            nullptr);
  });
  EXPECT_EQ(a->bodies(), (std::vector<std::string>{"1"}));
  EXPECT_EQ(b->bodies(), (std::vector<std::string>{"1", "2"}));
  EXPECT_TRUE(c->got.empty());
}

TEST_F(BrokerTest, TransactionAppliesAfterOneBatch) {
  auto c = std::make_shared<Collector>();
  on(1, [&](Broker& b) { (void)b.subscribe({kQueue, AckMode::client_individual, 10, c}, nullptr); });
  bool committed = false;
  on(0, [&](Broker& b) {
    Transaction tx;
    tx.sends = {make("t1", kQueue, true), make("t2", kQueue, true)};
    b.commit(std::move(tx), [&](Status st) { committed = st.has_value(); });
  });
  EXPECT_TRUE(c->got.empty()) << "nothing visible before the batch is durable";
  EXPECT_EQ(store_.records.size(), 2u);
  store_.complete_all();
  ex_.drain();
  EXPECT_TRUE(committed);
  EXPECT_EQ(c->bodies(), (std::vector<std::string>{"t1", "t2"}));
}

TEST_F(BrokerTest, DestinationChecks) {
  auto& b = *brokers_[0];
  EXPECT_FALSE(b.check_destination({DestinationKind::topic, "a.*"}, false).has_value());
  EXPECT_TRUE(b.check_destination({DestinationKind::topic, "a.*"}, true).has_value());
  EXPECT_FALSE(b.check_destination({DestinationKind::queue, ""}, false).has_value());
  Options strict;
  strict.auto_create = false;
  strict.queues = {"known"};
  Broker s(ShardId(0), ex_, store_, strict);
  EXPECT_TRUE(s.check_destination({DestinationKind::queue, "known"}, false).has_value());
  auto st = s.check_destination({DestinationKind::queue, "unknown"}, false);
  ASSERT_FALSE(st.has_value());
  EXPECT_EQ(st.error().code, Errc::not_found);
}


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

// A receipt for a persistent topic message due later means it is in the store: in a reserved
// queue of its own until due, then, in one batch, out of it and into each durable subscription.
TEST_F(BrokerTest, ScheduledPersistentTopicMessageIsStoredUntilDue) {
  auto c = std::make_shared<Collector>();
  ConsumerId id;
  SubscribeRequest req{kTopic, AckMode::auto_ack, 0, c};
  req.subscription_name = "stomp:app:s1";
  req.durable = true;
  on(0, [&](Broker& b) { id = *b.subscribe(req, nullptr); });
  store_.complete_all();
  ex_.drain();
  on(0, [&](Broker& b) { b.unsubscribe(id, nullptr); });  // the subscriber leaves

  const std::string scheduled_key = "queue:$scheduled-topic:" + kTopic.name;
  auto count = [&](const std::string& queue, store::RecordKind kind) {
    return std::count_if(store_.records.begin(), store_.records.end(), [&](const store::Record& r) {
      return r.queue == queue && r.kind == kind;
    });
  };
  auto plain = std::make_shared<Message>(*make("plain", kTopic, true));
  plain->deliver_at_ms = now_ + 500;
  auto in_tx = std::make_shared<Message>(*make("in-tx", kTopic, true));
  in_tx->deliver_at_ms = now_ + 500;
  bool sent = false, committed = false;
  on(1, [&](Broker& b) { b.send({plain}, [&](Status st) { sent = st.has_value(); }); });
  on(2, [&](Broker& b) { b.commit(Transaction{{in_tx}, {}, {}}, [&](Status st) { committed = st.has_value(); }); });
  EXPECT_FALSE(sent);  // not before the store says so
  EXPECT_EQ(count(scheduled_key, store::RecordKind::message), 2);
  store_.complete_all();
  ex_.drain();
  EXPECT_TRUE(sent);
  EXPECT_TRUE(committed);
  EXPECT_EQ(count("subscription:stomp:app:s1", store::RecordKind::message), 0);

  advance(500);
  EXPECT_EQ(count(scheduled_key, store::RecordKind::ack), 2);
  EXPECT_EQ(count("subscription:stomp:app:s1", store::RecordKind::message), 2);
  auto again = std::make_shared<Collector>();
  req.consumer = again;
  on(2, [&](Broker& b) { (void)b.subscribe(req, nullptr); });
  auto bodies = again->bodies();
  std::sort(bodies.begin(), bodies.end());
  EXPECT_EQ(bodies, (std::vector<std::string>{"in-tx", "plain"}));
}

TEST_F(BrokerTest, RecoveredScheduledTopicMessageIsPublishedWhenDue) {
  auto c = std::make_shared<Collector>();
  on(0, [&](Broker& b) { (void)b.subscribe({kTopic, AckMode::auto_ack, 0, c}, nullptr); });
  auto m = std::make_shared<Message>(*make("recovered", kTopic, true));
  m->deliver_at_ms = now_ + 300;
  std::vector<Broker*> peers;
  for (auto& b : brokers_) peers.push_back(b.get());
  Broker::recover(peers, store::RecoveredMessage{"queue:$scheduled-topic:" + kTopic.name, m, 0});
  advance(299);
  EXPECT_TRUE(c->got.empty());
  advance(1);
  EXPECT_EQ(c->bodies(), (std::vector<std::string>{"recovered"}));
}

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

TEST_F(BrokerTest, TopicPolicyLimitsBoundAPlainSubscriptionWithoutRefusingTheProducer) {
  for (auto overflow : {OverflowPolicy::reject, OverflowPolicy::drop_oldest}) {
    Options o;
    DestinationPolicy p;
    p.match = "topic:ticks";
    p.max_messages = 2;
    p.overflow = overflow;
    o.policies.push_back(p);
    build(o);
    const Destination topic{DestinationKind::topic, "ticks"};
    auto c = std::make_shared<Collector>();
    ConsumerId id;
    on(0, [&](Broker& b) { id = *b.subscribe({topic, AckMode::client_individual, 1, c}, nullptr); });
    std::vector<Status> results;
    for (int i = 0; i < 4; ++i) {
      on(1, [&](Broker& b) { b.send({make(std::to_string(i), topic)}, [&](Status st) { results.push_back(st); }); });
    }
    for (const auto& st : results) EXPECT_TRUE(st.has_value());
    ASSERT_EQ(c->bodies(), (std::vector<std::string>{"0"}));
    on(0, [&](Broker& b) { b.ack(id, {c->got[0].tag}, nullptr); });
    // One delivered and one waiting fit: reject keeps the first that waited, drop-oldest the newest.
    EXPECT_EQ(c->bodies(), (std::vector<std::string>{"0", overflow == OverflowPolicy::reject ? "1" : "3"}));
  }
}

TEST_F(BrokerTest, PlainSubscriptionBacklogDropsOldestWhenAsked) {
  // No topic policy, subscriber_backlog_overflow = drop-oldest: a subscriber that stops acking
  // keeps at most subscriber_backlog_bytes waiting, the oldest dropped first, so it alone cannot
  // hold the broker at its memory limit. (The default, block, is in topic_backlog_test.cpp.)
  MemoryGauge gauge(1 << 30);
  Options o;
  const auto one = make(std::string(1000, 'x'), kTopic)->footprint();
  o.subscriber_backlog_bytes = 3 * one;
  o.subscriber_backlog_overflow = OverflowPolicy::drop_oldest;
  build(o, &gauge);
  auto c = std::make_shared<Collector>();
  ConsumerId id;
  on(0, [&](Broker& b) { id = *b.subscribe({kTopic, AckMode::client_individual, 1, c}, nullptr); });
  for (int i = 0; i < 10; ++i) {
    on(1, [&](Broker& b) { b.send({make(std::to_string(i) + std::string(999, 'x'), kTopic)}, nullptr); });
  }
  ASSERT_EQ(c->got.size(), 1u);  // one in flight (prefetch 1), three waiting
  EXPECT_EQ(gauge.used(), static_cast<std::int64_t>(Broker::kQueueOverheadBytes + 4 * one));
  EXPECT_EQ(brokers_[0]->stats().backlog_dropped, 6u);
  for (int n = 0; n < 4; ++n) on(0, [&](Broker& b) { b.ack(id, {c->got.back().tag}, nullptr); });
  std::vector<char> firsts;
  for (const auto& d : c->got) firsts.push_back(d.message->body->front());
  EXPECT_EQ(firsts, (std::vector<char>{'0', '7', '8', '9'})) << "the newest are kept";
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

TEST_F(BrokerTest, RetainedMessagesReachLaterSubscribers) {
  auto m = std::make_shared<Message>(*make("21C", {DestinationKind::topic, "sensors.t1"}));
  m->retain = true;
  on(0, [&](Broker& b) { b.send({m}, nullptr); });
  auto c = std::make_shared<Collector>();
  SubscribeRequest req{{DestinationKind::topic, "sensors.*"}, AckMode::auto_ack, 0, c};
  req.want_retained = true;
  on(1, [&](Broker& b) { (void)b.subscribe(req, nullptr); });
  ASSERT_EQ(c->bodies(), (std::vector<std::string>{"21C"}));
  EXPECT_TRUE(c->got[0].message->from_retained);
  auto clear = std::make_shared<Message>(*make("", {DestinationKind::topic, "sensors.t1"}));
  clear->retain = true;
  on(2, [&](Broker& b) { b.send({clear}, nullptr); });
  auto later = std::make_shared<Collector>();
  req.consumer = later;
  on(1, [&](Broker& b) { (void)b.subscribe(req, nullptr); });
  EXPECT_TRUE(later->got.empty());
}

TEST_F(BrokerTest, NoLocalSkipsOwnMessages) {
  auto c = std::make_shared<Collector>();
  SubscribeRequest req{kTopic, AckMode::auto_ack, 0, c};
  req.no_local_origin = 42;
  on(0, [&](Broker& b) { (void)b.subscribe(req, nullptr); });
  auto mine = std::make_shared<Message>(*make("mine", kTopic));
  mine->origin = 42;
  on(0, [&](Broker& b) { b.send({mine, make("theirs", kTopic)}, nullptr); });
  EXPECT_EQ(c->bodies(), (std::vector<std::string>{"theirs"}));
}

// MQTT 5's "no matching subscribers": the sending shard says which topic messages no
// subscription took (subscribers on other shards, named ones, no-local and scheduled ones too).
TEST_F(BrokerTest, SendSaysWhichTopicMessagesMatchedNothing) {
  auto c = std::make_shared<Collector>();
  SubscribeRequest req{{DestinationKind::topic, "prices.*"}, AckMode::auto_ack, 0, c};
  req.no_local_origin = 42;
  on(1, [&](Broker& b) { (void)b.subscribe(req, nullptr); });
  auto named = std::make_shared<Collector>();
  SubscribeRequest durable{{DestinationKind::topic, "orders.>"}, AckMode::auto_ack, 0, named};
  durable.subscription_name = "mqtt:c1:orders/#";
  durable.durable = true;
  on(2, [&](Broker& b) { (void)b.subscribe(durable, nullptr); });
  store_.complete_all();
  ex_.drain();

  auto mine = std::make_shared<Message>(*make("mine", {DestinationKind::topic, "prices.eu"}));
  mine->origin = 42;
  auto scheduled = std::make_shared<Message>(*make("later", {DestinationKind::topic, "nobody"}));
  scheduled->deliver_at_ms = now_ + 500;
  auto retained = std::make_shared<Message>(*make("kept", {DestinationKind::topic, "nobody.retained"}));
  retained->retain = true;
  std::vector<bool> unmatched;
  bool done = false;
  on(0, [&](Broker& b) {
    b.send({make("1", {DestinationKind::topic, "prices.eu"}), make("2", {DestinationKind::topic, "nobody"}), mine,
            make("3", {DestinationKind::topic, "orders.x.y"}), scheduled, make("4", kQueue), retained},
           {}, [&](Status st) { done = st.has_value(); }, unmatched);
  });
  EXPECT_EQ(unmatched, (std::vector<bool>{false, true, true, false, false, false, true}));
  EXPECT_TRUE(done);
  EXPECT_EQ(c->bodies(), (std::vector<std::string>{"1"}));
}

}  // namespace
}  // namespace carrier::core
