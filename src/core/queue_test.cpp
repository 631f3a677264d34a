#include "core/queue.hpp"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

namespace carrier::core {
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

}  // namespace
}  // namespace carrier::core
