#include "core/broker.hpp"

#include <gtest/gtest.h>

#include "core/broker_test_fixture.hpp"
#include "model/queue_key.hpp"

namespace carrier::core {

namespace {

// Topic routing: fan-out over the replicated index, private subscriptions and their bounded
// backlog, scheduled topic messages.

using namespace broker_testing;

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

// Counts the calls as well as the deliveries.
struct CountingCollector : Collector {
  int calls = 0;
  void deliver(ConsumerId id, std::vector<Delivery> batch) override {
    ++calls;
    Collector::deliver(id, std::move(batch));
  }
};

// A batch of messages, listed by the router message by message with all their subscribers,
// reaches each subscriber in order and in one delivery.
TEST_F(BrokerTest, ABatchFansOutToEachSubscriberInOrderAndAtOnce) {
  std::vector<std::shared_ptr<CountingCollector>> subs;
  const std::vector<std::pair<int, std::string>> filters = {{0, "t.a"}, {0, "t.*"}, {0, "t.a"}, {1, "t.*"}, {0, "t.b"}};
  for (const auto& [shard, filter] : filters) {
    subs.push_back(std::make_shared<CountingCollector>());
    auto c = subs.back();
    on(shard, [&](Broker& br) {
      (void)br.subscribe({{DestinationKind::topic, filter}, AckMode::auto_ack, 0, c}, nullptr);
    });
  }
  std::vector<MessagePtr> batch;
  std::vector<std::string> to_a, to_b, to_all;
  for (int i = 0; i < 20; ++i) {
    const std::string topic = i % 3 == 0 ? "t.b" : "t.a";
    const std::string body = std::to_string(i);
    batch.push_back(make(body, {DestinationKind::topic, topic}));
    (topic == "t.a" ? to_a : to_b).push_back(body);
    to_all.push_back(body);
  }
  on(2, [&](Broker& br) { br.send(batch, nullptr); });
  EXPECT_EQ(subs[0]->bodies(), to_a);
  EXPECT_EQ(subs[1]->bodies(), to_all);
  EXPECT_EQ(subs[2]->bodies(), to_a);
  EXPECT_EQ(subs[3]->bodies(), to_all);
  EXPECT_EQ(subs[4]->bodies(), to_b);
  for (const auto& c : subs) EXPECT_EQ(c->calls, 1) << "each subscriber's messages are dispatched together";
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

// A scheduled topic message waits in one reserved queue per topic, which recovery recognises.
TEST_F(BrokerTest, ScheduledTopicKeysAreReservedQueuesPerTopic) {
  auto m = make("x", kTopic);
  const auto key = TopicRouting::scheduled_topic_key(*m);
  EXPECT_EQ(key, "queue:$scheduled-topic:news");
  EXPECT_TRUE(TopicRouting::is_scheduled_topic_key(key));
  EXPECT_FALSE(TopicRouting::is_scheduled_topic_key("queue:news"));
  EXPECT_FALSE(TopicRouting::is_scheduled_topic_key("subscription:news"));
}

// Subscribing puts the filter in every shard's index; unsubscribing takes it out of every one.
TEST_F(BrokerTest, PlainSubscriptionFilterIsReplicatedOnEveryShard) {
  auto c = std::make_shared<Collector>();
  ConsumerId id;
  on(1, [&](Broker& b) { id = *b.subscribe({{DestinationKind::topic, "news.*"}, AckMode::auto_ack, 0, c}, nullptr); });
  for (auto& b : brokers_) {
    std::vector<TopicSubscriber> matched;
    b->topics().match("news.eu", matched);
    ASSERT_EQ(matched.size(), 1u);
    EXPECT_EQ(matched[0].id, id);
    EXPECT_EQ(matched[0].home, ShardId(1));
  }
  EXPECT_EQ(brokers_[1]->topics().size(), 1u);
  on(1, [&](Broker& b) { b.unsubscribe(id, nullptr); });
  for (auto& b : brokers_) {
    std::vector<TopicSubscriber> matched;
    b->topics().match("news.eu", matched);
    EXPECT_TRUE(matched.empty());
  }
  EXPECT_EQ(brokers_[1]->topics().size(), 0u);
}

}  // namespace
}  // namespace carrier::core
