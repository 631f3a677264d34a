#include "core/broker.hpp"

#include <gtest/gtest.h>

#include "core/broker_test_fixture.hpp"
#include "model/queue_key.hpp"

namespace carrier::core {

namespace {

// The router: what a send matched, planned on the shard it arrives at.

using namespace broker_testing;

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

// The producer waits for the owners' verdict only where a destination may refuse.
TEST_F(BrokerTest, RouterWaitsForAVerdictOnlyWhereADestinationMayRefuse) {
  Options o;
  DestinationPolicy reject;
  reject.match = "queue:limited";
  reject.max_messages = 1;
  DestinationPolicy block = reject;
  block.match = "blocking";
  block.overflow = OverflowPolicy::block;
  o.policies = {reject, block};
  build(o);
  auto& router = brokers_[0]->router();
  auto routed = [&](Destination d) {
    auto m = make("x", d);
    return std::vector<Routed>{Routed{m->destination.key(), m}};
  };
  EXPECT_FALSE(router.needs_verdict(routed(kQueue)));
  EXPECT_TRUE(router.needs_verdict(routed({DestinationKind::queue, "limited"})));
  EXPECT_TRUE(router.needs_verdict(routed({DestinationKind::temp_queue, "t1"})));
  // `block` takes the message on a queue, and refuses like `reject` elsewhere.
  EXPECT_FALSE(router.needs_verdict(routed({DestinationKind::queue, "blocking"})));
  EXPECT_TRUE(router.needs_verdict(routed({DestinationKind::topic, "blocking"})));
}

}  // namespace
}  // namespace carrier::core
