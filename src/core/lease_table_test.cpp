#include "core/lease_table.hpp"

#include "core/broker_test_fixture.hpp"

namespace carrier::core {
namespace {

using namespace broker_testing;

class LeaseTableTest : public BrokerTest {
 protected:
  // A poll on shard `home`: a consumer with prefetch `max` on the queue, paused and its
  // deliveries leased for `visibility_ms`, as HTTP's ack=lease does.
  std::vector<LeaseId> poll(std::uint32_t home, std::uint32_t max, std::uint64_t visibility_ms,
                            const std::string& user = "u") {
    auto collector = std::make_shared<Collector>();
    std::vector<LeaseId> ids;
    on(home, [&](Broker& b) {
      auto reserved = b.leases().reserve(user, max, limits_);
      ASSERT_TRUE(reserved.has_value());
      auto id = b.subscribe({kQueue, AckMode::client_individual, *reserved, collector}, nullptr);
      ASSERT_TRUE(id.has_value());
      consumer_ = *id;
      reserved_ = *reserved;
    });
    on(home, [&](Broker& b) {
      b.pause(consumer_);
      ids = b.leases().grant(user, reserved_, consumer_, collector->got, visibility_ms);
      if (collector->got.empty()) b.unsubscribe(consumer_, nullptr);
    });
    last_ = collector;
    return ids;
  }
  void send(std::uint32_t from, const std::string& body) {
    on(from, [&](Broker& b) { b.send({make(body, kQueue, true)}, nullptr); });
    store_.complete_all();
    ex_.drain();
  }
  Status end(std::uint32_t from, const LeaseId& id, LeaseEnd how) {
    Status result = unexpected(Errc::unavailable, "not completed");
    on(from, [&](Broker& b) { b.end_lease(id, how, [&](Status st) { result = std::move(st); }); });
    store_.complete_all();
    ex_.drain();
    return result;
  }
  std::size_t ready() {
    std::size_t n = 0;
    for (auto& b : brokers_) n += b->stats().messages_ready;
    return n;
  }
  std::size_t unacked() {
    std::size_t n = 0;
    for (auto& b : brokers_) n += b->stats().messages_unacked;
    return n;
  }

  LeaseLimits limits_{100, 10};
  ConsumerId consumer_;
  std::uint32_t reserved_ = 0;
  std::shared_ptr<Collector> last_;
};

TEST(LeaseIdTest, TextFormRoundTrips) {
  LeaseId id{model::ShardId(3), 0x2a, 0x0123456789abcdefULL};
  EXPECT_EQ(id.to_string(), "3-2a-0123456789abcdef");
  auto back = LeaseId::parse(id.to_string());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->shard, id.shard);
  EXPECT_EQ(back->seq, id.seq);
  EXPECT_EQ(back->secret, id.secret);
  for (std::string_view bad : {"", "3", "3-2a", "3-2a-0123", "x-2a-0123456789abcdef", "3--0123456789abcdef",
                               "3-2a-0123456789abcdefg", "3-2a-0123456789abcdeg", "-1-2a-0123456789abcdef"}) {
    EXPECT_FALSE(LeaseId::parse(bad).has_value()) << bad;
  }
}

TEST_F(LeaseTableTest, AckFromAnotherShardRemovesTheMessageAndDetachesTheConsumer) {
  send(0, "a");
  auto ids = poll(1, 5, 30000);
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(ids[0].shard, model::ShardId(1));
  EXPECT_EQ(unacked(), 1u);
  EXPECT_TRUE(end(2, ids[0], LeaseEnd::ack).has_value());
  EXPECT_EQ(unacked(), 0u);
  EXPECT_EQ(ready(), 0u);
  EXPECT_EQ(brokers_[1]->leases().size(), 0u);
  EXPECT_FALSE(brokers_[1]->leases().holds(consumer_));
  EXPECT_EQ(brokers_[1]->leases().reserved_or_held(), 0u);
  // A second ack of the same lease: gone.
  auto again = end(0, ids[0], LeaseEnd::ack);
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code, Errc::not_found);
}

