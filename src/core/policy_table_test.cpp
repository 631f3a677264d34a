#include "core/policy_table.hpp"
#include "model/queue_key.hpp"

#include <gtest/gtest.h>

namespace carrier::core {

using model::DestinationKind;

namespace {

DestinationPolicy policy(std::string match, std::uint32_t max_deliveries) {
  DestinationPolicy p;
  p.match = std::move(match);
  p.max_deliveries = max_deliveries;
  return p;
}

// The first policy whose kind and filter cover a destination applies; none: the defaults.
TEST(PolicyTableTest, FirstMatchByKindAndFilterWins) {
  const PolicyTable table({policy("queue:orders.*", 1), policy("topic:orders.>", 2), policy("orders.>", 3)});
  EXPECT_EQ(table.policy_for({DestinationKind::queue, "orders.eu"}).max_deliveries, 1u);
  EXPECT_EQ(table.policy_for({DestinationKind::topic, "orders.eu"}).max_deliveries, 2u);
  // A queue policy covers temporary queues too.
  EXPECT_EQ(table.policy_for({DestinationKind::temp_queue, "orders.t"}).max_deliveries, 1u);
  // A bare pattern covers both kinds.
  EXPECT_EQ(table.policy_for({DestinationKind::queue, "orders.eu.north"}).max_deliveries, 3u);
  EXPECT_EQ(table.policy_for({DestinationKind::queue, "invoices"}).max_deliveries, 0u);
  EXPECT_EQ(&table.policy_for({DestinationKind::queue, "invoices"}), &table.policy_for({DestinationKind::topic, "x"}));
}

}  // namespace
}  // namespace carrier::core
