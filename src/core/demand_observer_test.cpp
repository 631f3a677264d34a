#include "core/demand_observer.hpp"

#include <gtest/gtest.h>

#include "core/broker.hpp"
#include "core/broker_test_fixture.hpp"

namespace carrier::core {
namespace {

using namespace broker_testing;

// The Broker tells a DemandObserver of consumers coming and going, except bridges'.

struct RecordingObserver : DemandObserver {
  void consumer_added(const model::Destination& d) override { events.push_back("+" + d.key()); }
  void consumer_removed(const model::Destination& d) override { events.push_back("-" + d.key()); }
  std::vector<std::string> events;
};

class DemandObserverTest : public BrokerTest {
 protected:
  DemandObserverTest() {
    for (auto& b : brokers_) b->set_demand_observer(&observer_);
  }
  RecordingObserver observer_;
};

TEST_F(DemandObserverTest, ConsumersOfQueuesAndTopicsAreReportedBothWays) {
  auto c = std::make_shared<Collector>();
  ConsumerId queue_consumer, topic_consumer;
  on(1, [&](Broker& b) {
    queue_consumer = *b.subscribe({Destination{DestinationKind::queue, "orders"}, AckMode::auto_ack, 0, c}, nullptr);
    topic_consumer = *b.subscribe({Destination{DestinationKind::topic, "prices.>"}, AckMode::auto_ack, 0, c}, nullptr);
  });
  EXPECT_EQ(observer_.events, (std::vector<std::string>{"+queue:orders", "+topic:prices.>"}));
  on(1, [&](Broker& b) {
    b.unsubscribe(queue_consumer, nullptr);
    b.unsubscribe(topic_consumer, nullptr);
    b.unsubscribe(topic_consumer, nullptr);  // a second time: nothing more to report
  });
  EXPECT_EQ(observer_.events,
            (std::vector<std::string>{"+queue:orders", "+topic:prices.>", "-queue:orders", "-topic:prices.>"}));
}

TEST_F(DemandObserverTest, BridgeConsumersAreNotDemand) {
  auto c = std::make_shared<Collector>();
  on(0, [&](Broker& b) {
    SubscribeRequest request{Destination{DestinationKind::queue, "orders"}, AckMode::client_individual, 10, c};
    request.bridge = true;
    auto id = b.subscribe(std::move(request), nullptr);
    ASSERT_TRUE(id);
    b.unsubscribe(*id, nullptr);
  });
  EXPECT_TRUE(observer_.events.empty());
}

TEST_F(DemandObserverTest, ARefusedSubscribeIsNoDemand) {
  auto c = std::make_shared<Collector>();
  on(0, [&](Broker& b) {
    EXPECT_FALSE(b.subscribe({Destination{DestinationKind::queue, ""}, AckMode::auto_ack, 0, c}, nullptr));
  });
  EXPECT_TRUE(observer_.events.empty());
}

}  // namespace
}  // namespace carrier::core
