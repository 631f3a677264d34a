#include "admin/listing.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace carrier::admin
