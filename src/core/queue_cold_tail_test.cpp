// Cold tails (docs/storage.md, "Cold tails"): the queue's half (go_cold, held arrivals, scans'
// answers, drops, cuts) and the owner's (scans over a store double that implements
// Store::scan's contract: ordering, skips, expiry, errors, purge, delete, move, browse,
// overflow, recovery).
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

// ---------------------------------------------------------------- the owner, over a store double

using broker_testing::FakeExecutor;

// Store::scan's contract over a map by location: appends are durable (and seen by a scan) once
// the test completes them; an ack removes at once; delivered records keep their count.
class ScanningStore : public store::Store {
 public:
  explicit ScanningStore(FakeExecutor& ex) : ex_(ex) {}
  Status open() override { return ok(); }
  Status recover(const std::function<void(store::RecoveredMessage)>&) override { return ok(); }
  void start() override {}
  bool can_scan() const override { return true; }
  void append(store::Batch batch, store::DurableCallback cb) override {
    append_located(std::move(batch), [cb = std::move(cb)](Status st, std::vector<store::Location>) {
      if (cb) cb(std::move(st));
    });
  }
  void append_located(store::Batch batch, store::LocatedCallback cb) override {
    std::vector<store::Location> at;
    std::vector<std::uint64_t> added;
    for (auto& r : batch) {
      if (r.kind == store::RecordKind::message) {
        records[next_] = Stored{r.queue, r.message, 0, false};
        added.push_back(next_);
        at.push_back(store::Location{next_++, 0, 0});
        continue;
      }
      at.push_back({});
      check_ref(r);
      for (auto& [loc, s] : records) {
        if (s.queue != r.queue || s.message->id != r.message_id) continue;
        if (r.kind == store::RecordKind::ack) {
          ++acks;
          records.erase(loc);
        } else {
          s.delivery_count = r.delivery_count;
        }
        break;
      }
    }
    pending_.emplace_back([this, cb = std::move(cb), at = std::move(at), added = std::move(added)]() mutable {
      for (auto n : added) {
        if (auto it = records.find(n); it != records.end()) it->second.durable = true;
      }
      if (cb) cb(ok(), std::move(at));
    });
  }
  void scan(std::string queue, std::uint8_t priority, store::Location from, std::size_t max,
            store::ScanCallback done) override {
    ++scans;
    scans_.emplace_back([this, queue = std::move(queue), priority, from, max, done = std::move(done)]() {
      if (fail) return done(unexpected(*fail, "told to"));
      store::ScanResult r;
      r.next = from;
      auto it = records.lower_bound(from.file);
      for (; it != records.end() && r.messages.size() < max; ++it) {
        r.next = store::Location{it->first + 1, 0, 0};
        const auto& s = it->second;
        if (!s.durable || s.queue != queue || s.message->priority != priority) continue;
        r.messages.push_back(store::ScannedMessage{s.message, store::Location{it->first, 0, 0}, s.delivery_count});
      }
      r.exhausted = it == records.end();
      scanned += r.messages.size();
      done(std::move(r));
    });
  }
  void read(std::string queue, std::vector<store::ReadItem> items, store::ReadCallback done) override {
    read_items += items.size();
    scans_.emplace_back([this, queue = std::move(queue), items = std::move(items), done = std::move(done)]() {
      std::vector<Result<MessagePtr>> answers;
      for (const auto& item : items) {
        auto it = records.find(item.location.file);
        if (it == records.end() || it->second.queue != queue || it->second.message->id != item.id) {
          answers.emplace_back(unexpected(Errc::not_found, "gone"));
        } else {
          answers.emplace_back(it->second.message);
        }
      }
      done(std::move(answers));
    });
  }
  void close() override {}

  void complete_all() {
    auto prev = ex_.current();
    ex_.set_current(std::nullopt);
    auto pending = std::move(pending_);
    pending_.clear();
    for (auto& cb : pending) cb();
    auto scans = std::move(scans_);
    scans_.clear();
    for (auto& s : scans) s();
    ex_.set_current(prev);
  }
  bool busy() const { return !scans_.empty() || !pending_.empty(); }
  std::size_t live(const std::string& queue) const {
    return static_cast<std::size_t>(std::count_if(records.begin(), records.end(), [&](const auto& r) { return r.second.queue == queue; }));
  }