TEST_F(LeaseTableTest, WrongSecretOrShardIsNotFound) {
  send(0, "a");
  auto ids = poll(1, 5, 30000);
  ASSERT_EQ(ids.size(), 1u);
  LeaseId forged = ids[0];
  forged.secret ^= 1;
  EXPECT_EQ(end(0, forged, LeaseEnd::ack).error().code, Errc::not_found);
  LeaseId elsewhere = ids[0];
  elsewhere.shard = model::ShardId(7);
  EXPECT_EQ(end(0, elsewhere, LeaseEnd::ack).error().code, Errc::not_found);
  EXPECT_EQ(unacked(), 1u);
}

TEST_F(LeaseTableTest, NackGivesTheMessageBackAtOnce) {
  send(0, "a");
  auto ids = poll(1, 5, 30000);
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_TRUE(end(1, ids[0], LeaseEnd::nack).has_value());
  EXPECT_EQ(ready(), 1u);
  auto again = poll(2, 5, 30000);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(last_->got[0].delivery_count, 2u);
  EXPECT_TRUE(last_->got[0].redelivered);
}

TEST_F(LeaseTableTest, RejectDeadLetters) {
  send(0, "a");
  auto ids = poll(1, 5, 30000);
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_TRUE(end(1, ids[0], LeaseEnd::reject).has_value());
  store_.complete_all();
  ex_.drain();
  std::size_t in_dlq = 0;
  for (auto& b : brokers_) {
    if (auto* oq = b->owned_queues().find(Destination{DestinationKind::queue, "DLQ.orders"}.key())) {
      in_dlq += oq->queue->depth();
    }
  }
  EXPECT_EQ(in_dlq, 1u);
}

TEST_F(LeaseTableTest, ALeaseThatRunsOutGivesTheMessageBack) {
  send(0, "a");
  auto ids = poll(1, 5, 1000);
  ASSERT_EQ(ids.size(), 1u);
  advance(999);
  EXPECT_EQ(unacked(), 1u);
  advance(1);
  EXPECT_EQ(ready(), 1u);
  EXPECT_EQ(brokers_[1]->leases().size(), 0u);
  EXPECT_EQ(end(1, ids[0], LeaseEnd::ack).error().code, Errc::not_found);
}

TEST_F(LeaseTableTest, APausedConsumerTakesNoMoreMessages) {
  send(0, "a");
  auto ids = poll(1, 5, 30000);
  ASSERT_EQ(ids.size(), 1u);
  send(0, "b");
  EXPECT_EQ(last_->got.size(), 1u);
  EXPECT_EQ(ready(), 1u);
}

TEST_F(LeaseTableTest, LimitsPerUserAndInTotal) {
  limits_ = {3, 2};
  on(0, [&](Broker& b) {
    EXPECT_EQ(*b.leases().reserve("alice", 5, limits_), 2u);
    auto full = b.leases().reserve("alice", 1, limits_);
    ASSERT_FALSE(full.has_value());
    EXPECT_EQ(full.error().code, Errc::limit_exceeded);
    EXPECT_EQ(*b.leases().reserve("bob", 5, limits_), 1u);
    EXPECT_FALSE(b.leases().reserve("carol", 1, limits_).has_value());
    b.leases().unreserve("alice", 2);
    EXPECT_EQ(*b.leases().reserve("carol", 5, limits_), 2u);
  });
}

TEST_F(LeaseTableTest, AnUnusedReservationIsGivenBackAtGrant) {
  limits_ = {0, 3};
  send(0, "a");
  auto ids = poll(1, 3, 30000);
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(brokers_[1]->leases().reserved_or_held(), 1u);
  on(1, [&](Broker& b) { EXPECT_EQ(*b.leases().reserve("u", 5, limits_), 2u); });
}

}  // namespace
}  // namespace carrier::core
