// Cold tails (docs/storage.md, "Cold tails"), the queue's half: go_cold, held arrivals, scans'
// answers, drops, cuts. The owner's half is in owned_cold_tails_test.cpp, tails handed back at
// start-up in recovered_tails_test.cpp.
#include <gtest/gtest.h>

#include <map>

#include "core/broker_test_fixture.hpp"
#include "core/queue.hpp"
#include "core/queue_maintenance.hpp"
#include "selector/selector.hpp"

namespace carrier::core {
namespace {

using model::DestinationKind;
using model::Message;
using model::MessageId;
using model::MessagePtr;
using model::ShardId;

MessagePtr cold_message(int n, std::uint8_t priority = 4, std::int64_t expires = 0, bool persistent = true) {
  auto m = std::make_shared<Message>();
  m->id = MessageId{0, static_cast<std::uint64_t>(n)};
  m->destination = {DestinationKind::queue, "q"};
  m->priority = priority;
  m->expires_ms = expires;
  m->persistent = persistent;
  m->timestamp_ms = 1000 + n;
  m->body = std::make_shared<const std::string>(std::to_string(n));
  return m;
}

ConsumerRef cold_consumer(std::uint64_t id, std::uint32_t prefetch) {
  return ConsumerRef{ConsumerId(id), ShardId(0), nullptr, AckMode::client_individual, prefetch};
}

std::vector<std::string> cold_bodies(const std::vector<Queue::Dispatch>& ds) {
  std::vector<std::string> out;
  for (const auto& d : ds) {
    for (const auto& del : d.batch) out.push_back(*del.message->body);
  }
  return out;
}

// Message n is stored at file = n.
store::Location at_number(const Message& m) { return store::Location{m.id.lo, 0, 0}; }
const Queue::Enough kNoEnough = [](const Message&) { return false; };

// What a scan of lane `p` from `from` would find among `stored` (by number), up to `max`.
store::ScanResult scan_of(const std::map<std::uint64_t, MessagePtr>& stored, std::size_t p, store::Location from,
                          std::size_t max) {
  store::ScanResult r;
  r.next = from;
  auto it = stored.lower_bound(from.file);
  for (; it != stored.end() && r.messages.size() < max; ++it) {
    r.next = store::Location{it->first + 1, 0, 0};
    if (it->second->priority != p) continue;
    r.messages.push_back(store::ScannedMessage{it->second, store::Location{it->first, 0, 0}, 0});
  }
  r.exhausted = it == stored.end();
  return r;
}

const auto kNothingInMemory = [](const MessageId&) { return false; };

TEST(QueueColdTail, GoesColdFromTheTailKeepingCountsAndBytes) {
  Queue q("queue:q");
  for (int i = 1; i <= 10; ++i) q.enqueue(cold_message(i));
  const auto bytes = q.ready_bytes();
  auto gone = q.go_cold(3, at_number, kNoEnough);
  ASSERT_EQ(gone.size(), 7u);
  EXPECT_EQ(gone.front().message->id.lo, 10u) << "the tail first";
  EXPECT_EQ(q.cold(), 7u);
  EXPECT_EQ(q.depth(), 10u);
  EXPECT_EQ(q.ready_bytes(), bytes) << "a cold message counts its footprint";
  ASSERT_NE(q.cold_tail(4), nullptr);
  EXPECT_EQ(q.cold_tail(4)->from, (store::Location{4, 0, 0})) << "the smallest location among them";
  EXPECT_EQ(q.oldest_ready_timestamp_ms(), 1001) << "the head in memory";
  Queue all_cold("queue:c");
  for (int i = 1; i <= 3; ++i) all_cold.enqueue(cold_message(i));
  ASSERT_EQ(all_cold.go_cold(0, at_number, kNoEnough).size(), 3u);
  EXPECT_EQ(all_cold.oldest_ready_timestamp_ms(), 1001) << "the tail's oldest";
  EXPECT_TRUE(q.holding(4));
  EXPECT_FALSE(q.holding(5));
}

TEST(QueueColdTail, NonPersistentAndUnlocatedMessagesStayOrWait) {
  Queue q("queue:q");
  q.enqueue(cold_message(1));
  q.enqueue(cold_message(2, 4, 0, false));
  q.enqueue(cold_message(3));
  q.enqueue(cold_message(4));
  auto gone = q.go_cold(0, [](const Message& m) { return m.id.lo == 4 ? store::Location{} : at_number(m); }, kNoEnough);
  ASSERT_EQ(gone.size(), 2u);  // 3 and 1
  EXPECT_EQ(q.cold(), 2u);
  EXPECT_EQ(q.depth(), 4u);
  // 4 has no location yet and came after what went cold: held, out of dispatch; 2 stays.
  q.add_consumer(cold_consumer(1, 10));
  std::vector<Queue::Entry> expired;
  EXPECT_EQ(cold_bodies(q.dispatch(0, expired)), (std::vector<std::string>{"2"}))
      << "a non-persistent message is never stored: it does not wait behind the tail";
  EXPECT_EQ(q.join_cold(4, MessageId{0, 4}, store::Location{4, 0, 0})->id.lo, 4u);
  EXPECT_EQ(q.cold(), 3u);
  EXPECT_EQ(q.depth(), 3u);
}

TEST(QueueColdTail, ArrivalsWaitBehindTheTailAndLowerPrioritiesWaitWithIt) {
  Queue q("queue:q");
  std::map<std::uint64_t, MessagePtr> stored;
  for (int i = 1; i <= 4; ++i) {
    stored[static_cast<std::uint64_t>(i)] = cold_message(i, 7);
    q.enqueue(stored[static_cast<std::uint64_t>(i)]);
  }
  ASSERT_EQ(q.go_cold(0, at_number, kNoEnough).size(), 4u);
  auto late = cold_message(5, 7);
  q.enqueue(late);  // persistent, priority 7: held until located
  q.enqueue(cold_message(6, 1));
  q.add_consumer(cold_consumer(1, 100));
  std::vector<Queue::Entry> expired;
  EXPECT_TRUE(q.dispatch(0, expired).empty()) << "priority 1 waits behind the cold priority 7 tail";
  EXPECT_EQ(q.depth(), 6u);
  stored[5] = late;
  ASSERT_NE(q.join_cold(7, late->id, store::Location{5, 0, 0}), nullptr);
  EXPECT_EQ(q.cold(), 5u);
  auto read = q.cold_read(128, false);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->lane, 7u);
  EXPECT_EQ(read->from, (store::Location{1, 0, 0}));
  EXPECT_FALSE(q.cold_read(128, false)) << "one scan per queue at a time";
  auto got = q.cold_scanned(*read, scan_of(stored, 7, read->from, read->max), kNothingInMemory, 0);
  EXPECT_EQ(got.entered.size(), 5u);
  EXPECT_TRUE(got.emptied);
  EXPECT_EQ(q.cold(), 0u);
  EXPECT_EQ(cold_bodies(q.dispatch(0, expired)), (std::vector<std::string>{"1", "2", "3", "4", "5", "6"}));
}

TEST(QueueColdTail, ATailThatGrowsWhileReadIsReadToItsEnd) {
  Queue q("queue:q");
  std::map<std::uint64_t, MessagePtr> stored;
  for (int i = 1; i <= 3; ++i) {
    stored[static_cast<std::uint64_t>(i)] = cold_message(i);
    q.enqueue(stored[static_cast<std::uint64_t>(i)]);
  }
  ASSERT_EQ(q.go_cold(0, at_number, kNoEnough).size(), 3u);
  q.add_consumer(cold_consumer(1, 100));
  auto read = q.cold_read(128, false);
  ASSERT_TRUE(read);
  auto answer = scan_of(stored, 4, read->from, read->max);  // the scan ran before 4 was durable
  auto four = cold_message(4);
  q.enqueue(four);
  stored[4] = four;
  ASSERT_NE(q.join_cold(4, four->id, store::Location{4, 0, 0}), nullptr);
  auto got = q.cold_scanned(*read, std::move(answer), kNothingInMemory, 0);
  EXPECT_EQ(got.entered.size(), 3u);
  EXPECT_EQ(got.corrected, 0u) << "exhausted is not trusted while the tail grew";
  EXPECT_EQ(q.cold(), 1u);
  read = q.cold_read(128, false);
  ASSERT_TRUE(read);
  got = q.cold_scanned(*read, scan_of(stored, 4, read->from, read->max), kNothingInMemory, 0);
  ASSERT_EQ(got.entered.size(), 1u);
  EXPECT_EQ(got.entered[0].message->id.lo, 4u);
  EXPECT_TRUE(got.emptied);
}

TEST(QueueColdTail, AScanSkipsMessagesStillInMemoryAndDropsExpiredOnes) {
  Queue q("queue:q");
  std::map<std::uint64_t, MessagePtr> stored;
  for (int i = 1; i <= 6; ++i) {
    stored[static_cast<std::uint64_t>(i)] = cold_message(i, 4, i == 5 ? 500 : 0);
    q.enqueue(stored[static_cast<std::uint64_t>(i)]);
  }
  // 1 and 2 stay in memory; appends from two shards put 2 after the others in the store.
  stored[7] = stored[2];
  stored.erase(2);
  ASSERT_EQ(q.go_cold(2, [](const Message& m) { return store::Location{m.id.lo == 2 ? 7u : m.id.lo, 0, 0}; }, kNoEnough).size(),
            4u);
  q.add_consumer(cold_consumer(1, 1));
  std::vector<Queue::Entry> expired;
  (void)q.dispatch(0, expired);  // 1 delivered: half a window not in memory any more
  auto read = q.cold_read(4, false);
  ASSERT_TRUE(read);
  auto got = q.cold_scanned(*read, scan_of(stored, 4, read->from, 10),
                            [](const MessageId& id) { return id.lo == 1 || id.lo == 2; }, 600);
  std::vector<std::uint64_t> entered;
  for (const auto& e : got.entered) entered.push_back(e.message->id.lo);
  EXPECT_EQ(entered, (std::vector<std::uint64_t>{3, 4, 6})) << "2 is in memory: skipped, not a duplicate";
  ASSERT_EQ(got.expired.size(), 1u);
  EXPECT_EQ(got.expired[0].id().lo, 5u);
  EXPECT_TRUE(got.emptied);
  EXPECT_EQ(q.depth(), 4u) << "2, 3, 4, 6 ready; 1 unacked";
}

TEST(QueueColdTail, AnExhaustedScanCorrectsACountThatWasOff) {
  Queue q("queue:q");
  q.add_cold(4, 100, store::Location{1, 0, 0});
  q.add_cold(4, 100, store::Location{2, 0, 0});
  q.add_consumer(cold_consumer(1, 10));
  auto read = q.cold_read(128, false);
  ASSERT_TRUE(read);
  std::map<std::uint64_t, MessagePtr> stored;
  stored[2] = cold_message(2);
  auto got = q.cold_scanned(*read, scan_of(stored, 4, read->from, read->max), kNothingInMemory, 0);
  EXPECT_EQ(got.entered.size(), 1u);
  EXPECT_EQ(got.corrected, 1u);
  EXPECT_EQ(q.cold(), 0u);
  EXPECT_EQ(q.depth(), 1u);
}

TEST(QueueColdTail, AFailedScanStopsOnlyItsTailAndReleasesHeldArrivals) {
  Queue q("queue:q");
  q.add_cold(4, 100, store::Location{1, 0, 0});
  q.enqueue(cold_message(9));  // held behind the tail
  q.enqueue(cold_message(8, 2));
  q.add_consumer(cold_consumer(1, 10));
  auto read = q.cold_read(128, false);
  ASSERT_TRUE(read);
  q.cold_unread(*read, true);
  EXPECT_FALSE(q.cold_read(128, false)) << "no more reads of a failed tail";
  std::vector<Queue::Entry> expired;
  EXPECT_EQ(cold_bodies(q.dispatch(0, expired)), (std::vector<std::string>{"9", "8"}));
  EXPECT_EQ(q.depth(), 1u) << "the failed tail's message is still stored, and counted";
  // A shutdown only unmarks.
  Queue r("queue:r");
  r.add_cold(4, 100, store::Location{1, 0, 0});
  r.add_consumer(cold_consumer(1, 10));
  auto again = r.cold_read(128, false);
  ASSERT_TRUE(again);
  r.cold_unread(*again, false);
  EXPECT_TRUE(r.cold_read(128, false));
}

TEST(QueueColdTail, OverflowAndPurgeOweDropsThatTheNextScanAcks) {
  Queue q("queue:q");
  std::map<std::uint64_t, MessagePtr> stored;
  for (int i = 1; i <= 5; ++i) {
    stored[static_cast<std::uint64_t>(i)] = cold_message(i);
    q.add_cold(4, static_cast<std::uint32_t>(stored[static_cast<std::uint64_t>(i)]->footprint()), store::Location{static_cast<std::uint64_t>(i), 0, 0});
  }
  Queue::Entry oldest;
  ASSERT_TRUE(q.take_oldest(oldest));
  EXPECT_TRUE(oldest.empty()) << "owed as a drop: read and acked later";
  EXPECT_EQ(q.depth(), 4u);
  EXPECT_EQ(q.drop_cold(2), 2u);
  EXPECT_EQ(q.depth(), 2u);
  auto read = q.cold_read(128, false);
  ASSERT_TRUE(read) << "drops are read without consumers";
  EXPECT_EQ(read->max, 3u);
  auto got = q.cold_scanned(*read, scan_of(stored, 4, read->from, read->max), kNothingInMemory, 0);
  ASSERT_EQ(got.dropped.size(), 3u);
  EXPECT_EQ(got.dropped[0]->id.lo, 1u) << "the oldest first";
  EXPECT_EQ(q.cold(), 2u);
  EXPECT_FALSE(q.cold_read(128, false)) << "no consumer, nothing owed";
}

TEST(QueueColdTail, CutTailsComeOutWholeAndAnswersToThemAreDropped) {
  Queue q("queue:q");
  q.add_cold(4, 100, store::Location{3, 0, 0});
  q.add_cold(9, 100, store::Location{1, 0, 0});
  q.enqueue(cold_message(7, 9));  // held
  q.add_consumer(cold_consumer(1, 10));
  auto read = q.cold_read(128, false);
  ASSERT_TRUE(read);
  auto cuts = q.cut_cold();
  ASSERT_EQ(cuts.size(), 2u);
  EXPECT_EQ(q.cold(), 0u);
  EXPECT_EQ(q.depth(), 1u) << "the held arrival is in its lane now";
  std::map<std::uint64_t, MessagePtr> stored;
  stored[1] = cold_message(1, 9);
  auto got = q.cold_scanned(*read, scan_of(stored, 9, read->from, 10), kNothingInMemory, 0);
  EXPECT_TRUE(got.entered.empty()) << "an answer for a cut tail";
  EXPECT_EQ(q.depth(), 1u);
}

TEST(QueueColdTail, SelectiveConsumersReadWhereDispatchStopped) {
  Queue q("queue:q", [](const selector::Selector&, const Message& m) { return m.id.lo % 2 == 0; });
  for (int i = 1; i <= 4; ++i) q.enqueue(cold_message(i));
  ASSERT_EQ(q.go_cold(0, at_number, kNoEnough).size(), 4u);
  auto ref = cold_consumer(1, 10);
  auto sel = selector::parse("color = 'none'");
  ASSERT_TRUE(sel);
  ref.selector = *sel;
  q.add_consumer(ref);
  std::vector<Queue::Entry> expired;
  EXPECT_TRUE(q.dispatch(0, expired).empty());
  EXPECT_TRUE(q.cold_read(128, false)) << "stalled at the tail";
}

}  // namespace
}  // namespace carrier::core
