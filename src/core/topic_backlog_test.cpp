#include <gtest/gtest.h>

#include "core/broker.hpp"
#include "core/broker_test_fixture.hpp"

namespace carrier::core {
namespace {

// A plain topic subscription over its backlog bound (`[core] subscriber_backlog_bytes`, overflow
// `block`, the default): every message is taken, and the topics of those arriving for it are
// marked in DestinationPressure until it is under 90% of the bound again, or gone.

using namespace broker_testing;

class TopicBacklogTest : public BrokerTest {
 protected:
  // A bound of three messages of `kBody` bytes; pressure wired in as serve does.
  void build_bounded(Options o = {}) {
    o.subscriber_backlog_bytes = 3 * one();
    build(o);
    pressure_.set_on_relief([this] { ++reliefs_; });
    for (auto& b : brokers_) b->set_pressure(&pressure_);
  }
  std::uint64_t one() { return make(body(0), kTopic)->footprint(); }
  static std::string body(int i) {
    std::string b = std::to_string(i);
    b.resize(kBody, 'x');
    return b;
  }
  void publish(const Destination& d, int i) {
    on(1, [&](Broker& b) { b.send({make(body(i), d)}, nullptr); });
  }
  ConsumerId subscribe(const Destination& d, const std::shared_ptr<Collector>& c, std::uint32_t prefetch = 1) {
    ConsumerId id;
    on(0, [&](Broker& b) { id = *b.subscribe({d, AckMode::client_individual, prefetch, c}, nullptr); });
    return id;
  }

