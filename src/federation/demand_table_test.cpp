#include "federation/demand_table.hpp"

#include <gtest/gtest.h>

namespace carrier::federation {
namespace {

TEST(DemandTable, LocalConsumersCountedFirstAndLastReported) {
  DemandTable t(5);
  EXPECT_TRUE(t.add_local("queue:a"));
  EXPECT_FALSE(t.add_local("queue:a"));
  EXPECT_EQ(t.local_count("queue:a"), 2u);
  EXPECT_FALSE(t.remove_local("queue:a"));
  EXPECT_TRUE(t.remove_local("queue:a"));
  EXPECT_FALSE(t.remove_local("queue:a"));  // never below zero
  EXPECT_EQ(t.local_count("queue:a"), 0u);
}

TEST(DemandTable, AdvertisesLocalAndOthersOneHopFurtherNeverBack) {
  DemandTable t(5);
  t.add_local("topic:x");
  t.set_peer(1, Demand{{"queue:q", 0}, {"topic:x", 2}});
  t.set_peer(2, Demand{{"queue:q", 3}});
  EXPECT_EQ(t.advertised_to(1), (Demand{{"topic:x", 0}, {"queue:q", 4}}));
  EXPECT_EQ(t.advertised_to(2), (Demand{{"topic:x", 0}, {"queue:q", 1}}));
  EXPECT_EQ(t.advertised_to(3), (Demand{{"topic:x", 0}, {"queue:q", 1}}));
}

TEST(DemandTable, DemandFadesAtTheTtl) {
  DemandTable t(3);
  t.set_peer(1, Demand{{"queue:near", 1}, {"queue:far", 2}});
  EXPECT_EQ(t.advertised_to(2), (Demand{{"queue:near", 2}}));
  t.remove_peer(1);
  EXPECT_TRUE(t.advertised_to(2).empty());
}

TEST(DemandTable, PropertyRoundTrip) {
  const Demand d{{"queue:orders", 0}, {"topic:prices.>", 3}};
  const auto p = to_property(d);
  ASSERT_NE(p.find("selectors"), nullptr);
  EXPECT_EQ(*p.find("selectors"), (std::vector<std::string>{"queue:orders", "topic:prices.>"}));
  EXPECT_EQ(*from_property(p), d);
  EXPECT_TRUE(from_property(codec::NodeProperty{})->empty());
}

TEST(DemandTable, BadDistancesRefused) {
  codec::NodeProperty p{{{"selectors", {"queue:a"}}, {"distances", {}}}};
  EXPECT_FALSE(from_property(p));
  p.entries[1].values = {"-1"};
  EXPECT_FALSE(from_property(p));
  p.entries[1].values = {"1x"};
  EXPECT_FALSE(from_property(p));
  p.entries[1].values = {"99999999999"};
  EXPECT_FALSE(from_property(p));
  p.entries[1].values = {"2"};
  EXPECT_TRUE(from_property(p));
}

}  // namespace
}  // namespace carrier::federation
