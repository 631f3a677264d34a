#include "core/destination_budget.hpp"

#include <gtest/gtest.h>

#include "core/broker.hpp"
#include "core/broker_test_fixture.hpp"

namespace carrier::core {
namespace {

// [limits] max_destinations across shards: a client naming new queues or subscriptions past it
// is refused; what exists keeps working, and a freed queue makes room.

using namespace broker_testing;

class DestinationBudgetTest : public BrokerTest {
 protected:
  DestinationBudgetTest() : budget_(3) {
    for (auto& b : brokers_) b->set_destination_budget(&budget_);
  }

  Status send_to(std::uint32_t shard, const std::string& queue) {
    Status result = unexpected(Errc::unavailable, "no answer");
    on(shard, [&](Broker& b) {
      b.send({make("m", model::Destination{model::DestinationKind::queue, queue})}, [&](Status st) { result = st; });
    });
    return result;
  }

  DestinationBudget budget_;
};

TEST_F(DestinationBudgetTest, NewQueuesPastTheCapAreRefusedExistingOnesServed) {
  EXPECT_TRUE(send_to(0, "a").has_value());
  EXPECT_TRUE(send_to(1, "b").has_value());
  EXPECT_TRUE(send_to(2, "c").has_value());
  EXPECT_EQ(budget_.count(), 3u);
  const auto refused = send_to(0, "d");
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, Errc::limit_exceeded);
  EXPECT_NE(refused.error().detail.find("max_destinations"), std::string::npos);
  EXPECT_EQ(budget_.refused(), 1u);
  EXPECT_EQ(budget_.count(), 3u);
  EXPECT_TRUE(send_to(1, "a").has_value());  // an existing queue takes messages still
  EXPECT_EQ(total_queues(), 3u);
}

TEST_F(DestinationBudgetTest, SubscribingToANewQueueAndANewNamedSubscriptionAreRefusedToo) {
  EXPECT_TRUE(send_to(0, "a").has_value());
  EXPECT_TRUE(send_to(0, "b").has_value());
  EXPECT_TRUE(send_to(0, "c").has_value());
  auto c = std::make_shared<Collector>();
  Status subscribed = ok();
  on(1, [&](Broker& b) {
    auto id = b.subscribe({model::Destination{model::DestinationKind::queue, "new"}, AckMode::auto_ack, 0, c},
                          [&](Status st) { subscribed = st; });
    EXPECT_TRUE(id.has_value());  // refused on the owner shard, which answers the completion
  });
  ASSERT_FALSE(subscribed.has_value());
  EXPECT_EQ(subscribed.error().code, Errc::limit_exceeded);

  SubscribeRequest named{kTopic, AckMode::auto_ack, 0, c};
  named.subscription_name = "stomp:app:s1";
  named.durable = true;
  on(2, [&](Broker& b) {
    auto id = b.subscribe(named, nullptr);
    ASSERT_FALSE(id.has_value());
    EXPECT_EQ(id.error().code, Errc::limit_exceeded);
  });
  // A plain topic subscription is not a destination: it is served.
  on(2, [&](Broker& b) { EXPECT_TRUE(b.subscribe({kTopic, AckMode::auto_ack, 0, c}, nullptr).has_value()); });
}

TEST_F(DestinationBudgetTest, AQueueCollectedWhenEmptyGivesItsPlaceBack) {
  auto c = std::make_shared<Collector>();
  ConsumerId id;
  const model::Destination q{model::DestinationKind::queue, "work"};
  on(0, [&](Broker& b) { id = *b.subscribe({q, AckMode::auto_ack, 0, c}, nullptr); });
  EXPECT_EQ(budget_.count(), 1u);
  on(0, [&](Broker& b) { b.unsubscribe(id, nullptr); });  // empty, no consumer: freed at once
  EXPECT_EQ(budget_.count(), 0u);
  EXPECT_EQ(total_queues(), 0u);
}

}  // namespace
}  // namespace carrier::core