  struct Stored {
    std::string queue;
    MessagePtr message;
    std::uint32_t delivery_count = 0;
    bool durable = false;
  };
  // What the ack and delivered records said about the copy they are about (Record::stored):
  // the right one, none, or a wrong one (another location, priority or footprint).
  struct Refs {
    std::size_t named = 0;
    std::size_t unnamed = 0;
    std::size_t wrong = 0;
  };
  void check_ref(const store::Record& r) {
    Refs& refs = r.kind == store::RecordKind::ack ? ack_refs : delivered_refs;
    if (!r.stored.known()) {
      ++refs.unnamed;
      return;
    }
    auto it = records.find(r.stored.location.file);
    const bool right = it != records.end() && it->second.queue == r.queue && it->second.message->id == r.message_id &&
                       it->second.message->priority == r.stored.priority &&
                       it->second.message->footprint() == r.stored.footprint;
    ++(right ? refs.named : refs.wrong);
  }
  std::map<std::uint64_t, Stored> records;
  Refs ack_refs;
  Refs delivered_refs;
  std::optional<Errc> fail;
  std::size_t scans = 0;
  std::size_t scanned = 0;
  std::size_t read_items = 0;
  std::size_t acks = 0;

 private:
  FakeExecutor& ex_;
  std::uint64_t next_ = 1;
  std::vector<std::function<void()>> pending_;
  std::vector<std::function<void()>> scans_;
};

class OwnerColdTail : public ::testing::Test {
 protected:
  static constexpr std::size_t kShards = 2;
  static constexpr std::uint64_t kBody = 1000;

  OwnerColdTail() : ex_(kShards), store_(ex_) {
    memory_.set_budget(20 * kBody);
    Options options;
    DestinationPolicy capped;
    capped.match = "queue:capped";
    capped.max_messages = 100;
    capped.overflow = OverflowPolicy::drop_oldest;
    options.policies.push_back(capped);
    DestinationPolicy delayed;
    delayed.match = "queue:delayed";
    delayed.redelivery_delay_ms = 1000;
    delayed.redelivery_jitter = 0;
    options.policies.push_back(delayed);
    DestinationPolicy own_dlq;  // dead-letters into itself: the same key stored again
    own_dlq.match = "queue:own-dlq";
    own_dlq.max_deliveries = 1;
    own_dlq.dead_letter_queue = "own-dlq";
    options.policies.push_back(own_dlq);
    for (std::size_t i = 0; i < kShards; ++i) {
      brokers_.push_back(std::make_unique<Broker>(ShardId(static_cast<std::uint32_t>(i)), ex_, store_, options,
                                                  [this] { return now_; }, &memory_));
    }
    std::vector<Broker*> peers;
    for (auto& b : brokers_) peers.push_back(b.get());
    for (auto& b : brokers_) b->set_peers(peers);
  }

  MessagePtr make_message(int n, std::uint8_t priority = 4, std::int64_t expires = 0) {
    auto m = std::make_shared<Message>();
    m->id = MessageId{1, static_cast<std::uint64_t>(n)};
    m->destination = destination_;
    m->persistent = true;
    m->priority = priority;
    m->expires_ms = expires;
    m->body = std::make_shared<const std::string>(std::to_string(n) + std::string(kBody, 'x'));
    return m;
  }
  void on(std::uint32_t shard, const std::function<void(Broker&)>& fn) {
    ex_.on(ShardId(shard), [&] { fn(*brokers_[shard]); });
    ex_.drain();
  }
  void settle() {
    for (int i = 0; i < 100000; ++i) {
      ex_.drain();
      if (!store_.busy()) return;
      store_.complete_all();
    }
  }
  void send(int from, int to, std::uint8_t priority = 4, std::int64_t expires = 0, std::uint32_t shard = 0) {
    std::vector<MessagePtr> batch;
    for (int i = from; i <= to; ++i) batch.push_back(make_message(i, priority, expires));
    on(shard, [&](Broker& b) { b.send(std::move(batch), nullptr); });
    settle();
  }
  Broker& owner() { return *brokers_[model::owner_shard(destination_.key(), kShards).value()]; }
  Queue& queue() { return *owner().owned_queues().find(destination_.key())->queue; }
  std::vector<int> numbers(const broker_testing::Collector& c) const {
    std::vector<int> out;
    for (const auto& d : c.got) out.push_back(std::stoi(d.message->body->substr(0, d.message->body->find('x'))));
    return out;
  }
  std::shared_ptr<broker_testing::Collector> subscribe(AckMode mode = AckMode::auto_ack, std::uint32_t prefetch = 1000) {
    auto c = std::make_shared<broker_testing::Collector>();
    on(1, [&](Broker& b) { last_id_ = *b.subscribe({destination_, mode, prefetch, c}, nullptr); });
    settle();
    return c;
  }

