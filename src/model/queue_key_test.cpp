#include "model/queue_key.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "model/message.hpp"

namespace carrier::model {
namespace {

struct Case {
  QueueKey key;
  std::string text;
};

std::vector<Case> every_kind() {
  return {{QueueKey::queue("orders.eu"), "queue:orders.eu"},
          {QueueKey::queue("$subscriptions"), "queue:$subscriptions"},
          {QueueKey::temp_queue("t-1"), "temp-queue:t-1"},
          {QueueKey::topic("a.b"), "topic:a.b"},
          {QueueKey::subscription("stomp:app:s1"), "subscription:stomp:app:s1"},
          {QueueKey::retained("sensors.t1"), "retained:sensors.t1"},
          {QueueKey::client("dev-7"), "client:dev-7"},
          {QueueKey::scheduled_topic("ticks"), "queue:$scheduled-topic:ticks"}};
}

TEST(QueueKey, FormatsAndParsesBackEveryKind) {
  for (const auto& [key, text] : every_kind()) {
    EXPECT_EQ(key.str(), text);
    auto back = QueueKey::parse(text);
    ASSERT_TRUE(back.has_value()) << text;
    EXPECT_EQ(*back, key) << text;
    EXPECT_EQ(back->kind(), key.kind());
    EXPECT_EQ(back->name(), key.name());
  }
}

TEST(QueueKey, NamesKeepTheirColonsAndMayBeEmpty) {
  auto k = QueueKey::parse("subscription:mqtt:dev:a/b:c");
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(k->kind(), QueueKind::subscription);
  EXPECT_EQ(k->name(), "mqtt:dev:a/b:c");
  auto empty = QueueKey::parse("queue:");
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(*empty, QueueKey::queue(""));
}

TEST(QueueKey, RefusesUnknownPrefixesAndGarbage) {
  for (std::string_view bad : {"", "queue", "Queue:x", "queues:x", "topics:x", "temp_queue:x", "subscriptions:x",
                               ":x", "x:queue:y", " queue:x", "retain:x", "clients:x", "\xff\x00queue:"}) {
    EXPECT_FALSE(QueueKey::parse(bad).has_value()) << bad;
  }
}

TEST(QueueKey, ScheduledTopicIsTheLongerPrefix) {
  // Inside "queue:", so parse must try it first; a plain `$` queue stays a queue.
  EXPECT_EQ(QueueKey::parse("queue:$scheduled-topic:a.b")->kind(), QueueKind::scheduled_topic);
  EXPECT_EQ(QueueKey::parse("queue:$scheduled-topic:a.b")->name(), "a.b");
  EXPECT_EQ(QueueKey::parse("queue:$scheduled-topics")->kind(), QueueKind::queue);
  EXPECT_EQ(QueueKey::parse("queue:$mqtt-sessions")->kind(), QueueKind::queue);
}

TEST(QueueKey, OfADestinationIsItsKey) {
  for (auto kind : {DestinationKind::queue, DestinationKind::topic, DestinationKind::temp_queue}) {
    const Destination d{kind, "x.y"};
    EXPECT_EQ(QueueKey::of(d).str(), d.key());
    EXPECT_EQ(Destination::from_key(d.key()), d);
  }
  EXPECT_FALSE(Destination::from_key("subscription:x").has_value());
}

// The hash every store's data was partitioned with before QueueKey existed (FNV-1a of the key
// string): recovery routes recovered records by it, so it must never change.
std::uint32_t reference_owner(std::string_view key, std::size_t shards) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return static_cast<std::uint32_t>(h % shards);
}

TEST(QueueKey, OwnerShardIsTheStringKeysShard) {
  for (std::size_t shards : {1u, 2u, 3u, 7u, 8u, 64u}) {
    for (const auto& [key, text] : every_kind()) {
      EXPECT_EQ(key.owner_shard(shards).value(), reference_owner(text, shards)) << text;
      EXPECT_EQ(owner_shard(text, shards), key.owner_shard(shards)) << text;
    }
  }
  EXPECT_EQ(owner_shard("queue:x", 0).value(), 0u);  // no shards: shard 0, not a division by zero
}

TEST(QueueKey, OwnerShardIsPinned) {
  // Literal values: a change to the hash would move existing data to other shards.
  EXPECT_EQ(owner_shard("queue:orders", 1000).value(), 641u);
  EXPECT_EQ(QueueKey::subscription("stomp:app:s1").owner_shard(1000).value(), 602u);
  EXPECT_EQ(QueueKey::client("dev-7").owner_shard(1000).value(), 585u);
  EXPECT_EQ(QueueKey::scheduled_topic("ticks").owner_shard(1000).value(), 993u);
}

}  // namespace
}  // namespace carrier::model
