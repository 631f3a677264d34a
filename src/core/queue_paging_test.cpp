// Paging (docs/storage.md, "Paging"): the queue's half (page_out, read_ahead, page_in, paged
// entries at every entry point) and the owner's (budget, locations from the store, reads
// answered late or with errors, recovery of summaries) over a store double.
#include <gtest/gtest.h>

#include <map>
#include <set>

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

MessagePtr make(int n, std::uint8_t priority = 4, std::int64_t expires = 0, bool persistent = true) {
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

ConsumerRef consumer(std::uint64_t id, std::uint32_t prefetch) {
  return ConsumerRef{ConsumerId(id), ShardId(0), nullptr, AckMode::client_individual, prefetch};
}

std::vector<std::string> bodies(const std::vector<Queue::Dispatch>& ds) {
  std::vector<std::string> out;
  for (const auto& d : ds) {
    for (const auto& del : d.batch) out.push_back(*del.message->body);
  }
  return out;
}

// Every message is "stored" at file = its number: the test's store by id.
store::Location locate(const Message& m) { return store::Location{m.id.lo, 0, 0}; }
const Queue::Enough kNever = [](const Message&) { return false; };

struct Backing {
  std::map<std::uint64_t, MessagePtr> by_number;
  MessagePtr get(const store::ReadItem& item) const { return by_number.at(item.location.file); }
};

TEST(QueuePaging, EntryStaysSmall) {
  // In memory an entry pays one pointer for paging; a paged one its record besides.
  EXPECT_LE(sizeof(Queue::Entry), 40u);
  EXPECT_LE(sizeof(Queue::Paged), 80u);
}

TEST(QueuePaging, PagesTheTailFirstLowestPriorityFirstAndKeepsTheHead) {
  Queue q("queue:q");
  for (int i = 1; i <= 6; ++i) q.enqueue(make(i, 4));
  for (int i = 7; i <= 9; ++i) q.enqueue(make(i, 8));
  const auto bytes = q.ready_bytes();
  int paged = 0;
  auto gone = q.page_out(2, locate, [&](const Message&) { return ++paged == 5; });
  ASSERT_EQ(gone.size(), 5u);
  // Lane 4 from its tail first: 6, 5, 4, 3, 2 (1 would be third in dispatch order, after 7 and 8).
  std::vector<std::uint64_t> ids;
  for (const auto& m : gone) ids.push_back(m->id.lo);
  EXPECT_EQ(ids, (std::vector<std::uint64_t>{6, 5, 4, 3, 2}));
  EXPECT_EQ(q.paged(), 5u);
  EXPECT_EQ(q.depth(), 9u);
  EXPECT_EQ(q.ready_bytes(), bytes) << "a paged entry counts its summary's footprint";
  // Everything left is the head (two entries) or beyond the first paged entry of its lane.
  auto more = q.page_out(2, locate, kNever);
  std::vector<std::uint64_t> rest;
  for (const auto& m : more) rest.push_back(m->id.lo);
  EXPECT_EQ(rest, (std::vector<std::uint64_t>{9})) << "lane 8 keeps 7 and 8 as the head; lane 4's walk "
                                                     "stops at its first paged entry (6), before 1";
}

TEST(QueuePaging, OnlyStoredPersistentMessagesLeave) {
  Queue q("queue:q");
  q.enqueue(make(1));
  q.enqueue(make(2, 4, 0, false));  // non-persistent: never paged here
  q.enqueue(make(3));
  auto gone = q.page_out(0, [](const Message& m) { return m.id.lo == 3 ? store::Location{} : locate(m); }, kNever);
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0]->id.lo, 1u) << "3 has no location yet, 2 is not persistent";
}

