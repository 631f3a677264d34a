#include "core/broker.hpp"

#include <gtest/gtest.h>

#include "core/broker_test_fixture.hpp"
#include "selector/selector.hpp"
#include "model/queue_key.hpp"

namespace carrier::core {

namespace {

using namespace broker_testing;

struct WatchCollector : Consumer {
  std::map<ConsumerId, ConsumerId> children;  // child -> parent
  std::vector<std::pair<ConsumerId, Delivery>> got;
  std::size_t detached_count = 0;
  bool unannounced = false;
  void deliver(ConsumerId id, std::vector<Delivery> batch) override {
    if (!children.contains(id)) unannounced = true;
    for (auto& d : batch) got.emplace_back(id, std::move(d));
  }
  void attached(ConsumerId parent, ConsumerId child) override { children[child] = parent; }
  void detached(ConsumerId, ConsumerId child) override {
    children.erase(child);
    ++detached_count;
  }
  std::vector<std::string> bodies() const {
    std::vector<std::string> out;
    for (const auto& [id, d] : got) out.push_back(*d.message->body);
    std::sort(out.begin(), out.end());
    return out;
  }
};

Destination queue_named(std::string name) { return Destination{DestinationKind::queue, std::move(name)}; }

TEST_F(BrokerTest, WildcardQueueSubscriptionConsumesExistingAndFutureQueues) {
  // Queues on every shard before the subscription exists.
  on(0, [&](Broker& b) {
    b.send({make("eu", queue_named("orders.eu")), make("deep", queue_named("orders.eu.x")),
            make("other", queue_named("invoices.eu"))},
           nullptr);
  });
  auto one = std::make_shared<WatchCollector>();
  auto rest = std::make_shared<WatchCollector>();
  bool subscribed = false;
  ConsumerId parent;
  on(1, [&](Broker& b) {
    auto id = b.subscribe({queue_named("orders.*"), AckMode::client_individual, 10, one},
                          [&](Status st) { subscribed = st.has_value(); });
    ASSERT_TRUE(id.has_value());
    parent = *id;
    EXPECT_TRUE(one->got.empty()) << "delivered before the session knew its consumer id";
  });
  // Three levels or more: "*" is one level, ">" one or more.
  on(2, [&](Broker& b) { ASSERT_TRUE(b.subscribe({queue_named("orders.*.>"), AckMode::auto_ack, 0, rest}, nullptr)); });
  EXPECT_TRUE(subscribed);
  EXPECT_EQ(one->bodies(), (std::vector<std::string>{"eu"}));
  // Queues created later are watched too; reserved and temporary ones never.
  for (std::uint32_t shard = 0; shard < kShards; ++shard) {
    on(shard, [&](Broker& b) {
      b.send({make("us" + std::to_string(shard), queue_named("orders.us" + std::to_string(shard)))}, nullptr);
    });
  }
  on(0, [&](Broker& b) { b.open_temp_queue(Destination{DestinationKind::temp_queue, "orders.tmp"}); });
  EXPECT_EQ(one->bodies(), (std::vector<std::string>{"eu", "us0", "us1", "us2"}));
  EXPECT_EQ(rest->bodies(), (std::vector<std::string>{"deep"}));
  EXPECT_FALSE(one->unannounced);
  EXPECT_FALSE(rest->unannounced);
  EXPECT_EQ(one->children.size(), 4u);  // one child per queue
  for (const auto& [child, p] : one->children) EXPECT_EQ(p, parent);
  // Acks name the child and reach its queue's owner.
  std::size_t acked = 0;
  for (const auto& [child, d] : one->got) {
    on(1, [&](Broker& b) { b.ack(child, {d.tag}, [&](Status st) { acked += st.has_value() ? 1 : 0; }); });
  }
  EXPECT_EQ(acked, 4u);
  std::size_t unacked = 0;
  for (auto& b : brokers_) unacked += b->stats().messages_unacked;
  EXPECT_EQ(unacked, 1u);  // only "deep", whose auto-ack is the session's to send
}

TEST_F(BrokerTest, WildcardQueueSubscribersCompeteAndUnsubscribeRequeues) {
  auto a = std::make_shared<WatchCollector>();
  auto plain = std::make_shared<Collector>();
  ConsumerId wild;
  on(0, [&](Broker& b) { wild = *b.subscribe({queue_named("jobs.>"), AckMode::client, 1, a}, nullptr); });
  on(1, [&](Broker& b) { b.send({make("1", queue_named("jobs.a"))}, nullptr); });
  ASSERT_EQ(a->got.size(), 1u);
  on(2, [&](Broker& b) { (void)b.subscribe({queue_named("jobs.a"), AckMode::client, 1, plain}, nullptr); });
  on(1, [&](Broker& b) { b.send({make("2", queue_named("jobs.a"))}, nullptr); });
  EXPECT_EQ(plain->bodies(), (std::vector<std::string>{"2"})) << "each message goes to one consumer";
  EXPECT_EQ(a->got.size(), 1u);
  bool removed = false;
  on(0, [&](Broker& b) { b.unsubscribe(wild, [&](Status st) { removed = st.has_value(); }); });
  EXPECT_TRUE(removed);
  // Its unacknowledged message went back to the queue; nothing new reaches it.
  on(1, [&](Broker& b) { b.send({make("3", queue_named("jobs.b"))}, nullptr); });
  EXPECT_EQ(a->got.size(), 1u);
  std::size_t ready = 0, queues_unacked = 0;
  for (auto& b : brokers_) {
    ready += b->stats().messages_ready;
    queues_unacked += b->stats().messages_unacked;
  }
  EXPECT_EQ(ready, 2u);  // "1" (requeued, waiting for the plain consumer's credit) and "3"
  EXPECT_EQ(queues_unacked, 1u);  // "2" with the plain consumer
}

TEST_F(BrokerTest, WildcardQueueSelectorAppliesToEveryQueue) {
  auto c = std::make_shared<WatchCollector>();
  SubscribeRequest req{queue_named("sel.*"), AckMode::auto_ack, 0, c};
  req.selector = *selector::parse("JMSType = 'yes'");
  // The selector reads the JMS type; the body says which message it is.
  const auto typed = [&](std::string type, std::string_view queue) {
    auto m = std::make_shared<Message>(*make(type, queue_named(std::string(queue))));
    m->type = std::move(type);
    return MessagePtr(std::move(m));
  };
  on(0, [&](Broker& b) { (void)b.subscribe(req, nullptr); });
  on(1, [&](Broker& b) { b.send({typed("yes", "sel.a"), typed("no", "sel.b")}, nullptr); });
  EXPECT_EQ(c->bodies(), (std::vector<std::string>{"yes"}));
}

TEST_F(BrokerTest, IdleQueueWithOnlyWildcardChildrenIsFreedAndReattachedWhenRecreated) {
  Options o;
  o.sweep_interval_ms = 100;
  DestinationPolicy p;
  p.idle_expiry_ms = 1000;
  o.policies.push_back(p);
  build(o);
  for (auto& b : brokers_) ex_.on(b->shard(), [&] { b->start(); });
  auto c = std::make_shared<WatchCollector>();
  on(0, [&](Broker& b) { (void)b.subscribe({queue_named("gc.*"), AckMode::auto_ack, 0, c}, nullptr); });
  for (int i = 0; i < 20; ++i) {
    on(1, [&](Broker& b) { b.send({make("m" + std::to_string(i), queue_named("gc.q" + std::to_string(i)))}, nullptr); });
  }
  ASSERT_EQ(c->got.size(), 20u);
  // The session's auto-acks.
  for (const auto& [child, d] : c->got) on(0, [&](Broker& b) { b.ack(child, {d.tag}, nullptr); });
  for (int i = 0; i < 12; ++i) advance(100);
  std::size_t queues = 0;
  for (auto& b : brokers_) queues += b->stats().queues;
  EXPECT_EQ(queues, 0u) << "wildcard children do not keep empty queues alive";
  EXPECT_EQ(c->detached_count, 20u);
  EXPECT_TRUE(c->children.empty());
  on(2, [&](Broker& b) { b.send({make("again", queue_named("gc.q3"))}, nullptr); });
  ASSERT_EQ(c->got.size(), 21u);
  EXPECT_EQ(*c->got.back().second.message->body, "again");
  EXPECT_FALSE(c->unannounced);
}

TEST_F(BrokerTest, WildcardUnsubscribedBeforeItsAttachNoticesLeavesNoChildren) {
  for (std::uint32_t shard = 0; shard < kShards; ++shard) {
    on(shard, [&](Broker& b) { b.send({make("m" + std::to_string(shard), queue_named("race.q" + std::to_string(shard)))}, nullptr); });
  }
  auto c = std::make_shared<WatchCollector>();
  bool removed = false;
  // SUBSCRIBE and UNSUBSCRIBE before any other shard has run: the notices find no parent.
  ex_.on(ShardId(1), [&] {
    auto id = *brokers_[1]->subscribe({queue_named("race.*"), AckMode::client, 5, c}, nullptr);
    brokers_[1]->unsubscribe(id, [&](Status st) { removed = st.has_value(); });
  });
  ex_.drain();
  EXPECT_TRUE(removed);
  EXPECT_TRUE(c->children.empty());
  // Deliveries that were on their way name children the session never knew (it drops them); the
  // queues took them back: they are all still there for an ordinary consumer.
  auto plain = std::make_shared<Collector>();
  for (std::uint32_t i = 0; i < kShards; ++i) {
    on(0, [&](Broker& b) { (void)b.subscribe({queue_named("race.q" + std::to_string(i)), AckMode::auto_ack, 0, plain}, nullptr); });
  }
  EXPECT_EQ(plain->got.size(), kShards);
  std::size_t unacked = 0;
  for (auto& b : brokers_) unacked += b->stats().messages_unacked;
  EXPECT_EQ(unacked, kShards);  // with the plain consumer, none with a vanished child
}

TEST_F(BrokerTest, WildcardsOnQueuesOnlyWhenSubscribing) {
  EXPECT_FALSE(brokers_[0]->check_destination(queue_named("orders.*"), false));
  EXPECT_TRUE(brokers_[0]->check_destination(queue_named("orders.*"), true));
  EXPECT_FALSE(brokers_[0]->check_destination(queue_named("orders.>.x"), true));
  EXPECT_FALSE(brokers_[0]->check_destination(Destination{DestinationKind::temp_queue, "t.*"}, true));
}

}  // namespace
}  // namespace carrier::core
