#include "core/broker.hpp"

#include <gtest/gtest.h>

#include "core/broker_test_fixture.hpp"
#include "model/queue_key.hpp"

namespace carrier::core {

using model::owner_shard;

namespace {

// The Broker front: sends, subscriptions, acks, transactions and destination checks across shards.

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

}  // namespace
}  // namespace carrier::core