  std::int64_t now_ = 1'000'000;
  FakeExecutor ex_;
  ScanningStore store_;
  MemoryGauge memory_;
  std::vector<std::unique_ptr<Broker>> brokers_;
  inline static const model::Destination kQueue{DestinationKind::queue, "backlog"};
  model::Destination destination_ = kQueue;
  ConsumerId last_id_;
};

TEST_F(OwnerColdTail, ABacklogGoesColdAndCostsNothingPerMessage) {
  send(1, 500);
  EXPECT_GT(queue().cold(), 450u);
  EXPECT_EQ(queue().paged(), 0u) << "a store that can scan: no paged entries";
  EXPECT_EQ(queue().depth(), 500u);
  EXPECT_LE(memory_.used(), static_cast<std::int64_t>(memory_.budget()));
  auto* oq = owner().owned_queues().find(kQueue.key());
  EXPECT_LE(oq->locations ? oq->locations->size() : 0u, 40u) << "cold messages leave the location map";
  BrokerStats stats;
  owner().owned_queues().add_stats(stats);
  EXPECT_EQ(stats.messages_cold, queue().cold());
  EXPECT_EQ(owner().context().counters.paged_out, queue().cold());
}

TEST_F(OwnerColdTail, DrainsInOrderAcrossPrioritiesWithEveryMessageOnce) {
  send(1, 100, 4);
  send(101, 200, 7);
  send(201, 220, 4);  // arrives behind the cold priority 4 tail
  ASSERT_GT(queue().cold(), 150u);
  auto c = subscribe();
  std::vector<int> want;
  for (int i = 101; i <= 200; ++i) want.push_back(i);
  for (int i = 1; i <= 100; ++i) want.push_back(i);
  for (int i = 201; i <= 220; ++i) want.push_back(i);
  EXPECT_EQ(numbers(*c), want);
  EXPECT_EQ(queue().depth(), 0u);
  EXPECT_EQ(queue().cold(), 0u);
  EXPECT_GE(store_.scans, 2u) << "read back in windows";
  EXPECT_LE(store_.scanned, 220u) << "each cold message read once";
}

TEST_F(OwnerColdTail, ArrivalsFromTwoShardsWhileDrainingComeOnceEach) {
  send(1, 300);
  auto c = subscribe(AckMode::client_individual, 50);
  for (int round = 0; round < 40; ++round) {
    // Two producers on two shards, their appends interleaved in the store.
    send(1000 + round * 10, 1004 + round * 10, 4, 0, 0);
    send(1005 + round * 10, 1009 + round * 10, 4, 0, 1);
  }
  // Ack everything delivered so far, repeatedly, until all has come.
  for (int round = 0; round < 200 && c->got.size() < 700; ++round) {
    std::vector<std::uint64_t> tags;
    for (const auto& d : c->got) tags.push_back(d.tag);
    on(model::owner_shard(kQueue.key(), kShards).value(), [&](Broker& b) {
      b.owned_queues().settle(kQueue.key(), last_id_, tags, true, true, {}, nullptr);
    });
    settle();
  }
  std::vector<int> got = numbers(*c);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(std::adjacent_find(got.begin(), got.end()), got.end()) << "no duplicates";
  EXPECT_EQ(got.size(), 700u) << "no loss";
}

TEST_F(OwnerColdTail, ASelectorMatchingNothingReadsAColdBacklogOnce) {
  send(1, 600);
  ASSERT_GT(queue().cold(), 500u);
  auto sel = selector::parse("color = 'none'");
  ASSERT_TRUE(sel);
  auto c = std::make_shared<broker_testing::Collector>();
  SubscribeRequest req{kQueue, AckMode::auto_ack, 1000, c};
  req.selector = *sel;
  on(1, [&](Broker& b) { (void)b.subscribe(req, nullptr); });
  settle();
  EXPECT_TRUE(c->got.empty());
  EXPECT_LE(store_.scanned, 600u) << "refused messages are not read again and again";
  EXPECT_EQ(queue().cold(), 0u);
  EXPECT_EQ(queue().depth(), 600u);
  EXPECT_GT(queue().paged(), 0u) << "what was read and refused is paged again";
  // What stays in memory: the head a consumer keeps (two windows) and the last window read.
  EXPECT_LE(memory_.used(), static_cast<std::int64_t>(3 * OwnedQueues::kReadWindow * (kBody + 300) +
                                                      600 * OwnedQueues::kPagedEntryBytes));
  send(601, 601);
  EXPECT_LE(store_.scanned, 601u);
}

