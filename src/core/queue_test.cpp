#include "core/queue.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <random>
#include <memory>
#include <string>

namespace carrier::core {

using model::DestinationKind;
using model::Message;
using model::MessageId;
using model::MessagePtr;
using model::ShardId;

namespace {

MessagePtr make(int n, std::uint8_t priority = 4, std::int64_t expires = 0) {
  auto m = std::make_shared<Message>();
  m->id = MessageId{0, static_cast<std::uint64_t>(n)};
  m->destination = {DestinationKind::queue, "q"};
  m->priority = priority;
  m->expires_ms = expires;
  m->body = std::make_shared<const std::string>(std::to_string(n));
  return m;
}

ConsumerRef consumer(std::uint64_t id, std::uint32_t prefetch, AckMode mode = AckMode::client_individual) {
  return ConsumerRef{ConsumerId(id), ShardId(0), nullptr, mode, prefetch};
}

std::vector<std::string> bodies(const std::vector<Queue::Dispatch>& ds, std::uint64_t id) {
  std::vector<std::string> out;
  for (const auto& d : ds) {
    if (d.consumer.id.value() != id) continue;
    for (const auto& del : d.batch) out.push_back(*del.message->body);
  }
  return out;
}

TEST(Queue, FifoToOneConsumerWithinCredit) {
  Queue q("queue:q");
  for (int i = 1; i <= 5; ++i) q.enqueue(make(i));
  q.add_consumer(consumer(1, 3));
  std::vector<Queue::Entry> expired;
  auto ds = q.dispatch(0, expired);
  EXPECT_EQ(bodies(ds, 1), (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_EQ(q.depth(), 2u);
  EXPECT_TRUE(q.dispatch(0, expired).empty()) << "no credit left";
  std::vector<std::uint64_t> tags{1, 2};
  auto out = q.ack(ConsumerId(1), tags);
  EXPECT_EQ(out.removed.size(), 2u);
  EXPECT_EQ(bodies(q.dispatch(0, expired), 1), (std::vector<std::string>{"4", "5"}));
}

TEST(Queue, RoundRobinAmongConsumers) {
  Queue q("queue:q");
  q.add_consumer(consumer(1, 100));
  q.add_consumer(consumer(2, 100));
  for (int i = 1; i <= 6; ++i) q.enqueue(make(i));
  std::vector<Queue::Entry> expired;
  auto ds = q.dispatch(0, expired);
  EXPECT_EQ(bodies(ds, 1), (std::vector<std::string>{"1", "3", "5"}));
  EXPECT_EQ(bodies(ds, 2), (std::vector<std::string>{"2", "4", "6"}));
}

TEST(Queue, PriorityThenFifo) {
  Queue q("queue:q");
  q.enqueue(make(1, 4));
  q.enqueue(make(2, 9));
  q.enqueue(make(3, 0));
  q.enqueue(make(4, 9));
  q.add_consumer(consumer(1, 100));
  std::vector<Queue::Entry> expired;
  EXPECT_EQ(bodies(q.dispatch(0, expired), 1), (std::vector<std::string>{"2", "4", "1", "3"}));
}

TEST(Queue, OldestReadyTimestampIsTheFirstArrivalAcrossPriorities) {
  Queue q("queue:q");
  EXPECT_EQ(q.oldest_ready_timestamp_ms(), 0);
  auto stamped = [](int n, std::uint8_t priority, std::int64_t ts) {
    auto m = std::make_shared<Message>(*make(n, priority));
    m->timestamp_ms = ts;
    return MessagePtr(std::move(m));
  };
  q.enqueue(stamped(1, 0, 1000));  // low priority, but first
  q.enqueue(stamped(2, 9, 2000));
  q.enqueue(stamped(3, 4, 3000));
  EXPECT_EQ(q.oldest_ready_timestamp_ms(), 1000);
  q.add_consumer(consumer(1, 2));  // takes 2 (priority 9) and 3
  std::vector<Queue::Entry> expired;
  (void)q.dispatch(0, expired);
  EXPECT_EQ(q.oldest_ready_timestamp_ms(), 1000);
  q.add_consumer(consumer(2, 1));
  (void)q.dispatch(0, expired);  // takes 1: nothing is ready
  EXPECT_EQ(q.oldest_ready_timestamp_ms(), 0);
}

TEST(Queue, RemovedConsumerReturnsUnackedInOrderFlaggedRedelivered) {
  Queue q("queue:q");
  for (int i = 1; i <= 4; ++i) q.enqueue(make(i));
  q.add_consumer(consumer(1, 2));
  std::vector<Queue::Entry> expired;
  (void)q.dispatch(0, expired);
  auto returned = q.remove_consumer(ConsumerId(1));
  ASSERT_EQ(returned.size(), 2u);
  for (auto& e : returned) q.requeue(std::move(e));
  q.add_consumer(consumer(2, 10));
  auto ds = q.dispatch(0, expired);
  ASSERT_EQ(ds.size(), 1u);
  ASSERT_EQ(ds[0].batch.size(), 4u);
  EXPECT_EQ(*ds[0].batch[0].message->body, "1");
  EXPECT_TRUE(ds[0].batch[0].redelivered);
  EXPECT_EQ(ds[0].batch[0].delivery_count, 2u);
  EXPECT_EQ(*ds[0].batch[2].message->body, "3");
  EXPECT_FALSE(ds[0].batch[2].redelivered);
}

TEST(Queue, NackRequeuesAndUnknownTagsAreCounted) {
  Queue q("queue:q");
  q.enqueue(make(1));
  q.add_consumer(consumer(1, 10));
  std::vector<Queue::Entry> expired;
  auto ds = q.dispatch(0, expired);
  std::vector<std::uint64_t> tags{ds[0].batch[0].tag, 999};
  auto out = q.nack(ConsumerId(1), tags);
  EXPECT_EQ(out.unknown_tags, 1u);
  ASSERT_EQ(out.returned.size(), 1u);
  q.requeue(std::move(out.returned[0]));
  auto again = q.dispatch(0, expired);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_TRUE(again[0].batch[0].redelivered);
}

TEST(Queue, ExpiredMessagesAreNeverDelivered) {
  Queue q("queue:q");
  q.enqueue(make(1, 4, 100));
  q.enqueue(make(2, 4, 0));
  q.add_consumer(consumer(1, 10));
  std::vector<Queue::Entry> expired;
  auto ds = q.dispatch(200, expired);
  EXPECT_EQ(bodies(ds, 1), (std::vector<std::string>{"2"}));
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(*expired[0].message->body, "1");
}

TEST(Queue, RestoredMessagesAreFlaggedWhenDeliveredBefore) {
  Queue q("queue:q");
  q.restore(make(1), 0);
  q.restore(make(2), 1);
  q.add_consumer(consumer(1, 10));
  std::vector<Queue::Entry> expired;
  auto ds = q.dispatch(0, expired);
  ASSERT_EQ(ds[0].batch.size(), 2u);
  EXPECT_FALSE(ds[0].batch[0].redelivered);
  EXPECT_TRUE(ds[0].batch[1].redelivered);
  EXPECT_EQ(ds[0].batch[1].delivery_count, 2u);
}

TEST(Queue, SelectorsKeepUnmatchedMessagesForOthers) {
  // A stand-in matcher: the "selector" is the set of bodies a consumer takes.
  Queue q("queue:q", [](const selector::Selector& s, const Message& m) {
    return reinterpret_cast<const std::string&>(s).find(*m.body) != std::string::npos;
  });
  auto odd = std::make_shared<std::string>("135");
  auto r = consumer(1, 10);
  r.selector = std::shared_ptr<const selector::Selector>(odd, reinterpret_cast<const selector::Selector*>(odd.get()));
  q.add_consumer(r);
  for (int i = 1; i <= 4; ++i) q.enqueue(make(i));
  std::vector<Queue::Entry> expired;
  EXPECT_EQ(bodies(q.dispatch(0, expired), 1), (std::vector<std::string>{"1", "3"}));
  EXPECT_EQ(q.depth(), 2u) << "2 and 4 wait for a consumer that takes them";
  q.add_consumer(consumer(2, 10));
  EXPECT_EQ(bodies(q.dispatch(0, expired), 2), (std::vector<std::string>{"2", "4"}));
}

// A stand-in selector: the set of bodies a consumer takes, as one string (" 1 3 5 "). The matcher
// counts its calls per consumer.
struct CountingSelectors {
  std::vector<std::shared_ptr<std::string>> sets;
  std::shared_ptr<std::map<const void*, int>> calls = std::make_shared<std::map<const void*, int>>();

  Queue::Matcher matcher() const {
    return [calls = calls](const selector::Selector& s, const Message& m) {
      ++(*calls)[&s];
      const auto& set = reinterpret_cast<const std::string&>(s);
      return set.find(" " + *m.body + " ") != std::string::npos;
    };
  }
  ConsumerRef consumer_taking(std::uint64_t id, std::uint32_t prefetch, std::string bodies) {
    auto set = std::make_shared<std::string>(std::move(bodies));
    sets.push_back(set);
    auto r = consumer(id, prefetch);
    r.selector = std::shared_ptr<const selector::Selector>(set, reinterpret_cast<const selector::Selector*>(set.get()));
    return r;
  }
  int calls_for(std::size_t consumer_index) const {
    const auto it = calls->find(sets.at(consumer_index).get());
    return it == calls->end() ? 0 : it->second;
  }
};

TEST(Queue, ASelectorSeesEachMessageOnceAcrossDispatches) {
  CountingSelectors selectors;
  Queue q("queue:q", selectors.matcher());
  q.add_consumer(selectors.consumer_taking(1, 10, " none "));
  std::vector<Queue::Entry> expired;
  // A dispatch after each send, as the broker does: the backlog nobody matches is not rescanned.
  for (int i = 1; i <= 1000; ++i) {
    q.enqueue(make(i, static_cast<std::uint8_t>(i % 10)));
    EXPECT_TRUE(q.dispatch(0, expired).empty());
  }
  EXPECT_EQ(selectors.calls_for(0), 1000);
  EXPECT_EQ(q.depth(), 1000u);
  // A consumer that takes everything still gets them all, highest priority first.
  q.add_consumer(consumer(2, 2000));
  const auto got = bodies(q.dispatch(0, expired), 2);
  ASSERT_EQ(got.size(), 1000u);
  EXPECT_EQ(got.front(), "9");
  EXPECT_EQ(got.back(), "1000");
  EXPECT_EQ(selectors.calls_for(0), 1000) << "a consumer with no new messages to look at";
}

TEST(Queue, SelectorConsumersStillTakeWhatTheyMatchAmongRefusedOnes) {
  CountingSelectors selectors;
  Queue q("queue:q", selectors.matcher());
  q.add_consumer(selectors.consumer_taking(1, 100, " 7 19 "));
  q.add_consumer(selectors.consumer_taking(2, 100, " 3 20 "));
  std::vector<Queue::Entry> expired;
  std::vector<std::string> one;
  std::vector<std::string> two;
  for (int i = 1; i <= 20; ++i) {
    q.enqueue(make(i, static_cast<std::uint8_t>(i % 3 * 4)));
    const auto ds = q.dispatch(0, expired);
    for (const auto& b : bodies(ds, 1)) one.push_back(b);
    for (const auto& b : bodies(ds, 2)) two.push_back(b);
  }
  EXPECT_EQ(one, (std::vector<std::string>{"7", "19"}));
  EXPECT_EQ(two, (std::vector<std::string>{"3", "20"}));
  EXPECT_EQ(q.depth(), 16u);
  // Each consumer looked at each message at most once (a message the first one took is never
  // offered to the second, so fewer).
  EXPECT_LE(selectors.calls_for(0), 20);
  EXPECT_LE(selectors.calls_for(1), 20);
}

TEST(Queue, MessagesReturnedToTheQueueAreOfferedToSelectorsAgain) {
  CountingSelectors selectors;
  Queue q("queue:q", selectors.matcher());
  std::vector<Queue::Entry> expired;
  // A consumer without a selector holds 1..5 when the selective one arrives.
  q.add_consumer(consumer(1, 5));
  for (int i = 1; i <= 5; ++i) q.enqueue(make(i));
  EXPECT_EQ(bodies(q.dispatch(0, expired), 1).size(), 5u);
  q.add_consumer(selectors.consumer_taking(2, 10, " 2 4 "));
  // It refuses 6..10, which come after the ones it never saw.
  for (int i = 6; i <= 10; ++i) {
    q.enqueue(make(i));
    EXPECT_TRUE(q.dispatch(0, expired).empty());
  }
  // The first consumer leaves: 1..5 return, redelivered, and 2 and 4 go to the selective one.
  for (auto& e : q.remove_consumer(ConsumerId(1))) q.requeue(std::move(e));
  const auto ds = q.dispatch(0, expired);
  ASSERT_EQ(ds.size(), 1u);
  ASSERT_EQ(ds[0].batch.size(), 2u);
  EXPECT_EQ(*ds[0].batch[0].message->body, "2");
  EXPECT_TRUE(ds[0].batch[0].redelivered);
  EXPECT_EQ(*ds[0].batch[1].message->body, "4");
  EXPECT_EQ(q.depth(), 8u);
  // A nacked message comes back the same way.
  std::vector<std::uint64_t> tags{1};
  auto nacked = q.nack(ConsumerId(2), tags);
  ASSERT_EQ(nacked.returned.size(), 1u);
  q.requeue(std::move(nacked.returned[0]));
  EXPECT_EQ(bodies(q.dispatch(0, expired), 2), (std::vector<std::string>{"2"}));
  // Only the returned messages are looked at again: 6..10, then 1..5, then 2.
  EXPECT_EQ(selectors.calls_for(0), 5 + 5 + 1);
}

TEST(Queue, ManyReturnedMessagesStillReachTheirSelector) {
  CountingSelectors selectors;
  Queue q("queue:q", selectors.matcher());
  std::vector<Queue::Entry> expired;
  q.add_consumer(consumer(1, 100));
  for (int i = 1; i <= 100; ++i) q.enqueue(make(i));
  EXPECT_EQ(bodies(q.dispatch(0, expired), 1).size(), 100u);
  q.add_consumer(selectors.consumer_taking(2, 10, " 7 70 100 "));
  q.enqueue(make(101));
  EXPECT_TRUE(q.dispatch(0, expired).empty());
  // More returned messages than a consumer keeps track of one by one: it looks again from the
  // first of those it could not keep.
  for (auto& e : q.remove_consumer(ConsumerId(1))) q.requeue(std::move(e));
  EXPECT_EQ(bodies(q.dispatch(0, expired), 2), (std::vector<std::string>{"7", "70", "100"}));
  EXPECT_EQ(q.depth(), 98u);
  EXPECT_LE(selectors.calls_for(0), 1 + 100 + 1);
}

// The dispatch rules written plainly, with every selector evaluated every time (what Queue did
// before it remembered refusals): Queue must hand out exactly the same messages, in the same
// order, to the same consumers, under random sends, acks, nacks, arrivals and departures.
class PlainQueueModel {
 public:
  struct Item {
    std::uint64_t seq;
    int body;
    std::uint8_t priority;
  };
  struct Taker {
    std::uint64_t id;
    std::uint32_t prefetch;
    std::string set;  // "" takes everything
    std::vector<std::pair<std::uint64_t, Item>> unacked;
    std::uint64_t next_tag = 1;
  };

  void enqueue(int body, std::uint8_t priority) { insert({next_seq_++, body, priority}); }
  void insert(Item item) {
    auto& lane = lanes_[item.priority];
    auto at = std::find_if(lane.begin(), lane.end(), [&](const Item& i) { return i.seq > item.seq; });
    lane.insert(at, item);
  }
  void add(std::uint64_t id, std::uint32_t prefetch, std::string set) {
    takers_.push_back({id, prefetch, std::move(set), {}, 1});
  }
  void remove(std::uint64_t id) {
    auto it = std::find_if(takers_.begin(), takers_.end(), [&](const Taker& t) { return t.id == id; });
    std::vector<Item> back;
    for (auto& [tag, item] : it->unacked) back.push_back(item);
    std::sort(back.begin(), back.end(), [](const Item& a, const Item& b) { return a.seq < b.seq; });
    const auto index = static_cast<std::size_t>(it - takers_.begin());
    takers_.erase(it);
    if (rr_ > index) --rr_;
    if (rr_ >= takers_.size()) rr_ = 0;
    for (const auto& item : back) insert(item);
  }
  void settle(std::uint64_t id, std::uint64_t tag, bool requeue) {
    for (auto& t : takers_) {
      if (t.id != id) continue;
      for (auto it = t.unacked.begin(); it != t.unacked.end(); ++it) {
        if (it->first != tag) continue;
        const Item item = it->second;
        t.unacked.erase(it);
        if (requeue) insert(item);
        return;
      }
    }
  }
  // (consumer id, body) in hand-out order.
  std::vector<std::pair<std::uint64_t, int>> dispatch() {
    std::vector<std::pair<std::uint64_t, int>> out;
    const auto credit = [](const Taker& t) { return t.unacked.size() < t.prefetch; };
    const auto any_credit = [&] { return std::any_of(takers_.begin(), takers_.end(), credit); };
    for (int p = 9; p >= 0; --p) {
      auto& lane = lanes_[p];
      for (auto it = lane.begin(); it != lane.end() && any_credit();) {
        std::size_t chosen = takers_.size();
        for (std::size_t i = 0; i < takers_.size(); ++i) {
          const std::size_t idx = (rr_ + i) % takers_.size();
          const Taker& t = takers_[idx];
          if (credit(t) && (t.set.empty() || t.set.find(" " + std::to_string(it->body) + " ") != std::string::npos)) {
            chosen = idx;
            break;
          }
        }
        if (chosen == takers_.size()) {
          ++it;
          continue;
        }
        rr_ = (chosen + 1) % takers_.size();
        Taker& t = takers_[chosen];
        t.unacked.emplace_back(t.next_tag++, *it);
        out.emplace_back(t.id, it->body);
        it = lane.erase(it);
      }
      if (!any_credit()) break;
    }
    return out;
  }
  std::vector<Taker>& takers() { return takers_; }

 private:
  std::array<std::vector<Item>, 10> lanes_;
  std::vector<Taker> takers_;
  std::size_t rr_ = 0;
  std::uint64_t next_seq_ = 1;
};

TEST(Queue, RememberingRefusalsChangesNothingAgainstThePlainRules) {
  std::mt19937 random(20261201);
  const auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(random); };
  for (int run = 0; run < 40; ++run) {
    CountingSelectors selectors;
    Queue q("queue:q", selectors.matcher());
    PlainQueueModel model;
    std::vector<Queue::Entry> expired;
    std::uint64_t next_id = 1;
    int next_body = 1;
    for (int step = 0; step < 400; ++step) {
      const int what = pick(10);
      auto& takers = model.takers();
      if (what <= 4) {
        const auto priority = static_cast<std::uint8_t>(pick(3) * 4);
        q.enqueue(make(next_body, priority));
        model.enqueue(next_body++, priority);
      } else if (what == 5 && takers.size() < 4) {
        const auto prefetch = static_cast<std::uint32_t>(1 + pick(4));
        std::string set;
        if (pick(4) != 0) {
          set = " ";
          for (int b = 1; b < next_body + 40; ++b) {
            if (pick(5) == 0) set += std::to_string(b) + " ";
          }
        }
        const std::uint64_t id = next_id++;
        q.add_consumer(set.empty() ? consumer(id, prefetch) : selectors.consumer_taking(id, prefetch, set));
        model.add(id, prefetch, set);
      } else if (what == 6 && !takers.empty()) {
        const std::uint64_t id = takers[static_cast<std::size_t>(pick(static_cast<int>(takers.size())))].id;
        for (auto& e : q.remove_consumer(ConsumerId(id))) q.requeue(std::move(e));
        model.remove(id);
      } else if (what >= 7 && !takers.empty()) {
        auto& t = takers[static_cast<std::size_t>(pick(static_cast<int>(takers.size())))];
        if (t.unacked.empty()) continue;
        const std::uint64_t tag = t.unacked[static_cast<std::size_t>(pick(static_cast<int>(t.unacked.size())))].first;
        const bool requeue = what == 9;
        std::vector<std::uint64_t> tags{tag};
        if (requeue) {
          auto outcome = q.nack(ConsumerId(t.id), tags);
          for (auto& e : outcome.returned) q.requeue(std::move(e));
        } else {
          (void)q.ack(ConsumerId(t.id), tags);
        }
        model.settle(t.id, tag, requeue);
      }
      std::vector<std::pair<std::uint64_t, int>> got;
      for (const auto& d : q.dispatch(0, expired)) {
        for (const auto& del : d.batch) got.emplace_back(d.consumer.id.value(), std::stoi(*del.message->body));
      }
      auto want = model.dispatch();
      // Queue groups the hand-outs per consumer (one batch each); compare per consumer, in order.
      std::stable_sort(got.begin(), got.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      std::stable_sort(want.begin(), want.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      ASSERT_EQ(got, want) << "run " << run << " step " << step;
    }
  }
}

TEST(Queue, TakeExpiredOldestAndAll) {
  Queue q("queue:q");
  q.enqueue(make(1, 4, 50));
  q.enqueue(make(2, 4, 0));
  q.enqueue(make(3, 0, 0));
  auto expired = q.take_expired(100);
  ASSERT_EQ(expired.size(), 1u);
  Queue::Entry oldest;
  ASSERT_TRUE(q.take_oldest(oldest));
  EXPECT_EQ(*oldest.message->body, "3") << "lowest priority goes first";
  EXPECT_EQ(q.take_all().size(), 1u);
  EXPECT_EQ(q.depth(), 0u);
  EXPECT_EQ(q.ready_bytes(), 0u);
}

// The sweep skips a queue whose ready messages cannot have expired yet (it keeps a lower bound
// of their expiry times): each message with an expiry is still taken once its time has come,
// whichever way it arrived (enqueued, requeued after a nack) and whatever left before it.
TEST(Queue, TakeExpiredFindsEachExpiryTheSkipMightHide) {
  Queue q("queue:q");
  q.enqueue(make(1));
  q.enqueue(make(2, 4, 200));
  EXPECT_TRUE(q.take_expired(199).empty());
  auto gone = q.take_expired(200);
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(*gone[0].message->body, "2");
  EXPECT_TRUE(q.take_expired(1'000'000).empty());  // none left with an expiry
  // An earlier expiry after a later one, and one that leaves by dispatch before its time.
  q.enqueue(make(3, 4, 500));
  q.enqueue(make(4, 0, 300));
  EXPECT_TRUE(q.take_expired(299).empty());
  gone = q.take_expired(300);
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(*gone[0].message->body, "4");
  gone = q.take_expired(500);
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(*gone[0].message->body, "3");
  // A delivered message with an expiry, nacked back into the queue, is swept in its turn.
  q.add_consumer(consumer(1, 10));
  q.enqueue(make(5, 4, 900));
  std::vector<Queue::Entry> expired;
  auto ds = q.dispatch(800, expired);
  ASSERT_EQ(bodies(ds, 1), (std::vector<std::string>{"1", "5"}));
  auto outcome = q.nack(ConsumerId(1), std::vector<std::uint64_t>{ds[0].batch[1].tag});
  ASSERT_EQ(outcome.returned.size(), 1u);
  (void)q.remove_consumer(ConsumerId(1));
  q.requeue(std::move(outcome.returned[0]));
  EXPECT_TRUE(q.take_expired(899).empty());
  gone = q.take_expired(900);
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(*gone[0].message->body, "5");
}

}  // namespace
}  // namespace carrier::core
