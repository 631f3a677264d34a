// Tails at start-up (docs/storage.md, "Cold tails: the core"): whole lanes handed back by the
// store as store::RecoveredTail become cold tails before any recovered message.
#include <gtest/gtest.h>

#include "core/cold_tail_test_fixture.hpp"

namespace carrier::core {
namespace {

using namespace cold_tail_testing;

TEST_F(RecoveredTails, EachLaneBecomesAColdTailAndDrainsInPriorityThenStoreOrder) {
  for (int n = 1; n <= 300; ++n) stored(n, n % 2 == 0 ? 8 : 4);
  const auto before = memory_.used();
  tail(4, 1, 150);
  tail(8, 2, 150);
  Broker::recovered(peers());
  EXPECT_EQ(queue().depth(), 300u);
  EXPECT_EQ(queue().cold(), 300u);
  EXPECT_EQ(queue().ready_bytes(), 300u * (kBody + 200)) << "the tails' estimates, until read";
  EXPECT_LE(memory_.used() - before, 2 * OwnedQueues::kQueueOverheadBytes) << "no per-message state";
  EXPECT_TRUE(memory_.any_cold()) << "sends ask their location, so that arrivals can join the tails";
  auto c = subscribe();
  std::vector<std::uint64_t> want;
  for (int n = 2; n <= 300; n += 2) want.push_back(static_cast<std::uint64_t>(n));
  for (int n = 1; n <= 300; n += 2) want.push_back(static_cast<std::uint64_t>(n));
  EXPECT_EQ(ids(*c), want);
  EXPECT_EQ(queue().depth(), 0u);
  EXPECT_EQ(owner().context().counters.page_in_missing, 0u);
}

TEST_F(RecoveredTails, MessagesVisitedOneByOneInsideAndAfterATailComeOnceEach) {
  for (int n = 1; n <= 100; ++n) stored(n);
  // Visited one by one, so not in the tail's count: inside its range a scheduled summary, a
  // scheduled full message, a full message and a plain summary; after it, summaries.
  store_.records[at(50).file].message = [&] {
    auto m = std::make_shared<Message>(*make_message(50));
    m->deliver_at_ms = now_ + 5000;
    return MessagePtr(m);
  }();
  store_.records[at(55).file].message = [&] {
    auto m = std::make_shared<Message>(*make_message(55));
    m->deliver_at_ms = now_ + 5000;
    return MessagePtr(m);
  }();
  for (int n = 101; n <= 110; ++n) stored(n);
  tail(4, 1, 96);
  summary(store_.records[at(50).file].message, 50, now_ + 5000);
  Broker::recover(peers(), store::RecoveredMessage{kQueue.key(), store_.records[at(55).file].message, 0, at(55)});
  Broker::recover(peers(), store::RecoveredMessage{kQueue.key(), store_.records[at(60).file].message, 0, at(60)});
  summary(store_.records[at(70).file].message, 70);
  for (int n = 101; n <= 110; ++n) summary(store_.records[at(n).file].message, n);
  Broker::recovered(peers());
  EXPECT_EQ(queue().depth(), 108u) << "the two scheduled ones wait in the schedule";
  auto c = subscribe();
  std::vector<std::uint64_t> want;
  for (int n = 1; n <= 110; ++n) {
    if (n != 50 && n != 55) want.push_back(static_cast<std::uint64_t>(n));
  }
  EXPECT_EQ(ids(*c), want) << "in store order, the scheduled ones skipped";
  now_ += 6000;
  ex_.fire_timers();
  settle();
  auto got = ids(*c);
  ASSERT_EQ(got.size(), 110u);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(std::adjacent_find(got.begin(), got.end()), got.end()) << "no duplicates";
  EXPECT_EQ(got.front(), 1u);
  EXPECT_EQ(got.back(), 110u);
  EXPECT_EQ(owner().context().counters.page_in_missing, 0u);
}

TEST_F(RecoveredTails, AnOvercountedTailIsCorrectedAndAnEmptyOneIsNone) {
  for (int n = 1; n <= 40; ++n) stored(n);
  tail(4, 1, 50);
  tail(7, 1, 0);
  Broker::recovered(peers());
  EXPECT_EQ(queue().depth(), 50u);
  ASSERT_NE(queue().cold_tail(7), nullptr);
  EXPECT_FALSE(queue().cold_tail(7)->active()) << "an empty tail holds nothing back";
  auto c = subscribe();
  EXPECT_EQ(c->got.size(), 40u);
  EXPECT_EQ(queue().depth(), 0u);
  EXPECT_EQ(queue().ready_bytes(), 0u);
  EXPECT_EQ(owner().context().counters.page_in_missing, 10u) << "the difference, counted";
  send(41, 41);
  EXPECT_EQ(c->got.size(), 41u) << "the tail is gone: arrivals are not held";
}

TEST_F(RecoveredTails, ASubscriptionsTailWaitsForItsDefinition) {
  const std::string name = "stomp:app:r1";
  const std::string key = NamedSubscriptions::queue_key(name);
  for (int n = 1; n <= 30; ++n) stored(n, 4, key);
  tail(4, 1, 30, key);
  tail(4, 1, 5, NamedSubscriptions::queue_key("gone"));
  auto def = std::make_shared<Message>();
  def->id = MessageId{9, 9};
  def->destination = {DestinationKind::queue, "$subscriptions"};
  def->persistent = true;
  def->properties = {{"name", name}, {"filter", "news"}, {"selector", ""}};
  Broker::recover(peers(), store::RecoveredMessage{"queue:$subscriptions", def, 0, {}});
  Broker::recovered(peers());
  auto& b = *brokers_[model::owner_shard(key, kShards).value()];
  auto* oq = b.owned_queues().find(key);
  ASSERT_NE(oq, nullptr);
  EXPECT_EQ(oq->queue->cold(), 30u);
  for (auto& br : brokers_) EXPECT_EQ(br->owned_queues().find(NamedSubscriptions::queue_key("gone")), nullptr);
  auto c = std::make_shared<broker_testing::Collector>();
  SubscribeRequest req{{DestinationKind::topic, "news"}, AckMode::auto_ack, 1000, c};
  req.subscription_name = name;
  req.durable = true;
  on(1, [&](Broker& br) { (void)br.subscribe(req, nullptr); });
  settle();
  EXPECT_EQ(c->got.size(), 30u);
}

TEST_F(RecoveredTails, RecoveredScheduledMessagesKeepTheirLocationThroughAPrune) {
  for (int n = 1; n <= 1100; ++n) {
    auto m = std::make_shared<Message>(*make_message(n));
    m->deliver_at_ms = now_ + 5000;
    store_.records[at(n).file] = ScanningStore::Stored{kQueue.key(), m, 0, true};
    Broker::recover(peers(), store::RecoveredMessage{kQueue.key(), m, 0, at(n)});
  }
  Broker::recovered(peers());
  on(owner().shard().value(), [&](Broker& b) {
    store::Batch records;
    std::vector<Routed> moved;
    b.owned_queues().sweep(now_, records, moved);  // 1100 locations, none of them in the queue yet
  });
  now_ += 6000;
  ex_.fire_timers();
  settle();
  auto c = subscribe(AckMode::client_individual, 5000);
  ASSERT_EQ(c->got.size(), 1100u);
  std::vector<std::uint64_t> tags;
  for (const auto& d : c->got) tags.push_back(d.tag);
  on(owner().shard().value(), [&](Broker& b) { b.owned_queues().settle(kQueue.key(), last_id_, tags, true, true, {}, nullptr); });
  settle();
  EXPECT_EQ(store_.live(kQueue.key()), 0u);
  EXPECT_EQ(store_.ack_refs.wrong, 0u);
  EXPECT_EQ(store_.ack_refs.unnamed, 0u);
  EXPECT_EQ(store_.ack_refs.named, 1100u);
}

}  // namespace
}  // namespace carrier::core