TEST_F(OwnerColdTail, ASelectorFindsItsMatchBehindColdTailsOfSeveralPriorities) {
  send(1, 300, 8);
  send(301, 600, 4);
  send(601, 900, 1);
  auto match = make_message(901, 0);
  auto with_color = std::make_shared<Message>(*match);
  with_color->properties.emplace_back("color", "none");
  on(0, [&](Broker& b) { b.send({with_color}, nullptr); });
  settle();
  ASSERT_GT(queue().cold(), 800u);
  auto sel = selector::parse("color = 'none'");
  ASSERT_TRUE(sel);
  auto c = std::make_shared<broker_testing::Collector>();
  SubscribeRequest req{kQueue, AckMode::auto_ack, 1000, c};
  req.selector = *sel;
  on(1, [&](Broker& b) { (void)b.subscribe(req, nullptr); });
  settle();
  ASSERT_EQ(c->got.size(), 1u) << "cold " << queue().cold() << " paged " << queue().paged() << " scanned " << store_.scanned
                               << " read " << store_.read_items;
  EXPECT_EQ(c->got[0].message->id.lo, 901u);
  // Refused arrivals, then a match: it comes without the refused backlog being read again.
  const auto scanned = store_.scanned + store_.read_items;
  send(902, 951, 0);
  auto second = std::make_shared<Message>(*make_message(952, 0));
  second->properties.emplace_back("color", "none");
  on(0, [&](Broker& b) { b.send({second}, nullptr); });
  settle();
  ASSERT_EQ(c->got.size(), 2u) << "cold " << queue().cold() << " paged " << queue().paged();
  EXPECT_EQ(c->got[1].message->id.lo, 952u);
  EXPECT_LT(store_.scanned + store_.read_items - scanned, 100u) << "scanned " << store_.scanned << " read " << store_.read_items << " before " << scanned;
}

TEST_F(OwnerColdTail, ScanErrorsStopTheTailAndCountItsMessages) {
  send(1, 100);
  const auto cold = queue().cold();
  ASSERT_GT(cold, 50u);
  store_.fail = Errc::corrupt_data;
  auto c = subscribe();
  EXPECT_EQ(c->got.size(), 100 - cold) << "what is in memory flows";
  EXPECT_EQ(owner().context().counters.page_in_failed, cold);
  EXPECT_EQ(queue().depth(), cold) << "still stored, still counted: a restart reads them";
  store_.fail.reset();
  send(101, 105);
  EXPECT_EQ(c->got.size(), 100 - cold + 5) << "new arrivals are not held behind a failed tail";
}

TEST_F(OwnerColdTail, ExpiredMessagesReadBackAreAckedNotDelivered) {
  send(1, 50, 4, now_ + 1000);
  send(51, 100);
  ASSERT_GT(queue().cold(), 50u);
  now_ += 2000;
  auto c = subscribe();
  EXPECT_LE(c->got.size(), 60u);
  for (int n : numbers(*c)) EXPECT_GT(n, 40) << "only the tail's head in memory may have been taken before";
  EXPECT_EQ(queue().depth(), 0u);
  EXPECT_EQ(store_.live(kQueue.key()), c->got.size()) << "expired ones acked as they were read (the "
                                                         "delivered ones wait for the session's auto-ack)";
}

TEST_F(OwnerColdTail, PurgeOfAColdTailAcksEveryMessageWithoutAConsumer) {
  send(1, 300);
  ASSERT_GT(queue().cold(), 250u);
  Result<std::size_t> purged = unexpected(Errc::not_found, "");
  on(0, [&](Broker& b) { purge_queue(b, kQueue.key(), {}, 1'000'000, [&](Result<std::size_t> r) { purged = r; }); });
  settle();
  ASSERT_TRUE(purged);
  EXPECT_EQ(*purged, 300u);
  EXPECT_EQ(store_.live(kQueue.key()), 0u);
  EXPECT_LE(memory_.used(), 2 * OwnedQueues::kQueueOverheadBytes);
}

TEST_F(OwnerColdTail, DeleteAcksTheColdTailInTheBackground) {
  send(1, 300, 4);
  send(301, 350, 8);
  ASSERT_GT(queue().cold(), 250u);
  on(owner().shard().value(), [&](Broker& b) { b.owned_queues().remove(kQueue.key(), nullptr); });
  settle();
  EXPECT_EQ(store_.live(kQueue.key()), 0u);
  EXPECT_EQ(owner().owned_queues().find(kQueue.key()), nullptr);
}

