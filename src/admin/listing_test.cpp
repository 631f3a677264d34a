#include "admin/listing.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

namespace carrier::admin {
namespace {

std::vector<QueueRow> sample() {
  return {QueueRow{"queue:orders", 5}, QueueRow{"queue:audit", 9}, QueueRow{"temp-queue:t1", 1},
          QueueRow{"subscription:stomp:app:s1", 2}, QueueRow{"queue:$mqtt-sessions", 100},
          QueueRow{"queue:$scheduled-topic:x", 3}, QueueRow{"queue:orders.eu", 5}};
}

std::vector<std::string> names(const Page<DestinationRow>& page) {
  std::vector<std::string> out;
  for (const auto& r : page.rows) out.push_back(r.kind + ":" + r.name);
  return out;
}

TEST(Listing, DestinationsSkipTheBrokersOwnQueuesAndSortByName) {
  auto page = list_destinations(sample(), "", PageRequest{});
  ASSERT_TRUE(page);
  EXPECT_EQ(page->total, 5u);
  EXPECT_EQ(names(*page), (std::vector<std::string>{"queue:audit", "queue:orders", "queue:orders.eu",
                                                    "subscription:stomp:app:s1", "temp-queue:t1"}));
}

TEST(Listing, FilterKindSortDescendingAndPages) {
  PageRequest r;
  r.sort = "depth";
  r.descending = true;
  auto page = list_destinations(sample(), "queue", r);
  ASSERT_TRUE(page);
  EXPECT_EQ(names(*page), (std::vector<std::string>{"queue:audit", "queue:orders", "queue:orders.eu"}));
  r.filter = "orders";
  r.offset = 1;
  r.limit = 5;
  page = list_destinations(sample(), "queue", r);
  ASSERT_TRUE(page);
  EXPECT_EQ(page->total, 2u);
  EXPECT_EQ(names(*page), (std::vector<std::string>{"queue:orders.eu"}));
  r.offset = 10;
  page = list_destinations(sample(), "queue", r);
  ASSERT_TRUE(page);
  EXPECT_TRUE(page->rows.empty());
}

TEST(Listing, APageOfASortKeepsNameOrderAmongEqualKeys) {
  // 1000 queues, depth i % 7: each depth's queues must come out in name order, on every page.
  std::vector<QueueRow> rows;
  for (int i = 0; i < 1000; ++i) {
    rows.push_back(QueueRow{fmt::format("queue:q{:04}", 999 - i), static_cast<std::size_t>(i % 7)});
  }
  const auto by_name = destination_rows(rows);
  ASSERT_EQ(by_name.size(), 1000u);
  for (bool descending : {false, true}) {
    PageRequest all;
    all.sort = "depth";
    all.descending = descending;
    all.limit = 1000;
    auto whole = list_destinations(by_name, "", all);
    ASSERT_TRUE(whole);
    for (std::size_t i = 1; i < whole->rows.size(); ++i) {
      const auto& a = whole->rows[i - 1];
      const auto& b = whole->rows[i];
      if (a.stats.depth == b.stats.depth) {
        EXPECT_LT(a.name, b.name);
      } else {
        EXPECT_EQ(a.stats.depth > b.stats.depth, descending);
      }
    }
    // Pages cut from the same order.
    PageRequest r = all;
    r.limit = 30;
    for (std::size_t offset : {0u, 30u, 970u, 990u}) {
      r.offset = offset;
      auto page = list_destinations(by_name, "", r);
      ASSERT_TRUE(page);
      EXPECT_EQ(page->total, 1000u);
      ASSERT_EQ(page->rows.size(), std::min<std::size_t>(30, 1000 - offset));
      for (std::size_t i = 0; i < page->rows.size(); ++i) EXPECT_EQ(page->rows[i].name, whole->rows[offset + i].name);
    }
  }
  PageRequest named;
  named.descending = true;
  named.limit = 2;
  auto page = list_destinations(by_name, "queue", named);
  ASSERT_TRUE(page);
  EXPECT_EQ(names(*page), (std::vector<std::string>{"queue:q0999", "queue:q0998"}));
}

TEST(Listing, UnknownSortKeyIsAnError) {
  PageRequest r;
  r.sort = "colour";
  auto page = list_destinations(sample(), "", r);
  ASSERT_FALSE(page);
  EXPECT_EQ(page.error().code, Errc::invalid_argument);
  EXPECT_NE(page.error().detail.find("depth"), std::string::npos);
  EXPECT_FALSE(list_connections({}, r));
}

TEST(Listing, ConnectionsByProtocolOrPeer) {
  std::vector<ConnectionRow> rows{{3, "mqtt", "127.0.0.1:5"}, {1, "stomp", "10.0.0.1:7"}, {2, "stomp", "127.0.0.1:9"}};
  PageRequest r;
  r.filter = "stomp";
  auto page = list_connections(rows, r);
  ASSERT_TRUE(page);
  ASSERT_EQ(page->rows.size(), 2u);
  EXPECT_EQ(page->rows[0].id, 1u);
  r.filter = "127.0.0.1";
  r.sort = "id";
  r.descending = true;
  page = list_connections(rows, r);
  ASSERT_TRUE(page);
  ASSERT_EQ(page->rows.size(), 2u);
  EXPECT_EQ(page->rows[0].id, 3u);
}

TEST(Listing, AgeSortsOldestFirstDescendingAndEmptyQueuesLast) {
  std::vector<QueueRow> rows{QueueRow{"queue:young"}, QueueRow{"queue:empty"}, QueueRow{"queue:old"}};
  rows[0].oldest_timestamp_ms = 2000;
  rows[2].oldest_timestamp_ms = 1000;
  PageRequest r;
  r.sort = "age";
  r.descending = true;
  auto page = list_destinations(rows, "", r);
  ASSERT_TRUE(page);
  EXPECT_EQ(names(*page), (std::vector<std::string>{"queue:old", "queue:young", "queue:empty"}));
}

TEST(Listing, ConnectionsFilterByClientIdOrUserAndSortByRate) {
  std::vector<ConnectionRow> rows(3);
  rows[0].id = 1, rows[0].protocol = "stomp", rows[0].client_id = "billing-1", rows[0].messages.in_per_second = 5;
  rows[1].id = 2, rows[1].protocol = "mqtt", rows[1].user = "alice", rows[1].messages.in_per_second = 50;
  rows[2].id = 3, rows[2].protocol = "mqtt", rows[2].client_id = "sensor", rows[2].messages.in_per_second = 1;
  PageRequest r;
  r.filter = "billing";
  auto page = list_connections(rows, r);
  ASSERT_TRUE(page);
  ASSERT_EQ(page->total, 1u);
  EXPECT_EQ(page->rows[0].id, 1u);
  r.filter = "alice";
  page = list_connections(rows, r);
  ASSERT_TRUE(page);
  ASSERT_EQ(page->total, 1u);
  EXPECT_EQ(page->rows[0].id, 2u);
  r.filter.clear();
  r.sort = "in";
  r.descending = true;
  page = list_connections(rows, r);
  ASSERT_TRUE(page);
  ASSERT_EQ(page->rows.size(), 3u);
  EXPECT_EQ(page->rows[0].id, 2u);
  EXPECT_EQ(page->rows[2].id, 3u);
}

TEST(Listing, TopicsSkipTheBrokersOwnAndSortBySubscriptions) {
  std::vector<TopicRow> rows{TopicRow{"prices.>", 3}, TopicRow{"$SYS/#", 9}, TopicRow{"alerts", 1}};
  PageRequest r;
  auto page = list_topics(rows, r);
  ASSERT_TRUE(page);
  EXPECT_EQ(page->total, 2u);
  EXPECT_EQ(page->rows[0].filter, "alerts");
  r.sort = "subscriptions";
  r.descending = true;
  page = list_topics(rows, r);
  ASSERT_TRUE(page);
  EXPECT_EQ(page->rows[0].filter, "prices.>");
  r.sort = "bogus";
  EXPECT_FALSE(list_topics(rows, r));
}

}  // namespace
}  // namespace carrier::admin