TEST(QueuePaging, APageOutWalkCostsWhatArrivedSince) {
  Queue q("queue:q");
  for (int i = 1; i <= 1000; ++i) q.enqueue(make(i));
  EXPECT_EQ(q.page_out(0, locate, kNever).size(), 1000u);
  q.enqueue(make(1001));
  int asked = 0;
  auto gone = q.page_out(0, [&](const Message& m) { ++asked; return locate(m); }, kNever);
  EXPECT_EQ(gone.size(), 1u);
  EXPECT_EQ(asked, 1) << "the walk stops at the first paged entry";
}

TEST(QueuePaging, DispatchStopsAtAPagedEntryUntilItIsReadBack) {
  Queue q("queue:q");
  Backing store;
  for (int i = 1; i <= 10; ++i) {
    auto m = make(i, i <= 5 ? 9 : 1);
    store.by_number[static_cast<std::uint64_t>(i)] = m;
    q.enqueue(m);
  }
  ASSERT_EQ(q.page_out(0, locate, kNever).size(), 10u);
  q.add_consumer(consumer(1, 100));
  std::vector<Queue::Entry> expired;
  EXPECT_TRUE(q.dispatch(0, expired).empty()) << "the head is paged: nothing is delivered out of order";
  auto reads = q.read_ahead(3);
  ASSERT_EQ(reads.size(), 3u);
  EXPECT_EQ(reads[0].item.id.lo, 1u);
  EXPECT_TRUE(q.reading());
  EXPECT_TRUE(q.read_ahead(3).empty()) << "one read at a time";
  for (const auto& r : reads) ASSERT_TRUE(q.page_in(r, store.get(r.item)));
  q.read_done();
  EXPECT_EQ(bodies(q.dispatch(0, expired)), (std::vector<std::string>{"1", "2", "3"}))
      << "priority 1 does not overtake the paged priority 9 messages";
  // Reads go on, priority by priority, and every message comes once, in order.
  std::vector<std::string> all{"1", "2", "3"};
  for (int round = 0; round < 10 && q.depth() > 0; ++round) {
    for (const auto& r : q.read_ahead(3)) ASSERT_TRUE(q.page_in(r, store.get(r.item)));
    q.read_done();
    for (auto& b : bodies(q.dispatch(0, expired))) all.push_back(b);
  }
  EXPECT_EQ(all, (std::vector<std::string>{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}));
  EXPECT_EQ(q.paged(), 0u);
}

TEST(QueuePaging, ReadAheadStartsWhenTheHeadInMemoryDropsBelowHalfTheWindow) {
  Queue q("queue:q");
  for (int i = 1; i <= 20; ++i) q.enqueue(make(i));
  ASSERT_EQ(q.page_out(6, locate, kNever).size(), 14u);  // 6 in memory at the head
  q.add_consumer(consumer(1, 2));
  EXPECT_TRUE(q.read_ahead(10).empty()) << "6 in memory: at least half of 10";
  std::vector<Queue::Entry> expired;
  ASSERT_EQ(q.dispatch(0, expired).size(), 1u);  // 2 delivered: 4 left in memory
  auto reads = q.read_ahead(10);
  ASSERT_EQ(reads.size(), 10u) << "below half: the next window is read before the consumer gets there";
  EXPECT_EQ(reads[0].item.id.lo, 7u);
}

TEST(QueuePaging, NoReadAheadWithoutConsumers) {
  Queue q("queue:q");
  for (int i = 1; i <= 4; ++i) q.enqueue(make(i));
  ASSERT_EQ(q.page_out(0, locate, kNever).size(), 4u);
  EXPECT_TRUE(q.read_ahead(10).empty());
}