TEST_F(OwnerColdTail, MoveReadsTheWholeTailBackFirst) {
  send(1, 200);
  ASSERT_GT(queue().cold(), 150u);
  Result<std::size_t> moved = unexpected(Errc::not_found, "");
  on(0, [&](Broker& b) {
    move_messages(b, kQueue.key(), {DestinationKind::queue, "elsewhere"}, {}, 1'000'000, true,
                  [&](Result<std::size_t> r) { moved = r; });
  });
  settle();
  ASSERT_TRUE(moved);
  EXPECT_EQ(*moved, 200u);
  EXPECT_EQ(store_.live(kQueue.key()), 0u);
  EXPECT_EQ(store_.live(model::Destination{DestinationKind::queue, "elsewhere"}.key()), 200u);
}

TEST_F(OwnerColdTail, BrowseShowsColdMessagesWithoutTakingThem) {
  send(1, 100);
  const auto cold = queue().cold();
  ASSERT_GT(cold, 50u);
  Result<std::vector<BrowsedMessage>> got = unexpected(Errc::not_found, "");
  on(0, [&](Broker& b) {
    browse_queue(b, kQueue.key(), 90, 5, [&](Result<std::vector<BrowsedMessage>> r) { got = std::move(r); });
  });
  settle();
  ASSERT_TRUE(got);
  ASSERT_EQ(got->size(), 5u);
  EXPECT_EQ((*got)[0].message->body->substr(0, 2), "91");
  EXPECT_EQ(queue().cold(), cold);
}

TEST_F(OwnerColdTail, DropOldestOverflowDropsFromTheColdTail) {
  destination_ = {DestinationKind::queue, "capped"};
  send(1, 100);
  ASSERT_GT(queue().cold(), 50u);
  send(101, 110);
  EXPECT_EQ(queue().depth(), 100u);
  auto c = subscribe();
  EXPECT_EQ(c->got.size(), 100u);
  std::vector<int> got = numbers(*c);
  EXPECT_EQ(std::count_if(got.begin(), got.end(), [](int n) { return n > 100; }), 10) << "the new ones kept";
  EXPECT_EQ(std::count_if(got.begin(), got.end(), [](int n) { return n <= 10; }), 0) << "the oldest dropped";
  EXPECT_EQ(store_.live(destination_.key()), c->got.size()) << "the dropped ones acked";
}

TEST_F(OwnerColdTail, RecoveredSummariesFoldIntoColdTailsAndComeBackWithTheirDeliveryCounts) {
  std::vector<Broker*> peers;
  for (auto& b : brokers_) peers.push_back(b.get());
  const auto before = memory_.used();
  for (int i = 1; i <= 1000; ++i) {
    auto m = make_message(i, i % 3 == 0 ? 8 : 4);
    const std::uint64_t at = static_cast<std::uint64_t>(5000 + i);
    store_.records[at] = ScanningStore::Stored{kQueue.key(), m, i == 3 ? 2u : 0u, true};
    store::RecoveredMessage r;
    r.queue = kQueue.key();
    r.location = store::Location{at, 0, 0};
    r.summary = store::MessageSummary{m->id, m->priority, true, 0, 0, 0, static_cast<std::uint32_t>(m->footprint())};
    Broker::recover(peers, std::move(r));
  }
  EXPECT_EQ(queue().depth(), 1000u);
  EXPECT_EQ(queue().cold(), 1000u);
  EXPECT_LE(memory_.used() - before, 2 * OwnedQueues::kQueueOverheadBytes) << "no per-message state";
  auto c = subscribe();
  ASSERT_EQ(c->got.size(), 1000u);
  std::vector<int> want;
  for (int i = 3; i <= 1000; i += 3) want.push_back(i);
  for (int i = 1; i <= 1000; ++i) {
    if (i % 3 != 0) want.push_back(i);
  }
  EXPECT_EQ(numbers(*c), want);
  EXPECT_TRUE(c->got[0].redelivered);
  EXPECT_EQ(c->got[0].delivery_count, 3u);
}

// ---------------------------------------------------------------- StoredRef on acks

// Every ack and delivered record of a message the core was told the location of names its
// stored copy (Record::stored): a journal that keeps nothing per message for what it recovered
// from its checkpoint finds the copy by it, or pays a full replay at the next start.
TEST_F(OwnerColdTail, AcksOfScannedAndInMemoryMessagesNameTheirStoredCopies) {
  send(1, 300);
  ASSERT_GT(queue().cold(), 250u);
  auto c = subscribe(AckMode::client_individual, 1000);
  ASSERT_EQ(c->got.size(), 300u);
  std::vector<std::uint64_t> tags;
  for (const auto& d : c->got) tags.push_back(d.tag);
  on(owner().shard().value(), [&](Broker& b) { b.owned_queues().settle(kQueue.key(), last_id_, tags, true, true, {}, nullptr); });
  settle();
  EXPECT_EQ(store_.live(kQueue.key()), 0u);
  EXPECT_EQ(store_.ack_refs.wrong, 0u);
  EXPECT_EQ(store_.ack_refs.unnamed, 0u) << "the head that never went cold too: located once the store can scan";
  EXPECT_EQ(store_.ack_refs.named, 300u);
  EXPECT_EQ(store_.delivered_refs.wrong, 0u);
  EXPECT_EQ(store_.delivered_refs.unnamed, 0u);
  EXPECT_EQ(store_.delivered_refs.named, 300u);
}