  static constexpr std::size_t kBody = 1000;
  DestinationPressure pressure_;
  int reliefs_ = 0;
};

const Destination kOther{DestinationKind::topic, "sports"};

TEST_F(TopicBacklogTest, PastTheBoundTheTopicIsMarkedAndNothingIsDropped) {
  build_bounded();
  auto c = std::make_shared<Collector>();
  const ConsumerId id = subscribe(kTopic, c);
  for (int i = 0; i < 4; ++i) publish(kTopic, i);  // one in flight, three waiting: at the bound
  EXPECT_FALSE(pressure_.any());
  publish(kTopic, 4);  // over it: still taken
  EXPECT_TRUE(pressure_.blocked(kTopic.key()));
  EXPECT_FALSE(pressure_.blocked(kOther.key())) << "other topics' producers go on";
  EXPECT_FALSE(pressure_.blocked(kQueue.key()));
  for (int i = 5; i < 10; ++i) publish(kTopic, i);  // a producer's read in flight: taken too
  EXPECT_EQ(brokers_[0]->stats().backlog_dropped, 0u);

  // Acks drain it: the mark stays until under 90% of the bound (two waiting), then goes once.
  while (pressure_.any()) {
    ASSERT_LT(c->got.size(), 10u);
    on(0, [&](Broker& b) { b.ack(id, {c->got.back().tag}, nullptr); });
  }
  EXPECT_EQ(c->got.size(), 8u) << "one in flight, two waiting";
  EXPECT_EQ(reliefs_, 1);
  while (c->got.size() < 10) on(0, [&](Broker& b) { b.ack(id, {c->got.back().tag}, nullptr); });
  for (int i = 0; i < 10; ++i) EXPECT_EQ(c->got[i].message->body->substr(0, 1), std::to_string(i));
}

TEST_F(TopicBacklogTest, UnsubscribingClearsEveryTopicAWildcardSubscriptionMarked) {
  build_bounded();
  const Destination a{DestinationKind::topic, "feed.a"};
  const Destination b{DestinationKind::topic, "feed.b"};
  auto c = std::make_shared<Collector>();
  const ConsumerId id = subscribe(Destination{DestinationKind::topic, "feed.>"}, c);
  for (int i = 0; i < 5; ++i) publish(a, i);
  publish(b, 5);
  EXPECT_TRUE(pressure_.blocked(a.key()));
  EXPECT_TRUE(pressure_.blocked(b.key())) << "the concrete topics it receives, not its filter";
  on(0, [&](Broker& br) { br.unsubscribe(id, nullptr); });
  EXPECT_FALSE(pressure_.any()) << "a mark left behind would pause its topics for good";
  EXPECT_EQ(reliefs_, 1) << "one relief for all of a subscription's marks";
}

TEST_F(TopicBacklogTest, ATopicStaysBlockedWhileAnySubscriptionIsOverItsBound) {
  build_bounded();
  auto first = std::make_shared<Collector>();
  auto second = std::make_shared<Collector>();
  const ConsumerId one_id = subscribe(kTopic, first);
  const ConsumerId two_id = subscribe(kTopic, second);
  for (int i = 0; i < 6; ++i) publish(kTopic, i);
  ASSERT_TRUE(pressure_.blocked(kTopic.key()));
  on(0, [&](Broker& b) { b.unsubscribe(one_id, nullptr); });
  EXPECT_TRUE(pressure_.blocked(kTopic.key())) << "the second one still holds its mark";
  on(0, [&](Broker& b) { b.unsubscribe(two_id, nullptr); });
  EXPECT_FALSE(pressure_.any());
}

TEST_F(TopicBacklogTest, ABatchAConsumerTakesAtOnceLeavesNoMark) {
  build_bounded();
  auto c = std::make_shared<Collector>();
  subscribe(kTopic, c, 100);
  std::vector<MessagePtr> batch;
  for (int i = 0; i < 6; ++i) batch.push_back(make(body(i), kTopic));
  on(1, [&](Broker& b) { b.send(std::move(batch), nullptr); });
  EXPECT_EQ(c->got.size(), 6u);
  EXPECT_FALSE(pressure_.any());
}

TEST_F(TopicBacklogTest, ExpiryBringingTheBacklogDownClearsTheMark) {
  Options o;
  o.sweep_interval_ms = 100;
  build_bounded(o);
  for (std::uint32_t s = 0; s < kShards; ++s) on(s, [](Broker& b) { b.start(); });
  auto c = std::make_shared<Collector>();
  subscribe(kTopic, c);
  for (int i = 0; i < 6; ++i) {
    auto m = std::make_shared<Message>(*make(body(i), kTopic));
    m->expires_ms = now_ + 50;
    on(1, [&](Broker& b) { b.send({std::move(m)}, nullptr); });
  }
  ASSERT_TRUE(pressure_.blocked(kTopic.key()));
  advance(200);
  EXPECT_FALSE(pressure_.any());
}

TEST_F(TopicBacklogTest, ATopicPolicyWithItsOwnLimitsKeepsItsOverflow) {
  Options o;
  DestinationPolicy p;
  p.match = "topic:>";
  p.max_messages = 2;
  p.overflow = OverflowPolicy::drop_oldest;
  o.policies.push_back(p);
  build_bounded(o);
  auto c = std::make_shared<Collector>();
  subscribe(kTopic, c);
  for (int i = 0; i < 10; ++i) publish(kTopic, i);
  EXPECT_FALSE(pressure_.any()) << "its policy drops, it does not block";
}

TEST_F(TopicBacklogTest, DropOldestWhenAskedMarksNothing) {
  Options o;
  o.subscriber_backlog_overflow = OverflowPolicy::drop_oldest;
  build_bounded(o);
  auto c = std::make_shared<Collector>();
  subscribe(kTopic, c);
  for (int i = 0; i < 10; ++i) publish(kTopic, i);
  EXPECT_FALSE(pressure_.any());
  EXPECT_EQ(brokers_[0]->stats().backlog_dropped, 6u);
}

TEST(TopicBacklogBound, IsAtMostAQuarterOfTheMemoryLimit) {
  Options o;
  EXPECT_EQ(o.backlog_bound(), 8u << 20) << "the default";
  o.memory_limit_bytes = 4 << 20;
  EXPECT_EQ(o.backlog_bound(), 1u << 20) << "one subscriber alone cannot reach the global limit";
  o.subscriber_backlog_bytes = 1000;
  EXPECT_EQ(o.backlog_bound(), 1000u);
  o.subscriber_backlog_bytes = 0;
  EXPECT_EQ(o.backlog_bound(), 0u) << "0 stays unbounded";
}

}  // namespace
}  // namespace carrier::core