TEST(QueuePaging, PagedEntriesExpireFromTheirSummaryWithoutBeingRead) {
  Queue q("queue:q");
  q.enqueue(make(1, 4, 500));
  q.enqueue(make(2, 4, 0));
  q.enqueue(make(3, 4, 700));
  ASSERT_EQ(q.page_out(0, locate, kNever).size(), 3u);
  auto expired = q.take_expired(600);
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_TRUE(expired[0].is_paged());
  EXPECT_EQ(expired[0].id().lo, 1u);
  EXPECT_EQ(q.paged(), 2u);
  // Dispatch drops an expired paged head too, and stops at the live one behind it.
  q.add_consumer(consumer(1, 10));
  std::vector<Queue::Entry> out;
  std::vector<Queue::Entry> dropped;
  Queue q2("queue:q2");
  q2.enqueue(make(4, 4, 500));
  q2.enqueue(make(5));
  ASSERT_EQ(q2.page_out(0, locate, kNever).size(), 2u);
  q2.add_consumer(consumer(1, 10));
  EXPECT_TRUE(q2.dispatch(600, dropped).empty());
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(dropped[0].id().lo, 4u);
  EXPECT_EQ(q2.depth(), 1u);
}

TEST(QueuePaging, OldestTimestampOverflowAndDeleteSeePagedEntries) {
  Queue q("queue:q");
  q.enqueue(make(1));
  q.enqueue(make(2));
  ASSERT_EQ(q.page_out(0, locate, kNever).size(), 2u);
  EXPECT_EQ(q.oldest_ready_timestamp_ms(), 1001);
  Queue::Entry oldest;
  ASSERT_TRUE(q.take_oldest(oldest));
  EXPECT_TRUE(oldest.is_paged());
  EXPECT_EQ(oldest.id().lo, 1u);
  EXPECT_EQ(q.paged(), 1u);
  auto all = q.take_all();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(q.paged(), 0u);
  EXPECT_EQ(q.ready_bytes(), 0u);
}

TEST(QueuePaging, AFailedReadTakesOnlyThatEntryOutOfDispatch) {
  Queue q("queue:q");
  Backing store;
  for (int i = 1; i <= 3; ++i) {
    auto m = make(i);
    store.by_number[static_cast<std::uint64_t>(i)] = m;
    q.enqueue(m);
  }
  ASSERT_EQ(q.page_out(0, locate, kNever).size(), 3u);
  q.add_consumer(consumer(1, 10));
  auto reads = q.read_ahead(10);
  ASSERT_EQ(reads.size(), 3u);
  ASSERT_TRUE(q.take_paged(reads[1]));  // say 2 is corrupt
  ASSERT_TRUE(q.page_in(reads[0], store.get(reads[0].item)));
  ASSERT_TRUE(q.page_in(reads[2], store.get(reads[2].item)));
  q.read_done();
  std::vector<Queue::Entry> expired;
  EXPECT_EQ(bodies(q.dispatch(0, expired)), (std::vector<std::string>{"1", "3"}));
  EXPECT_FALSE(q.page_in(reads[1], store.get(reads[1].item))) << "gone from the queue: the answer is dropped";
}

TEST(QueuePaging, AShutdownLeavesTheEntryPagedAndReadableAgain) {
  Queue q("queue:q");
  q.enqueue(make(1));
  ASSERT_EQ(q.page_out(0, locate, kNever).size(), 1u);
  q.add_consumer(consumer(1, 10));
  auto reads = q.read_ahead(4);
  ASSERT_EQ(reads.size(), 1u);
  q.unmark_reading(reads[0]);
  q.read_done();
  EXPECT_EQ(q.read_ahead(4).size(), 1u);
}