TEST_F(OwnerColdTail, AcksOfRecoveredMessagesNameTheirStoredCopies) {
  std::vector<Broker*> peers;
  for (auto& b : brokers_) peers.push_back(b.get());
  for (int i = 1; i <= 200; ++i) {
    auto m = make_message(i, i % 2 == 0 ? 7 : 4);
    const std::uint64_t at = static_cast<std::uint64_t>(5000 + i);
    store_.records[at] = ScanningStore::Stored{kQueue.key(), m, 0, true};
    store::RecoveredMessage r;
    r.queue = kQueue.key();
    r.location = store::Location{at, 0, 0};
    if (i % 10 == 0) {
      r.message = m;  // some come back whole (a backend that reads them, a protocol's)
    } else {
      r.summary = store::MessageSummary{m->id, m->priority, true, 0, 0, 0, static_cast<std::uint32_t>(m->footprint())};
    }
    Broker::recover(peers, std::move(r));
  }
  auto c = subscribe(AckMode::client_individual, 1000);
  ASSERT_EQ(c->got.size(), 200u);
  std::vector<std::uint64_t> tags;
  for (const auto& d : c->got) tags.push_back(d.tag);
  on(owner().shard().value(), [&](Broker& b) { b.owned_queues().settle(kQueue.key(), last_id_, tags, true, true, {}, nullptr); });
  settle();
  EXPECT_EQ(store_.live(kQueue.key()), 0u);
  EXPECT_EQ(store_.ack_refs.wrong, 0u);
  EXPECT_EQ(store_.ack_refs.unnamed, 0u);
  EXPECT_EQ(store_.ack_refs.named, 200u);
}

TEST_F(OwnerColdTail, DropsPurgesDeletesAndExpiriesOfColdMessagesNameTheirCopies) {
  destination_ = {DestinationKind::queue, "capped"};
  send(1, 100);
  ASSERT_GT(queue().cold(), 50u);
  send(101, 110);  // ten owed as drops from the cold tail, acked as a scan reads them
  on(owner().shard().value(), [&](Broker& b) { b.owned_queues().remove(destination_.key(), nullptr); });
  settle();
  EXPECT_EQ(store_.live(destination_.key()), 0u);
  destination_ = kQueue;
  send(1001, 1100, 4, now_ + 1000);
  send(1101, 1200);
  now_ += 2000;
  auto c = subscribe(AckMode::client_individual, 1000);  // the expired ones are acked as the scan reads them
  std::vector<std::uint64_t> tags;
  for (const auto& d : c->got) tags.push_back(d.tag);
  on(owner().shard().value(), [&](Broker& b) { b.owned_queues().settle(kQueue.key(), last_id_, tags, true, true, {}, nullptr); });
  settle();
  EXPECT_EQ(store_.live(kQueue.key()), 0u);
  destination_ = {DestinationKind::queue, "purged"};
  send(2001, 2300);
  ASSERT_GT(queue().cold(), 250u);
  on(0, [&](Broker& b) { purge_queue(b, destination_.key(), {}, 1'000'000, [](Result<std::size_t>) {}); });
  settle();
  EXPECT_EQ(store_.records.size(), 0u);
  EXPECT_EQ(store_.ack_refs.wrong, 0u);
  EXPECT_EQ(store_.ack_refs.unnamed, 0u);
  EXPECT_EQ(store_.ack_refs.named, 610u);
}

TEST_F(OwnerColdTail, AMessageDeadLetteredIntoItsOwnQueueAcksItsOldCopyByItsRef) {
  destination_ = {DestinationKind::queue, "own-dlq"};
  send(1, 300);
  ASSERT_GT(queue().cold(), 250u);
  auto c = subscribe(AckMode::client_individual, 1000);
  ASSERT_EQ(c->got.size(), 300u);
  std::vector<std::uint64_t> tags;
  for (const auto& d : c->got) tags.push_back(d.tag);
  // Nacked past max_deliveries: moved to the DLQ, which is the queue itself.
  on(owner().shard().value(), [&](Broker& b) { b.owned_queues().settle(destination_.key(), last_id_, tags, false, true, {}, nullptr); });
  settle();
  EXPECT_EQ(store_.live(destination_.key()), 300u) << "each stored once: the old copy acked, the new one added";
  EXPECT_EQ(store_.ack_refs.wrong, 0u);
  EXPECT_EQ(store_.ack_refs.unnamed, 0u);
  EXPECT_EQ(store_.ack_refs.named, 300u);
}

