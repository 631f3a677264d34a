#include "core/destination_tree.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace carrier::core {

using model::ShardId;

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

TEST(DestinationTree, ManySubscribersOfOneFilterComeAndGoInAnyOrder) {
  // Past a few dozen subscribers a filter's list is indexed: removal by swap, not by shift.
  DestinationTree t;
  const std::uint64_t n = 5000;
  std::vector<std::uint64_t> all;
  for (std::uint64_t i = 1; i <= n; ++i) {
    t.add("news", sub(i));
    t.add("news.>", sub(i));
    all.push_back(i);
  }
  t.add("news", TopicSubscriber{ConsumerId(0), ShardId(1), "subscription:named-a"});
  t.add("news", TopicSubscriber{ConsumerId(0), ShardId(1), "subscription:named-b"});
  EXPECT_EQ(t.size(), 2 * n + 2);
  // Every third, from the middle outwards, then the rest from the end: orders that move others.
  std::vector<std::uint64_t> left;
  for (std::uint64_t i = 1; i <= n; ++i) {
    if (i % 3 == 0) {
      EXPECT_TRUE(t.remove("news", ConsumerId(i)));
      EXPECT_TRUE(t.remove("news.>", ConsumerId(i)));
    } else {
      left.push_back(i);
    }
  }
  EXPECT_FALSE(t.remove("news", ConsumerId(3)));  // gone already
  EXPECT_TRUE(t.remove_named("news", "subscription:named-a"));
  EXPECT_FALSE(t.remove_named("news", "subscription:named-a"));
  std::vector<std::uint64_t> expect = left;
  expect.insert(expect.begin(), 0);  // named-b
  EXPECT_EQ(ids(t, "news"), expect);
  EXPECT_EQ(ids(t, "news.x"), left);
  while (left.size() > 3) {
    EXPECT_TRUE(t.remove("news", ConsumerId(left.back())));
    EXPECT_TRUE(t.remove("news.>", ConsumerId(left.back())));
    left.pop_back();
  }
  EXPECT_EQ(ids(t, "news.x"), left);
  expect = left;
  expect.insert(expect.begin(), 0);
  EXPECT_EQ(ids(t, "news"), expect);
  EXPECT_TRUE(t.remove_named("news", "subscription:named-b"));
  for (auto id : left) {
    EXPECT_TRUE(t.remove("news", ConsumerId(id)));
    EXPECT_TRUE(t.remove("news.>", ConsumerId(id)));
  }
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
