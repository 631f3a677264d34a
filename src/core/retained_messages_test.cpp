#include "core/broker.hpp"

#include <gtest/gtest.h>

#include "core/broker_test_fixture.hpp"
#include "model/queue_key.hpp"

namespace carrier::core {

namespace {

// Retained messages: the last one per topic reaches later subscribers that ask.

using namespace broker_testing;

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

// A retained message is stored under its topic's "retained:" key, on the shard owning that key;
// the next one for the topic replaces it in the store too.
TEST_F(BrokerTest, RetainedMessageIsStoredOnceOnItsOwner) {
  const Destination t{DestinationKind::topic, "sensors.t2"};
  auto first = std::make_shared<Message>(*make("1", t));
  first->retain = true;
  auto second = std::make_shared<Message>(*make("2", t));
  second->retain = true;
  on(0, [&](Broker& b) { b.send({first}, nullptr); });
  on(2, [&](Broker& b) { b.send({second}, nullptr); });
  std::size_t held = 0;
  for (auto& b : brokers_) held += b->retained().size();
  EXPECT_EQ(held, 1u);
  std::vector<store::RecordKind> kinds;
  for (const auto& r : store_.records) {
    if (r.queue == "retained:sensors.t2") kinds.push_back(r.kind);
  }
  EXPECT_EQ(kinds, (std::vector<store::RecordKind>{store::RecordKind::message, store::RecordKind::ack,
                                                   store::RecordKind::message}));
}

}  // namespace
}  // namespace carrier::core