// docs/storage.md, "Cold tails", the duplicates its Limits named. (a): a message in memory
// that no location was asked for (appended under half the budget) and a tail whose `from` is
// lowered before it (a scheduled message stored earlier, due behind the tail).
TEST_F(OwnerColdTail, AnUnacknowledgedMessageBeforeALoweredTailIsNotHandedOutAgain) {
  auto scheduled = std::make_shared<Message>(*make_message(1));
  scheduled->deliver_at_ms = now_ + 5000;
  memory_.add(15 * static_cast<std::int64_t>(kBody));  // over half the budget: its location is asked
  on(0, [&](Broker& b) { b.send({scheduled}, nullptr); });
  settle();
  memory_.sub(15 * static_cast<std::int64_t>(kBody));
  auto first = subscribe(AckMode::client_individual, 1);
  send(2, 2);  // under half the budget: before the fix, no location asked
  ASSERT_EQ(first->got.size(), 1u);
  ASSERT_EQ(first->got[0].message->id.lo, 2u);
  send(3, 600);  // over the budget: the tail goes cold, starting after message 2
  ASSERT_GT(queue().cold(), 100u);
  now_ += 6000;
  ex_.fire_timers();  // the scheduled one is due behind the tail: joins it, lowering `from` before 2
  settle();
  auto second = subscribe(AckMode::client_individual, 5000);
  std::vector<std::uint64_t> ids;
  for (const auto& d : second->got) ids.push_back(d.message->id.lo);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 2u), 0) << "message 2 is the first consumer's, unacked";
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end()) << "no duplicates";
  EXPECT_EQ(ids.size(), 599u) << "all but message 2";
}

// (b): a redelivery waiting out its delay outside the queue while the sweep prunes the location
// map, and a tail that starts before it.
TEST_F(OwnerColdTail, ARedeliveryWaitingOutItsDelayIsNotReadBackFromATail) {
  destination_ = {DestinationKind::queue, "delayed"};
  auto colored = [&](int n, const char* color) {
    auto m = std::make_shared<Message>(*make_message(n));
    m->properties.emplace_back("color", color);
    return m;
  };
  on(0, [&](Broker& b) { b.send({colored(1, "red")}, nullptr); });
  settle();
  auto sel = selector::parse("color = 'blue'");
  ASSERT_TRUE(sel);
  auto blue = std::make_shared<broker_testing::Collector>();
  SubscribeRequest req{destination_, AckMode::client_individual, 5000, blue};
  req.selector = *sel;
  ConsumerId blue_id;
  on(1, [&](Broker& b) { blue_id = *b.subscribe(req, nullptr); });
  settle();
  std::vector<MessagePtr> batch;
  for (int i = 2; i <= 1101; ++i) batch.push_back(colored(i, "blue"));
  on(0, [&](Broker& b) { b.send(std::move(batch), nullptr); });
  settle();
  ASSERT_EQ(blue->got.size(), 1100u);
  // The consumer goes: its 1100 deliveries wait out their redelivery delay outside the queue.
  on(1, [&](Broker& b) { b.unsubscribe(blue_id, nullptr); });
  settle();
  ASSERT_EQ(queue().depth(), 1u);
  on(owner().shard().value(), [&](Broker& b) {
    store::Batch records;
    std::vector<Routed> moved;
    b.owned_queues().sweep(now_, records, moved);  // prunes the location map
  });
  send(2000, 2000);  // over the budget: message 1 and this go cold, the tail starting at 1
  ASSERT_EQ(queue().cold(), 2u);
  now_ += 2000;
  ex_.fire_timers();  // the 1100 are back in the queue, in memory
  settle();
  auto c = subscribe(AckMode::client_individual, 5000);
  std::vector<std::uint64_t> ids;
  for (const auto& d : c->got) ids.push_back(d.message->id.lo);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end()) << "no duplicates";
  EXPECT_EQ(ids.size(), 1102u);
  EXPECT_EQ(store_.delivered_refs.wrong, 0u);
}