TEST(QueuePaging, ASelectorMatchingNothingReadsAPagedBacklogOnce) {
  int evaluations = 0;
  Queue q("queue:q", [&](const selector::Selector&, const Message&) {
    ++evaluations;
    return false;
  });
  Backing store;
  for (int i = 1; i <= 40; ++i) {
    auto m = make(i);
    store.by_number[static_cast<std::uint64_t>(i)] = m;
    q.enqueue(m);
  }
  ASSERT_EQ(q.page_out(0, locate, kNever).size(), 40u);
  auto ref = consumer(1, 10);
  auto sel = selector::parse("color = 'none'");
  ASSERT_TRUE(sel);
  ref.selector = *sel;
  q.add_consumer(ref);
  std::vector<Queue::Entry> expired;
  int reads = 0;
  for (int round = 0; round < 20; ++round) {
    EXPECT_TRUE(q.dispatch(0, expired).empty());
    auto window = q.read_ahead(8);
    if (window.empty()) break;
    ++reads;
    for (const auto& r : window) ASSERT_TRUE(q.page_in(r, store.get(r.item)));
    q.read_done();
    EXPECT_TRUE(q.dispatch(0, expired).empty());
    // What was read and refused may leave again: memory stays bounded while the walk goes on.
    q.page_out_again(window, 0, locate, kNever);
  }
  EXPECT_EQ(reads, 5) << "40 entries, 8 per read, each read once";
  EXPECT_EQ(evaluations, 40);
  EXPECT_EQ(q.paged(), 40u) << "all of it paged again";
  // Later dispatches (a send, an ack) neither read nor evaluate again.
  EXPECT_TRUE(q.dispatch(0, expired).empty());
  EXPECT_TRUE(q.read_ahead(8).empty());
  EXPECT_EQ(evaluations, 40);
  // A matching message arriving behind the backlog is delivered without a read.
  auto match_all = consumer(2, 10);
  q.enqueue(make(41));
  q.add_consumer(match_all);
  EXPECT_EQ(bodies(q.dispatch(0, expired)).size(), 0u) << "the plain consumer waits for the paged head";
}

