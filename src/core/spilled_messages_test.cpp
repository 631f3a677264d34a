// Non-persistent messages past the budget (docs/storage.md, "Non-persistent messages past the
// budget"): spilled into the store so they leave memory like persistent ones, in order, acked
// when consumed; under the budget, or with [core] page_non_persistent off, they stay in memory.
#include <gtest/gtest.h>

#include "core/cold_tail_test_fixture.hpp"
#include "core/disk_alarm.hpp"

namespace carrier::core {
namespace {

using namespace cold_tail_testing;

class SpilledMessages : public OwnerColdTail {
 protected:
  void send_non_persistent(int from, int to, std::uint8_t priority = 4) {
    std::vector<MessagePtr> batch;
    for (int i = from; i <= to; ++i) {
      auto m = std::make_shared<Message>(*make_message(i, priority));
      m->persistent = false;
      batch.push_back(std::move(m));
    }
    on(0, [&](Broker& b) { b.send(std::move(batch), nullptr); });
    settle();
  }
  std::size_t spilled_records() const {
    return static_cast<std::size_t>(std::count_if(store_.records.begin(), store_.records.end(),
                                                  [](const auto& r) { return r.second.message->spilled; }));
  }
  std::uint64_t spilled_count() {
    std::uint64_t n = 0;
    for (auto& b : brokers_) n += b->context().counters.spilled;
    return n;
  }
};

TEST_F(SpilledMessages, UnderTheBudgetTheyStayInMemoryAndAreNeverStored) {
  send_non_persistent(1, 10);
  EXPECT_TRUE(store_.records.empty());
  EXPECT_EQ(spilled_count(), 0u);
  EXPECT_EQ(queue().cold(), 0u);
}

TEST_F(SpilledMessages, PastTheBudgetTheyAreSpilledGoColdAndDrainInOrder) {
  send_non_persistent(1, 500);
  EXPECT_GT(spilled_count(), 400u);
  EXPECT_EQ(spilled_records(), spilled_count());
  EXPECT_GT(queue().cold(), 400u) << "spilled messages leave memory like persistent ones";
  // What came in under the budget stays (it was never stored): the budget and one message.
  EXPECT_LE(memory_.used(), static_cast<std::int64_t>(memory_.budget() + 2 * kBody));
  EXPECT_EQ(queue().depth(), 500u);
  auto c = subscribe(AckMode::client_individual, 1000);
  std::vector<int> want;
  for (int i = 1; i <= 500; ++i) want.push_back(i);
  ack_all(*c);
  EXPECT_EQ(numbers(*c), want);
  for (const auto& d : c->got) EXPECT_FALSE(d.message->persistent) << "delivered as it was sent";
  EXPECT_EQ(store_.live(kQueue.key()), 0u) << "every spilled copy acked once consumed";
  EXPECT_EQ(store_.ack_refs.wrong, 0u);
}

TEST_F(SpilledMessages, ANonPersistentArrivalBehindAColdTailKeepsItsPlace) {
  send(1, 300);
  ASSERT_GT(queue().cold(), 250u);
  // Far under the budget again (the tail holds nothing), but the lane has a cold tail: spilled,
  // so it is not delivered before the persistent messages that came first.
  ASSERT_LT(memory_.used(), static_cast<std::int64_t>(memory_.budget()));
  send_non_persistent(301, 305);
  EXPECT_EQ(spilled_records(), 5u);
  auto c = subscribe(AckMode::client_individual, 1000);
  ack_all(*c);
  std::vector<int> want;
  for (int i = 1; i <= 305; ++i) want.push_back(i);
  EXPECT_EQ(numbers(*c), want);
  EXPECT_EQ(store_.live(kQueue.key()), 0u);
}

TEST_F(SpilledMessages, ADeletedQueueAcksItsSpilledMessages) {
  send_non_persistent(1, 300);
  ASSERT_GT(spilled_records(), 200u);
  on(model::owner_shard(kQueue.key(), kShards).value(),
     [&](Broker& b) { b.owned_queues().remove(kQueue.key(), nullptr); });
  settle();
  EXPECT_EQ(store_.live(kQueue.key()), 0u);
}

// A moved copy is a new message: its new queue's owner spills it (or not) and stores it then, so
// no copy claims a stored record it does not have.
TEST_F(SpilledMessages, AMovedCopyIsSpilledAgainByItsNewQueue) {
  send_non_persistent(1, 200);
  ASSERT_GT(spilled_records(), 150u);
  Result<std::size_t> moved = unexpected(Errc::not_found, "");
  on(0, [&](Broker& b) {
    move_messages(b, kQueue.key(), {DestinationKind::queue, "elsewhere"}, {}, 1'000'000, true,
                  [&](Result<std::size_t> r) { moved = r; });
  });
  settle();
  ASSERT_TRUE(moved);
  EXPECT_EQ(*moved, 200u);
  EXPECT_EQ(store_.live(kQueue.key()), 0u);
  const std::string elsewhere = model::Destination{DestinationKind::queue, "elsewhere"}.key();
  auto* oq = brokers_[model::owner_shard(elsewhere, kShards).value()]->owned_queues().find(elsewhere);
  ASSERT_NE(oq, nullptr);
  std::size_t in_memory_stored = 0;
  oq->queue->for_each([&](const Queue::Entry& e) { in_memory_stored += e.message && e.message->stored() ? 1 : 0; });
  EXPECT_EQ(oq->queue->depth(), 200u);
  EXPECT_LE(in_memory_stored + oq->queue->cold(), store_.live(elsewhere)) << "every spilled copy has its record";
}

TEST_F(SpilledMessages, NotWhileTheDiskIsShort) {
  DiskAlarm disk(1000);
  for (auto& b : brokers_) b->set_disk_alarm(&disk);
  disk.update(10);
  ASSERT_TRUE(disk.holding());
  send_non_persistent(1, 100);
  EXPECT_TRUE(store_.records.empty());
  disk.update(1'000'000);
  send_non_persistent(101, 200);
  EXPECT_GT(spilled_records(), 50u) << "spilled again once space is back";
  for (auto& b : brokers_) b->set_disk_alarm(nullptr);
}

TEST_F(SpilledMessages, WithPageNonPersistentOffTheyStayInMemory) {
  Options off;
  off.page_non_persistent = false;
  make_brokers(off);
  send_non_persistent(1, 100);
  EXPECT_TRUE(store_.records.empty());
  EXPECT_EQ(spilled_count(), 0u);
  EXPECT_EQ(queue().cold(), 0u);
  EXPECT_GT(memory_.used(), static_cast<std::int64_t>(memory_.budget())) << "held, as before";
}

}  // namespace
}  // namespace carrier::core