// [core] memory_budget_bytes reloaded (SIGHUP): serve sets the new budget and has every shard
// page if it is now over it; a raised one reads nothing back at once.
TEST_F(OwnerColdTail, ALoweredBudgetPagesOutAtOnceAndARaisedOneKeepsWhatIsReadBack) {
  memory_.set_budget(1000 * kBody);
  send(1, 300);
  EXPECT_EQ(queue().cold(), 0u) << "under the budget";
  memory_.set_budget(20 * kBody);
  for (auto& b : brokers_) on(b->shard().value(), [](Broker& br) { br.owned_queues().page_if_over_budget(); });
  EXPECT_GT(queue().cold(), 250u) << "every message was located: the lowered budget pages them out";
  EXPECT_LE(memory_.used(), static_cast<std::int64_t>(memory_.budget()));
  memory_.set_budget(1000 * kBody);
  for (auto& b : brokers_) on(b->shard().value(), [](Broker& br) { br.owned_queues().page_if_over_budget(); });
  EXPECT_GT(queue().cold(), 250u) << "nothing read back until a consumer needs it";
  auto c = subscribe(AckMode::client_individual, 1000);
  std::vector<int> want;
  for (int i = 1; i <= 300; ++i) want.push_back(i);
  EXPECT_EQ(numbers(*c), want);
  EXPECT_EQ(queue().cold(), 0u);
  EXPECT_GT(memory_.used(), 250 * static_cast<std::int64_t>(kBody)) << "what is read back under the raised budget stays";
}

// Only when the transaction runs on the queue's owner: elsewhere the location map is another
// shard's (docs/storage.md, "Paging").
TEST_F(OwnerColdTail, AcksInATransactionOnTheQueuesOwnerNameTheirStoredCopies) {
  send(1, 300);
  ASSERT_GT(queue().cold(), 250u);
  const auto home = owner().shard().value();
  auto c = std::make_shared<broker_testing::Collector>();
  on(home, [&](Broker& b) { last_id_ = *b.subscribe({destination_, AckMode::client_individual, 1000, c}, nullptr); });
  settle();
  ASSERT_EQ(c->got.size(), 300u);
  Transaction tx;
  for (const auto& d : c->got) tx.acks.push_back(DeliveryRef{last_id_, d.tag, d.message});
  tx.sends.push_back(make_message(301));
  Status committed = unexpected(Errc::not_found, "not yet");
  on(home, [&](Broker& b) { b.commit(std::move(tx), [&](Status st) { committed = std::move(st); }); });
  settle();
  ASSERT_TRUE(committed);
  EXPECT_EQ(store_.live(kQueue.key()), 1u) << "the one sent in the transaction";
  EXPECT_EQ(store_.ack_refs.wrong, 0u);
  EXPECT_EQ(store_.ack_refs.unnamed, 0u);
  EXPECT_EQ(store_.ack_refs.named, 300u);
}

// ---------------------------------------------------------------- tails at start-up

// A store that hands back whole lanes as store::RecoveredTail (every tail before the first
// RecoveredMessage; the messages it visits one by one are not in a tail's count).
class RecoveredTails : public OwnerColdTail {
 protected:
  std::vector<Broker*> peers() {
    std::vector<Broker*> out;
    for (auto& b : brokers_) out.push_back(b.get());
    return out;
  }
  // Message n of `queue`, stored (durable) at 5000 + n.
  MessagePtr stored(int n, std::uint8_t priority = 4, std::string queue = kQueue.key()) {
    auto m = make_message(n, priority);
    store_.records[at(n).file] = ScanningStore::Stored{std::move(queue), m, 0, true};
    return m;
  }
  static store::Location at(int n) { return store::Location{5000 + static_cast<std::uint64_t>(n), 0, 0}; }
  void tail(std::uint8_t priority, int from, std::uint64_t count, std::string queue = kQueue.key()) {
    Broker::recover_tail(peers(), store::RecoveredTail{std::move(queue), priority, at(from), count, count * (kBody + 200)});
  }
  void summary(const MessagePtr& m, int n, std::int64_t deliver_at = 0, std::string queue = kQueue.key()) {
    store::RecoveredMessage r;
    r.queue = std::move(queue);
    r.location = at(n);
    r.summary = store::MessageSummary{m->id, m->priority, true, 0, 0, deliver_at, static_cast<std::uint32_t>(m->footprint())};
    Broker::recover(peers(), std::move(r));
  }
  std::vector<std::uint64_t> ids(const broker_testing::Collector& c) const {
    std::vector<std::uint64_t> out;
    for (const auto& d : c.got) out.push_back(d.message->id.lo);
    return out;
  }
};

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