TEST(QueuePaging, RestoredSummariesEnterPagedInOrder) {
  Queue q("queue:q");
  Backing store;
  for (int i = 1; i <= 3; ++i) {
    auto m = make(i);
    store.by_number[static_cast<std::uint64_t>(i)] = m;
    store::MessageSummary s{m->id, m->priority, true, m->timestamp_ms, 0, 0, static_cast<std::uint32_t>(m->footprint())};
    q.restore_paged(s, locate(*m), i == 2 ? 3 : 0);
  }
  EXPECT_EQ(q.paged(), 3u);
  EXPECT_EQ(q.depth(), 3u);
  q.add_consumer(consumer(1, 10));
  for (const auto& r : q.read_ahead(10)) ASSERT_TRUE(q.page_in(r, store.get(r.item)));
  q.read_done();
  std::vector<Queue::Entry> expired;
  auto ds = q.dispatch(0, expired);
  EXPECT_EQ(bodies(ds), (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_TRUE(ds[0].batch[1].redelivered);
  EXPECT_EQ(ds[0].batch[1].delivery_count, 4u);
}

// ---------------------------------------------------------------- the owner, over a store double

using broker_testing::FakeExecutor;

// Keeps what is appended, says where (file = append order), and answers reads only when the
// test says, with what it was told to (late answers, errors).
class PagingStore : public store::Store {
 public:
  explicit PagingStore(FakeExecutor& ex) : ex_(ex) {}
  Status open() override { return ok(); }
  Status recover(const std::function<void(store::RecoveredMessage)>&) override { return ok(); }
  void start() override {}
  void append(store::Batch batch, store::DurableCallback cb) override {
    reporting_ = false;
    append_located(std::move(batch), [cb = std::move(cb)](Status st, std::vector<store::Location>) {
      if (cb) cb(std::move(st));
    });
    reporting_ = true;
  }
  void append_located(store::Batch batch, store::LocatedCallback cb) override {
    std::vector<store::Location> at;
    for (auto& r : batch) {
      if (r.kind == store::RecordKind::message) {
        if (reporting_) reported.insert(r.message_id);
        messages[next_] = r.message;
        at.push_back(store::Location{next_++, 0, 0});
      } else {
        if (r.kind == store::RecordKind::ack) {
          ++acks;
          check_ref(r);
        }
        at.push_back({});
      }
    }
    pending_.emplace_back([cb = std::move(cb), at = std::move(at)]() mutable {
      if (cb) cb(ok(), std::move(at));
    });
  }
  void read(std::string queue, std::vector<store::ReadItem> items, store::ReadCallback done) override {
    ++reads;
    read_items += items.size();
    reads_.emplace_back(std::move(items), std::move(done));
  }
  void close() override {}

  // Runs the append callbacks and answers the reads, on "no shard" like the store's threads.
  void complete_all() {
    auto prev = ex_.current();
    ex_.set_current(std::nullopt);
    auto pending = std::move(pending_);
    pending_.clear();
    for (auto& cb : pending) cb();
    auto reads = std::move(reads_);
    reads_.clear();
    for (auto& [items, done] : reads) {
      std::vector<Result<MessagePtr>> answers;
      for (const auto& item : items) {
        if (auto e = fail.find(item.id.lo); e != fail.end()) {
          answers.emplace_back(unexpected(e->second, "told to"));
        } else {
          answers.emplace_back(messages.at(item.location.file));
        }
      }
      done(std::move(answers));
    }
    ex_.set_current(prev);
  }
  bool reads_pending() const { return !reads_.empty(); }

  // An ack names the copy it removes (Record::stored) whenever the core was told where it is:
  // the right one, none though its location was reported, or a wrong one.
  void check_ref(const store::Record& r) {
    if (!r.stored.known()) {
      if (reported.contains(r.message_id)) ++acks_unnamed;
      return;
    }
    auto it = messages.find(r.stored.location.file);
    const bool right = it != messages.end() && it->second->id == r.message_id && it->second->priority == r.stored.priority &&
                       it->second->footprint() == r.stored.footprint;
    ++(right ? acks_named : acks_wrong);
  }
  std::map<std::uint64_t, MessagePtr> messages;
  std::set<MessageId> reported;  // ids whose location append_located reported
  std::size_t acks_named = 0;
  std::size_t acks_unnamed = 0;
  std::size_t acks_wrong = 0;
  std::map<std::uint64_t, Errc> fail;  // by message id's low half
  std::size_t reads = 0;
  std::size_t read_items = 0;
  std::size_t acks = 0;

 private:
  FakeExecutor& ex_;
  std::uint64_t next_ = 1;
  bool reporting_ = true;
  std::vector<std::function<void()>> pending_;
  std::vector<std::pair<std::vector<store::ReadItem>, store::ReadCallback>> reads_;
};

class OwnerPaging : public ::testing::Test {
 protected:
  static constexpr std::size_t kShards = 2;
  static constexpr std::uint64_t kBody = 1000;

  OwnerPaging() : ex_(kShards), store_(ex_) {
    memory_.set_budget(20 * kBody);
    for (std::size_t i = 0; i < kShards; ++i) {
      brokers_.push_back(std::make_unique<Broker>(ShardId(static_cast<std::uint32_t>(i)), ex_, store_, Options{},
                                                  [this] { return now_; }, &memory_));
    }
    std::vector<Broker*> peers;
    for (auto& b : brokers_) peers.push_back(b.get());
    for (auto& b : brokers_) b->set_peers(peers);
  }

  MessagePtr make_message(int n, std::uint8_t priority = 4, std::int64_t expires = 0) {
    auto m = std::make_shared<Message>();
    m->id = MessageId{1, static_cast<std::uint64_t>(n)};
    m->destination = kQueue;
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
  // Lets every append and read complete, and every posted answer run, until nothing is left.
  void settle() {
    for (int i = 0; i < 1000; ++i) {
      ex_.drain();
      store_.complete_all();
      ex_.drain();
      if (!store_.reads_pending()) return;
    }
  }
  void send(int from, int to, std::uint8_t priority = 4, std::int64_t expires = 0) {
    std::vector<MessagePtr> batch;
    for (int i = from; i <= to; ++i) batch.push_back(make_message(i, priority, expires));
    on(0, [&](Broker& b) { b.send(std::move(batch), nullptr); });
    settle();
  }
  Broker& owner() { return *brokers_[model::owner_shard(kQueue.key(), kShards).value()]; }
  Queue& queue() { return *owner().owned_queues().find(kQueue.key())->queue; }
  std::vector<std::string> numbers(const broker_testing::Collector& c) const {
    std::vector<std::string> out;
    for (const auto& d : c.got) out.push_back(d.message->body->substr(0, d.message->body->find('x')));
    return out;
  }

  std::int64_t now_ = 1'000'000;
  FakeExecutor ex_;
  PagingStore store_;
  MemoryGauge memory_;
  std::vector<std::unique_ptr<Broker>> brokers_;
  inline static const model::Destination kQueue{DestinationKind::queue, "backlog"};
};

TEST_F(OwnerPaging, PagesOutOnceStoredAndOverTheBudget) {
  send(1, 10);
  EXPECT_EQ(queue().paged(), 0u) << "under the budget";
  send(11, 100);
  EXPECT_GT(queue().paged(), 70u);
  EXPECT_EQ(queue().depth(), 100u);
  EXPECT_LE(memory_.used(), static_cast<std::int64_t>(memory_.budget())) << "the gauge is back under the budget";
  EXPECT_EQ(owner().context().counters.paged_out, queue().paged());
}

TEST_F(OwnerPaging, NothingIsPagedBeforeItIsDurable) {
  std::vector<MessagePtr> batch;
  for (int i = 1; i <= 100; ++i) batch.push_back(make_message(i));
  on(0, [&](Broker& b) { b.send(std::move(batch), nullptr); });
  EXPECT_EQ(queue().paged(), 0u) << "over the budget, but no location yet";
  settle();
  EXPECT_GT(queue().paged(), 0u);
}

TEST_F(OwnerPaging, AConsumerDrainsAPagedBacklogInOrderWithEveryMessageOnce) {
  send(1, 60, 4);
  send(61, 120, 7);
  ASSERT_GT(queue().paged(), 60u);
  auto c = std::make_shared<broker_testing::Collector>();
  Result<ConsumerId> id = unexpected(Errc::not_found, "");
  on(1, [&](Broker& b) { id = b.subscribe({kQueue, AckMode::auto_ack, 1000, c}, nullptr); });
  settle();
  ASSERT_TRUE(id);
  std::vector<std::string> want;
  for (int i = 61; i <= 120; ++i) want.push_back(std::to_string(i));
  for (int i = 1; i <= 60; ++i) want.push_back(std::to_string(i));
  EXPECT_EQ(numbers(*c), want);
  EXPECT_EQ(queue().depth(), 0u);
  EXPECT_EQ(queue().paged(), 0u);
  EXPECT_GT(store_.reads, 1u) << "read back in windows";
  EXPECT_LE(store_.read_items, 120u) << "each paged message read once";
}

TEST_F(OwnerPaging, ReadErrorsDropOrSetAsideOnlyTheirEntries) {
  send(1, 100);
  ASSERT_GT(queue().paged(), 50u);
  store_.fail[90] = Errc::corrupt_data;
  store_.fail[91] = Errc::not_found;
  auto c = std::make_shared<broker_testing::Collector>();
  on(1, [&](Broker& b) { (void)b.subscribe({kQueue, AckMode::auto_ack, 1000, c}, nullptr); });
  settle();
  EXPECT_EQ(c->got.size(), 98u) << "every other message still flows";
  const auto& counters = owner().context().counters;
  EXPECT_EQ(counters.page_in_failed, 1u);
  EXPECT_EQ(counters.page_in_missing, 1u);
  EXPECT_EQ(queue().depth(), 0u);
}

TEST_F(OwnerPaging, PagedMessagesExpireAndArePurgedWithoutBeingRead) {
  send(1, 50, 4, now_ + 1000);
  send(51, 100);
  ASSERT_GT(queue().paged(), 40u);
  const auto reads = store_.reads;
  const auto acks = store_.acks;
  for (auto& b : brokers_) ex_.on(b->shard(), [&] { b->start(); });
  now_ += 2000;
  ex_.fire_timers();  // a sweep
  settle();
  EXPECT_EQ(queue().depth(), 50u);
  EXPECT_EQ(store_.reads, reads) << "expired from their summaries";
  EXPECT_EQ(store_.acks, acks + 50);
  Result<std::size_t> purged = unexpected(Errc::not_found, "");
  on(0, [&](Broker& b) { purge_queue(b, kQueue.key(), {}, 1000, [&](Result<std::size_t> r) { purged = r; }); });
  settle();
  ASSERT_TRUE(purged);
  EXPECT_EQ(*purged, 50u);
  EXPECT_EQ(store_.reads, reads);
  EXPECT_EQ(store_.acks, acks + 100);
  EXPECT_LE(memory_.used(), 2 * OwnedQueues::kQueueOverheadBytes) << "paged entries gave their memory back";
}

TEST_F(OwnerPaging, BrowseReadsBackOnlyItsWindowAndLeavesThePagedEntries) {
  send(1, 100);
  const auto paged = queue().paged();
  ASSERT_GT(paged, 50u);
  Result<std::vector<BrowsedMessage>> got = unexpected(Errc::not_found, "");
  on(0, [&](Broker& b) {
    browse_queue(b, kQueue.key(), 90, 5, [&](Result<std::vector<BrowsedMessage>> r) { got = std::move(r); });
  });
  settle();
  ASSERT_TRUE(got);
  ASSERT_EQ(got->size(), 5u);
  EXPECT_EQ((*got)[0].message->body->substr(0, 2), "91");
  EXPECT_EQ(store_.read_items, 5u);
  EXPECT_EQ(queue().paged(), paged);
}

TEST_F(OwnerPaging, DeadLetteredCopiesArePagedInTheirQueueAndReadBackInOrder) {
  send(1, 10);
  auto c = std::make_shared<broker_testing::Collector>();
  ConsumerId id;
  on(1, [&](Broker& b) { id = *b.subscribe({kQueue, AckMode::client_individual, 1000, c}, nullptr); });
  settle();
  send(11, 100);
  settle();
  ASSERT_EQ(c->got.size(), 100u);
  std::vector<std::uint64_t> tags;
  for (const auto& d : c->got) tags.push_back(d.tag);
  on(1, [&](Broker& b) { b.reject(id, tags, nullptr); });
  settle();
  const std::string dlq = model::Destination{DestinationKind::queue, "DLQ.backlog"}.key();
  auto& owner_of_dlq = *brokers_[model::owner_shard(dlq, kShards).value()];
  auto* oq = owner_of_dlq.owned_queues().find(dlq);
  ASSERT_NE(oq, nullptr);
  EXPECT_EQ(oq->queue->depth(), 100u);
  EXPECT_GT(oq->queue->paged(), 50u) << "the dead-letter queue's copies were located and paged";
  auto reader = std::make_shared<broker_testing::Collector>();
  on(0, [&](Broker& b) { (void)b.subscribe({{DestinationKind::queue, "DLQ.backlog"}, AckMode::auto_ack, 1000, reader}, nullptr); });
  settle();
  EXPECT_EQ(numbers(*reader).size(), 100u);
  EXPECT_EQ(numbers(*reader).front(), "1");
  EXPECT_EQ(numbers(*reader).back(), "100");
}

TEST_F(OwnerPaging, RecoveredSummariesAndFullMessagesOverTheBudgetComeBackPaged) {
  std::vector<Broker*> peers;
  for (auto& b : brokers_) peers.push_back(b.get());
  for (int i = 1; i <= 100; ++i) {
    auto m = make_message(i);
    store_.messages[static_cast<std::uint64_t>(1000 + i)] = m;
    store::RecoveredMessage r;
    r.queue = kQueue.key();
    r.location = store::Location{static_cast<std::uint64_t>(1000 + i), 0, 0};
    if (i % 2 == 0) {
      r.summary = store::MessageSummary{m->id, m->priority, true, 0, 0, 0, static_cast<std::uint32_t>(m->footprint())};
    } else {
      r.message = m;
    }
    Broker::recover(peers, std::move(r));
  }
  EXPECT_EQ(queue().depth(), 100u);
  EXPECT_GE(queue().paged(), 80u) << "the full ones paged as they were restored";
  // The paged records (136 B each here) are all that is held beyond the budget's share.
  EXPECT_LE(memory_.used(), static_cast<std::int64_t>(memory_.budget()) + 100 * OwnedQueues::kPagedEntryBytes);
  EXPECT_LT(memory_.used(), static_cast<std::int64_t>(50 * kBody)) << "far from holding the 100 KB";
  auto c = std::make_shared<broker_testing::Collector>();
  on(1, [&](Broker& b) { (void)b.subscribe({kQueue, AckMode::auto_ack, 1000, c}, nullptr); });
  settle();
  ASSERT_EQ(c->got.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(c->got[static_cast<std::size_t>(i)].message->id.lo, static_cast<std::uint64_t>(i + 1));
}

// Acks name the copy they remove (Record::stored) whenever the core knows it: paged entries
// purged without being read, paged entries read back and acked, recovered full messages.
TEST_F(OwnerPaging, AcksOfPagedAndRecoveredMessagesNameTheirStoredCopies) {
  send(1, 100);
  ASSERT_GT(queue().paged(), 70u);
  auto c = std::make_shared<broker_testing::Collector>();
  Result<ConsumerId> id = unexpected(Errc::not_found, "");
  on(1, [&](Broker& b) { id = b.subscribe({kQueue, AckMode::client_individual, 30, c}, nullptr); });
  settle();
  ASSERT_TRUE(id);
  ASSERT_EQ(c->got.size(), 30u);
  std::vector<std::uint64_t> tags;
  for (const auto& d : c->got) tags.push_back(d.tag);
  on(owner().shard().value(), [&](Broker& b) { b.owned_queues().settle(kQueue.key(), *id, tags, true, true, {}, nullptr); });
  settle();
  on(0, [&](Broker& b) { purge_queue(b, kQueue.key(), {}, 1'000'000, [](Result<std::size_t>) {}); });
  settle();
  // 30 acked, 30 more delivered (left unacked), 40 purged, most of them paged.
  EXPECT_EQ(store_.acks, 70u);
  EXPECT_EQ(store_.acks_wrong, 0u);
  EXPECT_EQ(store_.acks_unnamed, 0u);
  EXPECT_EQ(store_.acks_named, 70u) << "one batch past half the budget: every location asked";
  // Recovered full messages come with their location: their acks name it.
  std::vector<Broker*> peers;
  for (auto& b : brokers_) peers.push_back(b.get());
  const auto named = store_.acks_named;
  for (int i = 1; i <= 5; ++i) {
    auto m = make_message(500 + i);
    store_.messages[9000 + static_cast<std::uint64_t>(i)] = m;
    store_.reported.insert(m->id);
    Broker::recover(peers, store::RecoveredMessage{kQueue.key(), m, 0, store::Location{9000 + static_cast<std::uint64_t>(i), 0, 0}});
  }
  on(0, [&](Broker& b) { purge_queue(b, kQueue.key(), {}, 1'000'000, [](Result<std::size_t>) {}); });
  settle();
  EXPECT_EQ(store_.acks_wrong, 0u);
  EXPECT_EQ(store_.acks_unnamed, 0u);
  EXPECT_EQ(store_.acks_named, named + 5);
}

}  // namespace
}  // namespace carrier::core
