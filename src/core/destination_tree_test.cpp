#include "core/destination_tree.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace carrier::core {
namespace {

std::vector<std::uint64_t> ids(const DestinationTree& t, std::string_view name) {
  std::vector<TopicSubscriber> out;
  t.match(name, out);
  std::vector<std::uint64_t> v;
  for (auto& s : out) v.push_back(s.id.value());
  std::sort(v.begin(), v.end());
  return v;
}

TopicSubscriber sub(std::uint64_t id) { return {ConsumerId(id), ShardId(0)}; }

TEST(DestinationTree, ExactAndWildcards) {
  DestinationTree t;
  t.add("a.b", sub(1));
  t.add("a.*", sub(2));
  t.add("a.>", sub(3));
  t.add("*.b", sub(4));
  t.add(">", sub(5));
  t.add("a.*.c", sub(6));
  EXPECT_EQ(ids(t, "a.b"), (std::vector<std::uint64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(ids(t, "a.b.c"), (std::vector<std::uint64_t>{3, 5, 6}));
  EXPECT_EQ(ids(t, "a"), (std::vector<std::uint64_t>{5}));
  EXPECT_EQ(ids(t, "x.y"), (std::vector<std::uint64_t>{5}));
  EXPECT_EQ(t.size(), 6u);
}

TEST(DestinationTree, LeadingWildcardsSkipDollarNames) {
  DestinationTree t;
  t.add(">", sub(1));
  t.add("*.b", sub(2));
  t.add("$x.b", sub(3));
  t.add("$x.>", sub(4));
  t.add("$x.*", sub(5));
  EXPECT_EQ(ids(t, "$x.b"), (std::vector<std::uint64_t>{3, 4, 5}));
  EXPECT_EQ(ids(t, "x.b"), (std::vector<std::uint64_t>{1, 2}));
}

TEST(DestinationTree, RemovePrunes) {
  DestinationTree t;
  t.add("a.*.c", sub(1));
  t.add("a.>", sub(2));
  EXPECT_TRUE(t.remove("a.*.c", ConsumerId(1)));
  EXPECT_FALSE(t.remove("a.*.c", ConsumerId(1)));
  EXPECT_EQ(ids(t, "a.b.c"), (std::vector<std::uint64_t>{2}));
  EXPECT_TRUE(t.remove("a.>", ConsumerId(2)));
  EXPECT_TRUE(ids(t, "a.b.c").empty());
  EXPECT_EQ(t.size(), 0u);
}

TEST(DestinationTree, FilterValidity) {
  EXPECT_TRUE(DestinationTree::is_valid_filter("a.b"));
  EXPECT_TRUE(DestinationTree::is_valid_filter("a.*.>"));
  EXPECT_FALSE(DestinationTree::is_valid_filter("a.>.b"));
  EXPECT_FALSE(DestinationTree::is_valid_filter("a..b"));
  EXPECT_FALSE(DestinationTree::is_valid_filter("a.b*"));
  EXPECT_FALSE(DestinationTree::is_valid_filter(""));
  EXPECT_TRUE(DestinationTree::has_wildcards("a.*"));
  EXPECT_FALSE(DestinationTree::has_wildcards("a.b"));
}

TEST(DestinationTree, ManySubscriptionsMatchOnlyTheirs) {
  DestinationTree t;
  for (std::uint64_t i = 0; i < 10000; ++i) t.add("orders." + std::to_string(i), sub(i));
  EXPECT_EQ(ids(t, "orders.1234"), (std::vector<std::uint64_t>{1234}));
  EXPECT_TRUE(ids(t, "orders").empty());
}

}  // namespace
}  // namespace carrier::core
