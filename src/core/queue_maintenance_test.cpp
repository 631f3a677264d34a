#include "core/queue_maintenance.hpp"

#include <gtest/gtest.h>

#include "core/broker.hpp"
#include "core/broker_test_fixture.hpp"

namespace carrier::core {
namespace {

using namespace broker_testing;

const std::string kKey = "queue:orders";
const model::Destination kRetryQueue{model::DestinationKind::queue, "orders.retry"};

class QueueMaintenanceTest : public BrokerTest {
 protected:
  // Three messages in "orders", with a property n = 0, 1, 2.
  void fill() {
    on(0, [&](Broker& b) {
      std::vector<model::MessagePtr> ms;
      for (int i = 0; i < 3; ++i) {
        auto m = std::make_shared<model::Message>(*make("m" + std::to_string(i), kQueue, true));
        m->properties.emplace_back("n", std::to_string(i));
        ms.push_back(std::move(m));
      }
      b.send(std::move(ms), nullptr);
    });
    store_.complete_all();
    ex_.drain();
  }
  std::vector<std::string> browse(std::uint32_t shard, const std::string& key) {
    std::vector<std::string> out;
    on(shard, [&](Broker& b) {
      browse_queue(b, key, 0, 100, [&](Result<std::vector<BrowsedMessage>> r) {
        ASSERT_TRUE(r);
        for (const auto& m : *r) out.push_back(*m.message->body);
      });
    });
    return out;
  }
  static MessageFilter n_is(std::string v) {
    return [v](const model::Message& m) {
      for (const auto& [k, value] : m.properties) {
        if (k == "n") return value == v;
      }
      return false;
    };
  }
};

TEST_F(QueueMaintenanceTest, BrowseLeavesMessagesInPlaceFromAnyShard) {
  fill();
  EXPECT_EQ(browse(1, kKey), (std::vector<std::string>{"m0", "m1", "m2"}));
  EXPECT_EQ(browse(2, kKey), (std::vector<std::string>{"m0", "m1", "m2"}));
  bool not_found = false;
  on(0, [&](Broker& b) {
    browse_queue(b, "queue:none", 0, 10, [&](auto r) { not_found = !r && r.error().code == Errc::not_found; });
  });
  EXPECT_TRUE(not_found);
}

TEST_F(QueueMaintenanceTest, PurgeBySelectorWritesAcksBeforeAnswering) {
  fill();
  std::optional<std::size_t> purged;
  on(1, [&](Broker& b) { purge_queue(b, kKey, n_is("1"), SIZE_MAX, [&](auto r) { purged = *r; }); });
  EXPECT_FALSE(purged) << "answered before the store took the acks";
  store_.complete_all();
  ex_.drain();
  EXPECT_EQ(purged, 1u);
  EXPECT_EQ(browse(0, kKey), (std::vector<std::string>{"m0", "m2"}));
}

TEST_F(QueueMaintenanceTest, MoveTakesTheOriginalsOnlyOnceTheCopiesAreStored) {
  fill();
  std::optional<std::size_t> moved;
  on(2, [&](Broker& b) { move_messages(b, kKey, kRetryQueue, n_is("2"), 10, true, [&](auto r) { moved = *r; }); });
  EXPECT_EQ(browse(0, kKey), (std::vector<std::string>{"m0", "m1"})) << "out of the ready list meanwhile";
  store_.complete_all();  // the copies
  ex_.drain();
  store_.complete_all();  // the originals' acks
  ex_.drain();
  EXPECT_EQ(moved, 1u);
  EXPECT_EQ(browse(0, "queue:orders.retry"), (std::vector<std::string>{"m2"}));
  EXPECT_EQ(browse(0, kKey), (std::vector<std::string>{"m0", "m1"}));
}

TEST_F(QueueMaintenanceTest, FailedMoveGivesTheMessagesBack) {
  fill();
  bool failed = false;
  on(2, [&](Broker& b) { move_messages(b, kKey, kRetryQueue, {}, 10, true, [&](auto r) { failed = !r; }); });
  store_.complete_all(unexpected(Errc::io_error, "disk full"));
  ex_.drain();
  EXPECT_TRUE(failed);
  EXPECT_EQ(browse(0, kKey), (std::vector<std::string>{"m0", "m1", "m2"}));
}

TEST_F(QueueMaintenanceTest, CountersFollowPublishAndDelivery) {
  fill();
  auto c = std::make_shared<Collector>();
  on(1, [&](Broker& b) { (void)b.subscribe({kQueue, AckMode::client_individual, 10, c}, nullptr); });
  ASSERT_EQ(c->got.size(), 3u);
  std::uint64_t published = 0, delivered = 0, latencies = 0;
  for (auto& b : brokers_) {
    published += b->context().counters.published;
    delivered += b->context().counters.delivered;
    latencies += b->context().counters.publish_to_deliver.count();
  }
  EXPECT_EQ(published, 3u);
  EXPECT_EQ(delivered, 3u);
  EXPECT_EQ(latencies, 3u);
}

}  // namespace
}  // namespace carrier::core
