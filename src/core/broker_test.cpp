#include "core/broker.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <tuple>

namespace carrier::core {
namespace {

// Several shards on one test thread: posted functions queue up and run in order when drained.
class FakeExecutor : public Executor {
 public:
  explicit FakeExecutor(std::size_t n) : n_(n) {}
  std::size_t shard_count() const override { return n_; }
  void post(ShardId shard, std::function<void()> fn) override { tasks_.emplace_back(shard, std::move(fn)); }
  void post_after(ShardId shard, std::uint64_t delay_ms, std::function<void()> fn) override {
    timers_.emplace_back(delay_ms, shard, std::move(fn));
  }
  // Fires every pending timer (time is the test's to move).
  void fire_timers() {
    auto timers = std::move(timers_);
    timers_.clear();
    for (auto& [delay, shard, fn] : timers) on(shard, fn);
    drain();
  }
  std::optional<ShardId> current() const override { return current_; }
  std::vector<std::uint64_t> timer_delays() const {
    std::vector<std::uint64_t> out;
    for (const auto& [delay, shard, fn] : timers_) out.push_back(delay);
    return out;
  }

  void on(ShardId shard, const std::function<void()>& fn) {
    auto prev = current_;
    current_ = shard;
    fn();
    current_ = prev;
  }
  void drain() {
    while (!tasks_.empty()) {
      auto [shard, fn] = std::move(tasks_.front());
      tasks_.pop_front();
      on(shard, fn);
    }
  }
  void set_current(std::optional<ShardId> s) { current_ = s; }

 private:
  std::size_t n_;
  std::deque<std::pair<ShardId, std::function<void()>>> tasks_;
  std::vector<std::tuple<std::uint64_t, ShardId, std::function<void()>>> timers_;
  std::optional<ShardId> current_;
};

// Completes batches only when told, on "no shard" (like the store's writer thread).
class FakeStore : public store::Store {
 public:
  explicit FakeStore(FakeExecutor& ex) : ex_(ex) {}
  Status open() override { return ok(); }
  Status recover(const std::function<void(store::RecoveredMessage)>&) override { return ok(); }
  void start() override {}
  void append(store::Batch batch, store::DurableCallback cb) override {
    for (auto& r : batch) records.push_back(r);
    pending_.emplace_back(std::move(cb));
  }
  void close() override {}
  void complete_all(Status st = ok()) {
    auto prev = ex_.current();
    ex_.set_current(std::nullopt);
    auto pending = std::move(pending_);
    pending_.clear();
    for (auto& cb : pending) cb(st);
    ex_.set_current(prev);
  }
  std::vector<store::Record> records;

 private:
  FakeExecutor& ex_;
  std::vector<store::DurableCallback> pending_;
};

struct Collector : Consumer {
  std::vector<Delivery> got;
  void deliver(ConsumerId, std::vector<Delivery> batch) override {
    for (auto& d : batch) got.push_back(std::move(d));
  }
  std::vector<std::string> bodies() const {
    std::vector<std::string> out;
    for (const auto& d : got) out.push_back(*d.message->body);
    return out;
  }
};

class BrokerTest : public ::testing::Test {
 protected:
  static constexpr std::size_t kShards = 3;
  BrokerTest() : ex_(kShards), store_(ex_) { build(Options{}); }

  void build(Options options, MemoryGauge* memory = nullptr) {
    brokers_.clear();
    for (std::size_t i = 0; i < kShards; ++i) {
      brokers_.push_back(std::make_unique<Broker>(ShardId(static_cast<std::uint32_t>(i)), ex_, store_, options,
                                                  [this] { return now_; }, memory != nullptr ? memory : &memory_));
    }
    std::vector<Broker*> peers;
    for (auto& b : brokers_) peers.push_back(b.get());
    for (auto& b : brokers_) b->set_peers(peers);
  }

  // Moves the clock and runs whatever became due.
  void advance(std::int64_t ms) {
    now_ += ms;
    ex_.fire_timers();
  }

  std::int64_t now_ = 1'000'000;

  MessagePtr make(std::string body, Destination d, bool persistent = false) {
    auto m = std::make_shared<Message>();
    m->id = brokers_[0]->next_message_id();
    m->destination = std::move(d);
    m->persistent = persistent;
    m->body = std::make_shared<const std::string>(std::move(body));
    return m;
  }

  // Runs `fn` as a session on `shard` would, then lets every posted function run.
  void on(std::uint32_t shard, const std::function<void(Broker&)>& fn) {
    ex_.on(ShardId(shard), [&] { fn(*brokers_[shard]); });
    ex_.drain();
  }

  std::size_t total_queues() const {
    std::size_t n = 0;
    for (const auto& b : brokers_) n += b->stats().queues;
    return n;
  }

  FakeExecutor ex_;
  FakeStore store_;
  MemoryGauge memory_;
  std::vector<std::unique_ptr<Broker>> brokers_;
};

const Destination kQueue{DestinationKind::queue, "orders"};

TEST_F(BrokerTest, QueueAcrossShardsDeliversAndCompletes) {
  auto c = std::make_shared<Collector>();
  bool subscribed = false;
  on(1, [&](Broker& b) {
    auto id = b.subscribe({kQueue, AckMode::client_individual, 10, c}, [&](Status st) { subscribed = st.has_value(); });
    ASSERT_TRUE(id.has_value());
  });
  EXPECT_TRUE(subscribed);
  bool sent = false;
  on(2, [&](Broker& b) { b.send({make("a", kQueue), make("b", kQueue)}, [&](Status st) { sent = st.has_value(); }); });
  EXPECT_TRUE(sent);
  EXPECT_EQ(c->bodies(), (std::vector<std::string>{"a", "b"}));
}

TEST_F(BrokerTest, NoDeliveryBeforeSubscribeReturnsOnTheOwningShard) {
  // The queue already holds a message and is owned by the subscriber's own shard.
  const auto owner = owner_shard(kQueue.key(), kShards).value();
  on(owner, [&](Broker& b) { b.send({make("early", kQueue)}, nullptr); });
  auto c = std::make_shared<Collector>();
  ex_.on(ShardId(owner), [&] {
    ASSERT_TRUE(brokers_[owner]->subscribe({kQueue, AckMode::auto_ack, 0, c}, nullptr).has_value());
    EXPECT_TRUE(c->got.empty()) << "delivered before the session knew its consumer id";
  });
  ex_.drain();
  EXPECT_EQ(c->bodies(), (std::vector<std::string>{"early"}));
}

TEST_F(BrokerTest, PersistentSendCompletesOnlyWhenDurable) {
  bool sent = false;
  on(0, [&](Broker& b) { b.send({make("p", kQueue, true)}, [&](Status st) { sent = st.has_value(); }); });
  EXPECT_FALSE(sent);
  ASSERT_EQ(store_.records.size(), 1u);
  EXPECT_EQ(store_.records[0].kind, store::RecordKind::message);
  EXPECT_EQ(store_.records[0].queue, "queue:orders");
  store_.complete_all();
  ex_.drain();
  EXPECT_TRUE(sent);
}

TEST_F(BrokerTest, StoreFailureReachesTheProducer) {
  Status result;
  on(0, [&](Broker& b) { b.send({make("p", kQueue, true)}, [&](Status st) { result = st; }); });
  store_.complete_all(unexpected(Errc::io_error, "disk full"));
  ex_.drain();
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code, Errc::io_error);
}

TEST_F(BrokerTest, AckOfPersistentMessageIsRecorded) {
  auto c = std::make_shared<Collector>();
  ConsumerId id;
  on(1, [&](Broker& b) { id = *b.subscribe({kQueue, AckMode::client_individual, 10, c}, nullptr); });
  on(2, [&](Broker& b) { b.send({make("p", kQueue, true)}, nullptr); });
  ASSERT_EQ(c->got.size(), 1u);
  bool acked = false;
  on(1, [&](Broker& b) { b.ack(id, {c->got[0].tag}, [&](Status st) { acked = st.has_value(); }); });
  store_.complete_all();
  ex_.drain();
  EXPECT_TRUE(acked);
  ASSERT_EQ(store_.records.size(), 3u);  // message, delivered, ack
  EXPECT_EQ(store_.records[1].kind, store::RecordKind::delivered);
  EXPECT_EQ(store_.records[2].kind, store::RecordKind::ack);
}

TEST_F(BrokerTest, StateRecordsShareTheBatchOfTheirSendOrAck) {
  auto c = std::make_shared<Collector>();
  ConsumerId id;
  on(1, [&](Broker& b) { id = *b.subscribe({kQueue, AckMode::client_individual, 10, c}, nullptr); });
  auto state = make("in flight", Destination{DestinationKind::queue, "$proto-state"}, true);
  bool sent = false;
  on(2, [&](Broker& b) {
    b.send({make("p", kQueue, true)}, {StateRecord{"$proto-state", state, {}}}, [&](Status st) { sent = st.has_value(); });
  });
  // One append: the message and the state record land together (then the delivery record).
  ASSERT_EQ(store_.records.size(), 3u);
  EXPECT_EQ(store_.records[0].queue, "queue:orders");
  EXPECT_EQ(store_.records[1].queue, "queue:$proto-state");
  EXPECT_EQ(store_.records[1].kind, store::RecordKind::message);
  EXPECT_FALSE(sent);
  store_.complete_all();
  ex_.drain();
  EXPECT_TRUE(sent);
  ASSERT_EQ(c->got.size(), 1u);
  store_.records.clear();
  auto next = make("owed", Destination{DestinationKind::queue, "$proto-state"}, true);
  bool acked = false;
  on(1, [&](Broker& b) {
    b.ack(id, {c->got[0].tag}, {StateRecord{"$proto-state", next, state->id}}, [&](Status st) { acked = st.has_value(); });
  });
  ASSERT_EQ(store_.records.size(), 3u);  // ack, new state, old state removed: one batch
  EXPECT_EQ(store_.records[0].kind, store::RecordKind::ack);
  EXPECT_EQ(store_.records[1].message_id, next->id);
  EXPECT_EQ(store_.records[2].kind, store::RecordKind::ack);
  EXPECT_EQ(store_.records[2].message_id, state->id);
  EXPECT_FALSE(acked);
  store_.complete_all();
  ex_.drain();
  EXPECT_TRUE(acked);
  // Never routed: nobody can consume a state queue, and it holds nothing in memory.
  EXPECT_EQ(brokers_[owner_shard("queue:$proto-state", kShards).value()]->stats().messages_ready, 0u);
  store_.records.clear();
  bool written = false;
  on(0, [&](Broker& b) { b.write_state({StateRecord{"$proto-state", nullptr, next->id}}, [&](Status st) { written = st.has_value(); }); });
  ASSERT_EQ(store_.records.size(), 1u);
  store_.complete_all();
  ex_.drain();
  EXPECT_TRUE(written);
}

TEST_F(BrokerTest, UnsubscribeReturnsUnackedToOtherConsumers) {
  auto c1 = std::make_shared<Collector>();
  auto c2 = std::make_shared<Collector>();
  ConsumerId id1;
  on(0, [&](Broker& b) { id1 = *b.subscribe({kQueue, AckMode::client, 1, c1}, nullptr); });
  on(2, [&](Broker& b) { b.send({make("x", kQueue)}, nullptr); });
  ASSERT_EQ(c1->got.size(), 1u);
  on(1, [&](Broker& b) { (void)b.subscribe({kQueue, AckMode::client, 1, c2}, nullptr); });
  EXPECT_TRUE(c2->got.empty());
  on(0, [&](Broker& b) { b.unsubscribe(id1, nullptr); });
  ASSERT_EQ(c2->got.size(), 1u);
  EXPECT_TRUE(c2->got[0].redelivered);
}

TEST_F(BrokerTest, TopicFanOutWithWildcardsAcrossShards) {
  auto a = std::make_shared<Collector>();
  auto b = std::make_shared<Collector>();
  auto c = std::make_shared<Collector>();
  on(0, [&](Broker& br) { (void)br.subscribe({{DestinationKind::topic, "prices.*"}, AckMode::auto_ack, 0, a}, nullptr); });
  on(1, [&](Broker& br) { (void)br.subscribe({{DestinationKind::topic, "prices.>"}, AckMode::auto_ack, 0, b}, nullptr); });
  on(2, [&](Broker& br) { (void)br.subscribe({{DestinationKind::topic, "other"}, AckMode::auto_ack, 0, c}, nullptr); });
  on(2, [&](Broker& br) {
    br.send({make("1", {DestinationKind::topic, "prices.eu"}), make("2", {DestinationKind::topic, "prices.eu.de"})},
            nullptr);
  });
  EXPECT_EQ(a->bodies(), (std::vector<std::string>{"1"}));
  EXPECT_EQ(b->bodies(), (std::vector<std::string>{"1", "2"}));
  EXPECT_TRUE(c->got.empty());
}

TEST_F(BrokerTest, TransactionAppliesAfterOneBatch) {
  auto c = std::make_shared<Collector>();
  on(1, [&](Broker& b) { (void)b.subscribe({kQueue, AckMode::client_individual, 10, c}, nullptr); });
  bool committed = false;
  on(0, [&](Broker& b) {
    Transaction tx;
    tx.sends = {make("t1", kQueue, true), make("t2", kQueue, true)};
    b.commit(std::move(tx), [&](Status st) { committed = st.has_value(); });
  });
  EXPECT_TRUE(c->got.empty()) << "nothing visible before the batch is durable";
  EXPECT_EQ(store_.records.size(), 2u);
  store_.complete_all();
  ex_.drain();
  EXPECT_TRUE(committed);
  EXPECT_EQ(c->bodies(), (std::vector<std::string>{"t1", "t2"}));
}

TEST_F(BrokerTest, DestinationChecks) {
  auto& b = *brokers_[0];
  EXPECT_FALSE(b.check_destination({DestinationKind::topic, "a.*"}, false).has_value());
  EXPECT_TRUE(b.check_destination({DestinationKind::topic, "a.*"}, true).has_value());
  EXPECT_FALSE(b.check_destination({DestinationKind::queue, ""}, false).has_value());
  Options strict;
  strict.auto_create = false;
  strict.queues = {"known"};
  Broker s(ShardId(0), ex_, store_, strict);
  EXPECT_TRUE(s.check_destination({DestinationKind::queue, "known"}, false).has_value());
  auto st = s.check_destination({DestinationKind::queue, "unknown"}, false);
  ASSERT_FALSE(st.has_value());
  EXPECT_EQ(st.error().code, Errc::not_found);
}

const Destination kTopic{DestinationKind::topic, "news"};

TEST_F(BrokerTest, DurableSubscriptionKeepsMessagesWhileDetached) {
  auto c = std::make_shared<Collector>();
  ConsumerId id;
  SubscribeRequest req{kTopic, AckMode::auto_ack, 0, c};
  req.subscription_name = "stomp:app:s1";
  req.durable = true;
  on(0, [&](Broker& b) { id = *b.subscribe(req, nullptr); });
  store_.complete_all();
  ex_.drain();
  on(1, [&](Broker& b) { b.send({make("one", kTopic, true)}, nullptr); });
  EXPECT_EQ(c->bodies(), (std::vector<std::string>{"one"}));
  on(0, [&](Broker& b) { b.ack(id, {c->got[0].tag}, nullptr); });
  on(0, [&](Broker& b) { b.unsubscribe(id, nullptr); });
  on(2, [&](Broker& b) { b.send({make("two", kTopic, true)}, nullptr); });
  // The definition and the persistent message are in the store.
  EXPECT_TRUE(std::any_of(store_.records.begin(), store_.records.end(), [](const store::Record& r) {
    return r.queue == "subscription:stomp:app:s1" && r.kind == store::RecordKind::message && *r.message->body == "two";
  }));
  auto again = std::make_shared<Collector>();
  req.consumer = again;
  on(2, [&](Broker& b) { (void)b.subscribe(req, nullptr); });
  EXPECT_EQ(again->bodies(), (std::vector<std::string>{"two"}));
  EXPECT_EQ(brokers_[1]->named_subscriptions("stomp:app:").size(), 1u);
  on(2, [&](Broker& b) { b.remove_subscription("stomp:app:s1", nullptr); });
  store_.complete_all();
  ex_.drain();
  EXPECT_TRUE(brokers_[0]->named_subscriptions("stomp:").empty());
}

TEST_F(BrokerTest, SharedSubscriptionWithHoldersIsKeptWhileAHolderRemains) {
  auto count_live = [&](const std::string& key) {
    std::map<MessageId, int> live;
    for (const auto& r : store_.records) {
      if (r.queue != key) continue;
      if (r.kind == store::RecordKind::message) ++live[r.message_id];
      if (r.kind == store::RecordKind::ack) --live[r.message_id];
    }
    int n = 0;
    for (auto& [id, v] : live) n += v > 0 ? 1 : 0;
    return n;
  };
  auto settle = [&] {
    for (int i = 0; i < 4; ++i) {
      store_.complete_all();
      ex_.drain();
    }
  };
  const std::string key = "subscription:share:g";
  // A member without a holder makes a plain shared (non-durable) group.
  auto plain = std::make_shared<Collector>();
  SubscribeRequest req{kTopic, AckMode::client_individual, 10, plain};
  req.subscription_name = "share:g";
  ConsumerId plain_id;
  on(0, [&](Broker& b) { plain_id = *b.subscribe(req, nullptr); });
  settle();
  EXPECT_FALSE(brokers_[1]->named_subscriptions("share:")[0].durable);
  // A member with a holder makes it durable; what it holds enters the store.
  on(1, [&](Broker& b) { b.send({make("before", kTopic, true)}, nullptr); });
  auto held = std::make_shared<Collector>();
  SubscribeRequest hreq{kTopic, AckMode::client_individual, 10, held};
  hreq.subscription_name = "share:g";
  hreq.durable = true;
  hreq.holder = "alice";
  ConsumerId held_id;
  bool joined = false;
  on(2, [&](Broker& b) { held_id = *b.subscribe(hreq, [&](Status st) { joined = st.has_value(); }); });
  settle();
  EXPECT_TRUE(joined);
  auto defs = brokers_[0]->named_subscriptions("share:");
  ASSERT_EQ(defs.size(), 1u);
  EXPECT_TRUE(defs[0].durable);
  EXPECT_EQ(defs[0].holders, (std::vector<std::string>{"alice"}));
  EXPECT_EQ(count_live("queue:$subscriptions"), 1);
  EXPECT_EQ(count_live(key), 1) << "the message it held before is stored now";
  // Everyone leaves: the messages wait, in the store.
  on(0, [&](Broker& b) { b.unsubscribe(plain_id, nullptr); });
  on(2, [&](Broker& b) { b.unsubscribe(held_id, nullptr); });
  settle();
  on(1, [&](Broker& b) { b.send({make("while away", kTopic, true)}, nullptr); });
  settle();
  EXPECT_EQ(count_live(key), 2);
  EXPECT_EQ(brokers_[2]->named_subscriptions("share:").size(), 1u);
  // A second holder, then the first goes: still kept, one definition.
  hreq.holder = "bob";
  auto bob = std::make_shared<Collector>();
  hreq.consumer = bob;
  ConsumerId bob_id;
  on(1, [&](Broker& b) { bob_id = *b.subscribe(hreq, nullptr); });
  settle();
  EXPECT_EQ(bob->got.size(), 2u);
  on(1, [&](Broker& b) { b.unsubscribe(bob_id, nullptr); });
  on(0, [&](Broker& b) { b.release_holder("share:g", "alice", nullptr); });
  settle();
  defs = brokers_[1]->named_subscriptions("share:");
  ASSERT_EQ(defs.size(), 1u);
  EXPECT_EQ(defs[0].holders, (std::vector<std::string>{"bob"}));
  EXPECT_EQ(count_live("queue:$subscriptions"), 1);
  // The last holder goes with nobody attached: the group ends with its messages.
  bool released = false;
  on(2, [&](Broker& b) { b.release_holder("share:g", "bob", [&](Status st) { released = st.has_value(); }); });
  settle();
  EXPECT_TRUE(released);
  EXPECT_TRUE(brokers_[0]->named_subscriptions("share:").empty());
  EXPECT_EQ(count_live("queue:$subscriptions"), 0);
  EXPECT_EQ(count_live(key), 0);
}

TEST_F(BrokerTest, SharedSubscriptionLosingItsLastHolderWithMembersAttachedStopsBeingStored) {
  auto plain = std::make_shared<Collector>();
  SubscribeRequest req{kTopic, AckMode::client_individual, 10, plain};
  req.subscription_name = "share:h";
  ConsumerId plain_id;
  on(0, [&](Broker& b) { plain_id = *b.subscribe(req, nullptr); });
  auto held = std::make_shared<Collector>();
  SubscribeRequest hreq = req;
  hreq.consumer = held;
  hreq.durable = true;
  hreq.holder = "alice";
  ConsumerId held_id;
  on(1, [&](Broker& b) { held_id = *b.subscribe(hreq, nullptr); });
  for (int i = 0; i < 4; ++i) {
    store_.complete_all();
    ex_.drain();
  }
  on(2, [&](Broker& b) { b.release_holder("share:h", "alice", nullptr); });
  for (int i = 0; i < 4; ++i) {
    store_.complete_all();
    ex_.drain();
  }
  auto defs = brokers_[0]->named_subscriptions("share:");
  ASSERT_EQ(defs.size(), 1u);
  EXPECT_FALSE(defs[0].durable);
  EXPECT_TRUE(defs[0].holders.empty());
  // It now goes with its last consumer, as any non-durable shared subscription.
  on(0, [&](Broker& b) { b.unsubscribe(plain_id, nullptr); });
  on(1, [&](Broker& b) { b.unsubscribe(held_id, nullptr); });
  for (int i = 0; i < 4; ++i) {
    store_.complete_all();
    ex_.drain();
  }
  EXPECT_TRUE(brokers_[2]->named_subscriptions("share:").empty());
}

TEST_F(BrokerTest, SharedSubscriptionConsumersCompete) {
  auto a = std::make_shared<Collector>();
  auto b = std::make_shared<Collector>();
  SubscribeRequest req{kTopic, AckMode::auto_ack, 0, a};
  req.subscription_name = "shared:g";
  on(0, [&](Broker& br) { (void)br.subscribe(req, nullptr); });
  req.consumer = b;
  on(1, [&](Broker& br) { (void)br.subscribe(req, nullptr); });
  std::vector<MessagePtr> batch;
  for (int i = 0; i < 10; ++i) batch.push_back(make(std::to_string(i), kTopic));
  on(2, [&](Broker& br) { br.send(batch, nullptr); });
  EXPECT_EQ(a->got.size() + b->got.size(), 10u);
  EXPECT_EQ(a->got.size(), 5u);
}

TEST_F(BrokerTest, RedeliveryWaitsItsDelayThenDeadLetters) {
  Options o;
  DestinationPolicy p;
  p.match = "queue:orders";
  p.redelivery_delay_ms = 100;
  p.redelivery_jitter = 0;
  p.max_deliveries = 2;
  o.policies.push_back(p);
  build(o);
  auto c = std::make_shared<Collector>();
  ConsumerId id;
  on(0, [&](Broker& b) { id = *b.subscribe({kQueue, AckMode::client_individual, 10, c}, nullptr); });
  on(1, [&](Broker& b) { b.send({make("poison", kQueue, true)}, nullptr); });
  ASSERT_EQ(c->got.size(), 1u);
  on(0, [&](Broker& b) { b.nack(id, {c->got[0].tag}, nullptr); });
  EXPECT_EQ(c->got.size(), 1u) << "not before its delay";
  advance(100);
  ASSERT_EQ(c->got.size(), 2u);
  EXPECT_TRUE(c->got[1].redelivered);
  EXPECT_EQ(c->got[1].delivery_count, 2u);
  auto dlq = std::make_shared<Collector>();
  on(2, [&](Broker& b) { (void)b.subscribe({{DestinationKind::queue, "DLQ.orders"}, AckMode::auto_ack, 0, dlq}, nullptr); });
  on(0, [&](Broker& b) { b.nack(id, {c->got[1].tag}, nullptr); });
  store_.complete_all();
  ex_.drain();
  ASSERT_EQ(dlq->got.size(), 1u);
  const auto& props = dlq->got[0].message->properties;
  EXPECT_NE(std::find(props.begin(), props.end(), std::pair<std::string, std::string>{"dlq-reason", "max-deliveries"}),
            props.end());
  EXPECT_NE(std::find(props.begin(), props.end(), std::pair<std::string, std::string>{"original-destination", "/queue/orders"}),
            props.end());
  EXPECT_EQ(c->got.size(), 2u) << "never in both";
}

TEST_F(BrokerTest, RejectDeadLettersAtOnceAndNeverRedelivers) {
  auto c = std::make_shared<Collector>();
  ConsumerId id;
  on(0, [&](Broker& b) { id = *b.subscribe({kQueue, AckMode::client_individual, 10, c}, nullptr); });
  auto dlq = std::make_shared<Collector>();
  on(2, [&](Broker& b) { (void)b.subscribe({{DestinationKind::queue, "DLQ.orders"}, AckMode::auto_ack, 0, dlq}, nullptr); });
  on(1, [&](Broker& b) { b.send({make("poison", kQueue, true), make("next", kQueue, true)}, nullptr); });
  ASSERT_EQ(c->got.size(), 2u);
  on(0, [&](Broker& b) { b.reject(id, {c->got[0].tag}, nullptr); });
  store_.complete_all();
  ex_.drain();
  ASSERT_EQ(dlq->bodies(), (std::vector<std::string>{"poison"}));
  const auto& props = dlq->got[0].message->properties;
  EXPECT_NE(std::find(props.begin(), props.end(), std::pair<std::string, std::string>{"dlq-reason", "rejected"}),
            props.end());
  EXPECT_EQ(c->bodies(), (std::vector<std::string>{"poison", "next"})) << "a rejected message is not offered again";
}

TEST_F(BrokerTest, ScheduledMessageWaitsForItsTime) {
  auto c = std::make_shared<Collector>();
  on(0, [&](Broker& b) { (void)b.subscribe({kQueue, AckMode::auto_ack, 0, c}, nullptr); });
  auto m = std::make_shared<Message>(*make("later", kQueue));
  m->deliver_at_ms = now_ + 500;
  on(1, [&](Broker& b) { b.send({m}, nullptr); });
  EXPECT_TRUE(c->got.empty());
  advance(500);
  EXPECT_EQ(c->bodies(), (std::vector<std::string>{"later"}));
}

// A receipt for a persistent topic message due later means it is in the store: in a reserved
// queue of its own until due, then, in one batch, out of it and into each durable subscription.
TEST_F(BrokerTest, ScheduledPersistentTopicMessageIsStoredUntilDue) {
  auto c = std::make_shared<Collector>();
  ConsumerId id;
  SubscribeRequest req{kTopic, AckMode::auto_ack, 0, c};
  req.subscription_name = "stomp:app:s1";
  req.durable = true;
  on(0, [&](Broker& b) { id = *b.subscribe(req, nullptr); });
  store_.complete_all();
  ex_.drain();
  on(0, [&](Broker& b) { b.unsubscribe(id, nullptr); });  // the subscriber leaves

  const std::string scheduled_key = "queue:$scheduled-topic:" + kTopic.name;
  auto count = [&](const std::string& queue, store::RecordKind kind) {
    return std::count_if(store_.records.begin(), store_.records.end(), [&](const store::Record& r) {
      return r.queue == queue && r.kind == kind;
    });
  };
  auto plain = std::make_shared<Message>(*make("plain", kTopic, true));
  plain->deliver_at_ms = now_ + 500;
  auto in_tx = std::make_shared<Message>(*make("in-tx", kTopic, true));
  in_tx->deliver_at_ms = now_ + 500;
  bool sent = false, committed = false;
  on(1, [&](Broker& b) { b.send({plain}, [&](Status st) { sent = st.has_value(); }); });
  on(2, [&](Broker& b) { b.commit(Transaction{{in_tx}, {}, {}}, [&](Status st) { committed = st.has_value(); }); });
  EXPECT_FALSE(sent);  // not before the store says so
  EXPECT_EQ(count(scheduled_key, store::RecordKind::message), 2);
  store_.complete_all();
  ex_.drain();
  EXPECT_TRUE(sent);
  EXPECT_TRUE(committed);
  EXPECT_EQ(count("subscription:stomp:app:s1", store::RecordKind::message), 0);

  advance(500);
  EXPECT_EQ(count(scheduled_key, store::RecordKind::ack), 2);
  EXPECT_EQ(count("subscription:stomp:app:s1", store::RecordKind::message), 2);
  auto again = std::make_shared<Collector>();
  req.consumer = again;
  on(2, [&](Broker& b) { (void)b.subscribe(req, nullptr); });
  auto bodies = again->bodies();
  std::sort(bodies.begin(), bodies.end());
  EXPECT_EQ(bodies, (std::vector<std::string>{"in-tx", "plain"}));
}

TEST_F(BrokerTest, RecoveredScheduledTopicMessageIsPublishedWhenDue) {
  auto c = std::make_shared<Collector>();
  on(0, [&](Broker& b) { (void)b.subscribe({kTopic, AckMode::auto_ack, 0, c}, nullptr); });
  auto m = std::make_shared<Message>(*make("recovered", kTopic, true));
  m->deliver_at_ms = now_ + 300;
  std::vector<Broker*> peers;
  for (auto& b : brokers_) peers.push_back(b.get());
  Broker::recover(peers, store::RecoveredMessage{"queue:$scheduled-topic:" + kTopic.name, m, 0});
  advance(299);
  EXPECT_TRUE(c->got.empty());
  advance(1);
  EXPECT_EQ(c->bodies(), (std::vector<std::string>{"recovered"}));
}

// The wake-up for a time far ahead is taken in bounded steps, never as one huge timer.
TEST_F(BrokerTest, FarScheduleArmsABoundedTimer) {
  auto c = std::make_shared<Collector>();
  on(0, [&](Broker& b) { (void)b.subscribe({kQueue, AckMode::auto_ack, 0, c}, nullptr); });
  auto m = std::make_shared<Message>(*make("far", kQueue));
  m->deliver_at_ms = INT64_MAX - 1;
  on(1, [&](Broker& b) { b.send({m}, nullptr); });
  for (const auto& delay : ex_.timer_delays()) EXPECT_LE(delay, 3'600'000u);
  advance(3'600'000);
  EXPECT_TRUE(c->got.empty());
  for (const auto& delay : ex_.timer_delays()) EXPECT_LE(delay, 3'600'000u);
}

TEST_F(BrokerTest, OverflowRejectReachesTheProducer) {
  Options o;
  DestinationPolicy p;
  p.max_messages = 2;
  o.policies.push_back(p);
  build(o);
  std::vector<Status> results;
  for (int i = 0; i < 3; ++i) {
    on(1, [&](Broker& b) { b.send({make(std::to_string(i), kQueue)}, [&](Status st) { results.push_back(st); }); });
  }
  ASSERT_EQ(results.size(), 3u);
  EXPECT_TRUE(results[0].has_value());
  EXPECT_TRUE(results[1].has_value());
  ASSERT_FALSE(results[2].has_value());
  EXPECT_EQ(results[2].error().code, Errc::limit_exceeded);
}

TEST_F(BrokerTest, OverflowDropOldest) {
  Options o;
  DestinationPolicy p;
  p.max_messages = 2;
  p.overflow = OverflowPolicy::drop_oldest;
  o.policies.push_back(p);
  build(o);
  for (int i = 0; i < 4; ++i) on(1, [&](Broker& b) { b.send({make(std::to_string(i), kQueue)}, nullptr); });
  auto c = std::make_shared<Collector>();
  on(0, [&](Broker& b) { (void)b.subscribe({kQueue, AckMode::auto_ack, 0, c}, nullptr); });
  EXPECT_EQ(c->bodies(), (std::vector<std::string>{"2", "3"}));
}

TEST_F(BrokerTest, MemoryGaugeCountsAFannedOutMessageOnce) {
  // One slow subscriber's share of a fan-out must not count as many copies of the message.
  MemoryGauge gauge(1 << 20);
  build(Options{}, &gauge);
  const Destination topic{DestinationKind::topic, "fan"};
  std::vector<std::shared_ptr<Collector>> subs;
  std::vector<std::pair<std::uint32_t, ConsumerId>> ids;
  for (std::uint32_t i = 0; i < 6; ++i) {
    subs.push_back(std::make_shared<Collector>());
    on(i % kShards, [&](Broker& b) {
      ids.emplace_back(i % kShards, *b.subscribe({topic, AckMode::client_individual, 0, subs.back()}, nullptr));
    });
  }
  // Each subscription's queue object counts its fixed overhead; the message comes on top.
  const std::int64_t queues = 6 * Broker::kQueueOverheadBytes;
  EXPECT_EQ(gauge.used(), queues);
  auto m = make(std::string(100000, 'x'), topic);
  on(0, [&](Broker& b) { b.send({m}, nullptr); });
  for (auto& s : subs) ASSERT_EQ(s->got.size(), 1u);
  EXPECT_EQ(gauge.used(), queues + static_cast<std::int64_t>(m->footprint()));
  for (std::size_t i = 0; i + 1 < ids.size(); ++i) {
    on(ids[i].first, [&](Broker& b) { b.ack(ids[i].second, {subs[i]->got[0].tag}, nullptr); });
  }
  EXPECT_EQ(gauge.used(), queues + static_cast<std::int64_t>(m->footprint()));
  on(ids.back().first, [&](Broker& b) { b.ack(ids.back().second, {subs.back()->got[0].tag}, nullptr); });
  EXPECT_EQ(gauge.used(), queues);
}

TEST_F(BrokerTest, TopicPolicyLimitsBoundAPlainSubscriptionWithoutRefusingTheProducer) {
  for (auto overflow : {OverflowPolicy::reject, OverflowPolicy::drop_oldest}) {
    Options o;
    DestinationPolicy p;
    p.match = "topic:ticks";
    p.max_messages = 2;
    p.overflow = overflow;
    o.policies.push_back(p);
    build(o);
    const Destination topic{DestinationKind::topic, "ticks"};
    auto c = std::make_shared<Collector>();
    ConsumerId id;
    on(0, [&](Broker& b) { id = *b.subscribe({topic, AckMode::client_individual, 1, c}, nullptr); });
    std::vector<Status> results;
    for (int i = 0; i < 4; ++i) {
      on(1, [&](Broker& b) { b.send({make(std::to_string(i), topic)}, [&](Status st) { results.push_back(st); }); });
    }
    for (const auto& st : results) EXPECT_TRUE(st.has_value());
    ASSERT_EQ(c->bodies(), (std::vector<std::string>{"0"}));
    on(0, [&](Broker& b) { b.ack(id, {c->got[0].tag}, nullptr); });
    // One delivered and one waiting fit: reject keeps the first that waited, drop-oldest the newest.
    EXPECT_EQ(c->bodies(), (std::vector<std::string>{"0", overflow == OverflowPolicy::reject ? "1" : "3"}));
  }
}

TEST_F(BrokerTest, PlainSubscriptionBacklogIsBoundedByDefault) {
  // No topic policy: a subscriber that stops acking keeps at most subscriber_backlog_bytes
  // waiting, the oldest dropped first, so it alone cannot hold the broker at its memory limit.
  MemoryGauge gauge(1 << 30);
  Options o;
  const auto one = make(std::string(1000, 'x'), kTopic)->footprint();
  o.subscriber_backlog_bytes = 3 * one;
  build(o, &gauge);
  auto c = std::make_shared<Collector>();
  ConsumerId id;
  on(0, [&](Broker& b) { id = *b.subscribe({kTopic, AckMode::client_individual, 1, c}, nullptr); });
  for (int i = 0; i < 10; ++i) {
    on(1, [&](Broker& b) { b.send({make(std::to_string(i) + std::string(999, 'x'), kTopic)}, nullptr); });
  }
  ASSERT_EQ(c->got.size(), 1u);  // one in flight (prefetch 1), three waiting
  EXPECT_EQ(gauge.used(), static_cast<std::int64_t>(Broker::kQueueOverheadBytes + 4 * one));
  EXPECT_EQ(brokers_[0]->stats().backlog_dropped, 6u);
  for (int n = 0; n < 4; ++n) on(0, [&](Broker& b) { b.ack(id, {c->got.back().tag}, nullptr); });
  std::vector<char> firsts;
  for (const auto& d : c->got) firsts.push_back(d.message->body->front());
  EXPECT_EQ(firsts, (std::vector<char>{'0', '7', '8', '9'})) << "the newest are kept";
}

TEST_F(BrokerTest, OverflowBlockTakesTheMessageAndMarksTheQueueUntilItDrains) {
  Options o;
  DestinationPolicy p;
  p.max_messages = 10;
  p.overflow = OverflowPolicy::block;
  o.policies.push_back(p);
  build(o);
  DestinationPressure pressure;
  int reliefs = 0;
  pressure.set_on_relief([&] { ++reliefs; });
  for (auto& b : brokers_) b->set_pressure(&pressure);
  std::vector<Status> results;
  for (int i = 0; i < 12; ++i) {
    on(1, [&](Broker& b) { b.send({make(std::to_string(i), kQueue)}, [&](Status st) { results.push_back(st); }); });
  }
  ASSERT_EQ(results.size(), 12u);
  for (const auto& st : results) EXPECT_TRUE(st.has_value());  // taken, never refused
  EXPECT_TRUE(pressure.any());
  EXPECT_TRUE(pressure.blocked(kQueue.key()));
  auto c = std::make_shared<Collector>();
  ConsumerId id;
  on(0, [&](Broker& b) { id = *b.subscribe({kQueue, AckMode::client_individual, 100, c}, nullptr); });
  ASSERT_EQ(c->got.size(), 12u);
  for (std::size_t i = 0; i < 3; ++i) on(0, [&](Broker& b) { b.ack(id, {c->got[i].tag}, nullptr); });
  EXPECT_TRUE(pressure.blocked(kQueue.key()));  // 9 left: not yet under 90% of 10
  on(0, [&](Broker& b) { b.ack(id, {c->got[3].tag}, nullptr); });
  EXPECT_FALSE(pressure.any());
  EXPECT_EQ(reliefs, 1);
}

TEST_F(BrokerTest, SweeperRemovesExpiredAndIdleQueues) {
  Options o;
  o.sweep_interval_ms = 100;
  DestinationPolicy p;
  p.idle_expiry_ms = 1000;
  o.policies.push_back(p);
  build(o);
  for (auto& b : brokers_) ex_.on(b->shard(), [&] { b->start(); });
  auto m = std::make_shared<Message>(*make("short", kQueue, true));
  m->expires_ms = now_ + 50;
  on(1, [&](Broker& b) { b.send({m, make("long", kQueue)}, nullptr); });
  store_.complete_all();
  advance(100);
  EXPECT_TRUE(std::any_of(store_.records.begin(), store_.records.end(),
                          [](const store::Record& r) { return r.kind == store::RecordKind::ack; }))
      << "the expired persistent message is removed from the store too";
  std::size_t ready = 0;
  for (auto& b : brokers_) ready += b->stats().messages_ready;
  EXPECT_EQ(ready, 1u);
  for (int i = 0; i < 11; ++i) advance(100);
  std::size_t queues = 0;
  for (auto& b : brokers_) queues += b->stats().queues;
  EXPECT_EQ(queues, 0u) << "idle for longer than idle_expiry_ms";
}

TEST_F(BrokerTest, RetainedMessagesReachLaterSubscribers) {
  auto m = std::make_shared<Message>(*make("21C", {DestinationKind::topic, "sensors.t1"}));
  m->retain = true;
  on(0, [&](Broker& b) { b.send({m}, nullptr); });
  auto c = std::make_shared<Collector>();
  SubscribeRequest req{{DestinationKind::topic, "sensors.*"}, AckMode::auto_ack, 0, c};
  req.want_retained = true;
  on(1, [&](Broker& b) { (void)b.subscribe(req, nullptr); });
  ASSERT_EQ(c->bodies(), (std::vector<std::string>{"21C"}));
  EXPECT_TRUE(c->got[0].message->from_retained);
  auto clear = std::make_shared<Message>(*make("", {DestinationKind::topic, "sensors.t1"}));
  clear->retain = true;
  on(2, [&](Broker& b) { b.send({clear}, nullptr); });
  auto later = std::make_shared<Collector>();
  req.consumer = later;
  on(1, [&](Broker& b) { (void)b.subscribe(req, nullptr); });
  EXPECT_TRUE(later->got.empty());
}

TEST_F(BrokerTest, NoLocalSkipsOwnMessages) {
  auto c = std::make_shared<Collector>();
  SubscribeRequest req{kTopic, AckMode::auto_ack, 0, c};
  req.no_local_origin = 42;
  on(0, [&](Broker& b) { (void)b.subscribe(req, nullptr); });
  auto mine = std::make_shared<Message>(*make("mine", kTopic));
  mine->origin = 42;
  on(0, [&](Broker& b) { b.send({mine, make("theirs", kTopic)}, nullptr); });
  EXPECT_EQ(c->bodies(), (std::vector<std::string>{"theirs"}));
}

// MQTT 5's "no matching subscribers": the sending shard says which topic messages no
// subscription took (subscribers on other shards, named ones, no-local and scheduled ones too).
TEST_F(BrokerTest, SendSaysWhichTopicMessagesMatchedNothing) {
  auto c = std::make_shared<Collector>();
  SubscribeRequest req{{DestinationKind::topic, "prices.*"}, AckMode::auto_ack, 0, c};
  req.no_local_origin = 42;
  on(1, [&](Broker& b) { (void)b.subscribe(req, nullptr); });
  auto named = std::make_shared<Collector>();
  SubscribeRequest durable{{DestinationKind::topic, "orders.>"}, AckMode::auto_ack, 0, named};
  durable.subscription_name = "mqtt:c1:orders/#";
  durable.durable = true;
  on(2, [&](Broker& b) { (void)b.subscribe(durable, nullptr); });
  store_.complete_all();
  ex_.drain();

  auto mine = std::make_shared<Message>(*make("mine", {DestinationKind::topic, "prices.eu"}));
  mine->origin = 42;
  auto scheduled = std::make_shared<Message>(*make("later", {DestinationKind::topic, "nobody"}));
  scheduled->deliver_at_ms = now_ + 500;
  auto retained = std::make_shared<Message>(*make("kept", {DestinationKind::topic, "nobody.retained"}));
  retained->retain = true;
  std::vector<bool> unmatched;
  bool done = false;
  on(0, [&](Broker& b) {
    b.send({make("1", {DestinationKind::topic, "prices.eu"}), make("2", {DestinationKind::topic, "nobody"}), mine,
            make("3", {DestinationKind::topic, "orders.x.y"}), scheduled, make("4", kQueue), retained},
           {}, [&](Status st) { done = st.has_value(); }, unmatched);
  });
  EXPECT_EQ(unmatched, (std::vector<bool>{false, true, true, false, false, false, true}));
  EXPECT_TRUE(done);
  EXPECT_EQ(c->bodies(), (std::vector<std::string>{"1"}));
}

// ---------------------------------------------------------------- empty queues are freed

TEST_F(BrokerTest, DrainedQueueIsFreedWhenItsLastConsumerLeaves) {
  auto c = std::make_shared<Collector>();
  ConsumerId id;
  on(1, [&](Broker& b) { id = *b.subscribe({kQueue, AckMode::client_individual, 10, c}, nullptr); });
  on(2, [&](Broker& b) { b.send({make("a", kQueue, true)}, nullptr); });
  store_.complete_all();
  ASSERT_EQ(c->got.size(), 1u);
  EXPECT_EQ(total_queues(), 1u);
  on(1, [&](Broker& b) { b.ack(id, {c->got[0].tag}, nullptr); });
  EXPECT_EQ(total_queues(), 1u) << "a consumer is attached";
  on(1, [&](Broker& b) { b.unsubscribe(id, nullptr); });
  EXPECT_EQ(total_queues(), 0u);
  EXPECT_EQ(memory_.used(), 0) << "the queue's overhead is given back with it";
}

TEST_F(BrokerTest, QueueOverheadCountsTowardsTheMemoryGauge) {
  std::vector<ConsumerId> ids;
  for (int i = 0; i < 10; ++i) {
    on(0, [&](Broker& b) {
      ids.push_back(*b.subscribe({{DestinationKind::queue, "q" + std::to_string(i)}, AckMode::auto_ack, 0,
                                  std::make_shared<Collector>()},
                                 nullptr));
    });
  }
  on(0, [&](Broker& b) {
    ids.push_back(*b.subscribe({kTopic, AckMode::auto_ack, 0, std::make_shared<Collector>()}, nullptr));
  });
  EXPECT_EQ(memory_.used(), 11 * Broker::kQueueOverheadBytes);
  for (auto id : ids) on(0, [&](Broker& b) { b.unsubscribe(id, nullptr); });
  EXPECT_EQ(total_queues(), 0u);
  EXPECT_EQ(memory_.used(), 0);
}

TEST_F(BrokerTest, QueueHoldingMessagesIsKept) {
  auto c = std::make_shared<Collector>();
  ConsumerId id;
  on(1, [&](Broker& b) { id = *b.subscribe({kQueue, AckMode::client_individual, 1, c}, nullptr); });
  on(2, [&](Broker& b) { b.send({make("a", kQueue), make("b", kQueue)}, nullptr); });
  ASSERT_EQ(c->got.size(), 1u);
  on(1, [&](Broker& b) { b.unsubscribe(id, nullptr); });  // "a" unacked, "b" ready: both stay
  EXPECT_EQ(total_queues(), 1u);
  for (auto& b : brokers_) ex_.on(b->shard(), [&] { b->start(); });
  advance(1000);  // a sweep
  EXPECT_EQ(total_queues(), 1u);
  auto later = std::make_shared<Collector>();
  on(0, [&](Broker& b) { (void)b.subscribe({kQueue, AckMode::auto_ack, 0, later}, nullptr); });
  EXPECT_EQ(later->bodies(), (std::vector<std::string>{"a", "b"}));
}

TEST_F(BrokerTest, QueueWaitingOutARedeliveryDelayIsKept) {
  Options o;
  o.sweep_interval_ms = 100;
  DestinationPolicy p;
  p.redelivery_delay_ms = 500;
  p.redelivery_jitter = 0;
  o.policies.push_back(p);
  build(o);
  for (auto& b : brokers_) ex_.on(b->shard(), [&] { b->start(); });
  auto c = std::make_shared<Collector>();
  ConsumerId id;
  on(1, [&](Broker& b) { id = *b.subscribe({kQueue, AckMode::client_individual, 10, c}, nullptr); });
  on(2, [&](Broker& b) { b.send({make("a", kQueue, true)}, nullptr); });
  store_.complete_all();
  ASSERT_EQ(c->got.size(), 1u);
  on(1, [&](Broker& b) { b.nack(id, {c->got[0].tag}, nullptr); });
  on(1, [&](Broker& b) { b.unsubscribe(id, nullptr); });
  for (int i = 0; i < 3; ++i) advance(100);  // sweeps while the message waits outside the queue
  EXPECT_EQ(total_queues(), 1u);
  advance(500);
  auto later = std::make_shared<Collector>();
  on(0, [&](Broker& b) { (void)b.subscribe({kQueue, AckMode::auto_ack, 0, later}, nullptr); });
  EXPECT_EQ(later->bodies(), (std::vector<std::string>{"a"}));
  EXPECT_FALSE(std::any_of(store_.records.begin(), store_.records.end(),
                           [](const store::Record& r) { return r.kind == store::RecordKind::ack; }))
      << "not dropped from the store either";
}

TEST_F(BrokerTest, QueueEmptiedByExpiryIsFreedByTheSweep) {
  Options o;
  o.sweep_interval_ms = 100;
  build(o);
  for (auto& b : brokers_) ex_.on(b->shard(), [&] { b->start(); });
  auto m = std::make_shared<Message>(*make("short", kQueue));
  m->expires_ms = now_ + 50;
  on(1, [&](Broker& b) { b.send({m}, nullptr); });
  EXPECT_EQ(total_queues(), 1u);
  advance(100);
  EXPECT_EQ(total_queues(), 0u);
  EXPECT_EQ(memory_.used(), 0);
}

TEST_F(BrokerTest, RecoveredScheduledMessageOutlivesItsCollectedQueue) {
  Options o;
  o.sweep_interval_ms = 100;
  build(o);
  auto m = std::make_shared<Message>(*make("later", kQueue, true));
  m->deliver_at_ms = now_ + 500;
  std::vector<Broker*> peers;
  for (auto& b : brokers_) peers.push_back(b.get());
  Broker::recover(peers, store::RecoveredMessage{kQueue.key(), m, 0});
  for (auto& b : brokers_) ex_.on(b->shard(), [&] { b->start(); });
  advance(100);
  EXPECT_EQ(total_queues(), 0u) << "empty while the message waits in the schedule";
  advance(400);
  auto c = std::make_shared<Collector>();
  on(0, [&](Broker& b) { (void)b.subscribe({kQueue, AckMode::auto_ack, 0, c}, nullptr); });
  EXPECT_EQ(c->bodies(), (std::vector<std::string>{"later"}));
}

TEST_F(BrokerTest, ConfiguredTemporaryAndNamedQueuesAreNotCollected) {
  Options o;
  o.queues = {"orders"};
  build(o);
  const Destination temp{DestinationKind::temp_queue, "s1-reply"};
  on(0, [&](Broker& b) { b.open_temp_queue(temp); });
  std::vector<ConsumerId> ids;
  on(0, [&](Broker& b) {
    ids.push_back(*b.subscribe({kQueue, AckMode::auto_ack, 0, std::make_shared<Collector>()}, nullptr));
    ids.push_back(*b.subscribe({temp, AckMode::auto_ack, 0, std::make_shared<Collector>()}, nullptr));
    SubscribeRequest named{kTopic, AckMode::auto_ack, 0, std::make_shared<Collector>()};
    named.subscription_name = "keep";
    named.durable = true;
    ids.push_back(*b.subscribe(named, nullptr));
  });
  store_.complete_all();
  ex_.drain();
  EXPECT_EQ(total_queues(), 3u);
  for (auto id : ids) on(0, [&](Broker& b) { b.unsubscribe(id, nullptr); });
  EXPECT_EQ(total_queues(), 3u);
}

// A wildcard queue subscriber: records which child each delivery came as, and checks that the
// child was announced (Consumer::attached) before its first delivery.
struct WatchCollector : Consumer {
  std::map<ConsumerId, ConsumerId> children;  // child -> parent
  std::vector<std::pair<ConsumerId, Delivery>> got;
  std::size_t detached_count = 0;
  bool unannounced = false;
  void deliver(ConsumerId id, std::vector<Delivery> batch) override {
    if (!children.contains(id)) unannounced = true;
    for (auto& d : batch) got.emplace_back(id, std::move(d));
  }
  void attached(ConsumerId parent, ConsumerId child) override { children[child] = parent; }
  void detached(ConsumerId, ConsumerId child) override {
    children.erase(child);
    ++detached_count;
  }
  std::vector<std::string> bodies() const {
    std::vector<std::string> out;
    for (const auto& [id, d] : got) out.push_back(*d.message->body);
    std::sort(out.begin(), out.end());
    return out;
  }
};

Destination queue_named(std::string name) { return Destination{DestinationKind::queue, std::move(name)}; }

TEST_F(BrokerTest, WildcardQueueSubscriptionConsumesExistingAndFutureQueues) {
  // Queues on every shard before the subscription exists.
  on(0, [&](Broker& b) {
    b.send({make("eu", queue_named("orders.eu")), make("deep", queue_named("orders.eu.x")),
            make("other", queue_named("invoices.eu"))},
           nullptr);
  });
  auto one = std::make_shared<WatchCollector>();
  auto rest = std::make_shared<WatchCollector>();
  bool subscribed = false;
  ConsumerId parent;
  on(1, [&](Broker& b) {
    auto id = b.subscribe({queue_named("orders.*"), AckMode::client_individual, 10, one},
                          [&](Status st) { subscribed = st.has_value(); });
    ASSERT_TRUE(id.has_value());
    parent = *id;
    EXPECT_TRUE(one->got.empty()) << "delivered before the session knew its consumer id";
  });
  // Three levels or more: "*" is one level, ">" one or more.
  on(2, [&](Broker& b) { ASSERT_TRUE(b.subscribe({queue_named("orders.*.>"), AckMode::auto_ack, 0, rest}, nullptr)); });
  EXPECT_TRUE(subscribed);
  EXPECT_EQ(one->bodies(), (std::vector<std::string>{"eu"}));
  // Queues created later are watched too; reserved and temporary ones never.
  for (std::uint32_t shard = 0; shard < kShards; ++shard) {
    on(shard, [&](Broker& b) {
      b.send({make("us" + std::to_string(shard), queue_named("orders.us" + std::to_string(shard)))}, nullptr);
    });
  }
  on(0, [&](Broker& b) { b.open_temp_queue(Destination{DestinationKind::temp_queue, "orders.tmp"}); });
  EXPECT_EQ(one->bodies(), (std::vector<std::string>{"eu", "us0", "us1", "us2"}));
  EXPECT_EQ(rest->bodies(), (std::vector<std::string>{"deep"}));
  EXPECT_FALSE(one->unannounced);
  EXPECT_FALSE(rest->unannounced);
  EXPECT_EQ(one->children.size(), 4u);  // one child per queue
  for (const auto& [child, p] : one->children) EXPECT_EQ(p, parent);
  // Acks name the child and reach its queue's owner.
  std::size_t acked = 0;
  for (const auto& [child, d] : one->got) {
    on(1, [&](Broker& b) { b.ack(child, {d.tag}, [&](Status st) { acked += st.has_value() ? 1 : 0; }); });
  }
  EXPECT_EQ(acked, 4u);
  std::size_t unacked = 0;
  for (auto& b : brokers_) unacked += b->stats().messages_unacked;
  EXPECT_EQ(unacked, 1u);  // only "deep", whose auto-ack is the session's to send
}

TEST_F(BrokerTest, WildcardQueueSubscribersCompeteAndUnsubscribeRequeues) {
  auto a = std::make_shared<WatchCollector>();
  auto plain = std::make_shared<Collector>();
  ConsumerId wild;
  on(0, [&](Broker& b) { wild = *b.subscribe({queue_named("jobs.>"), AckMode::client, 1, a}, nullptr); });
  on(1, [&](Broker& b) { b.send({make("1", queue_named("jobs.a"))}, nullptr); });
  ASSERT_EQ(a->got.size(), 1u);
  on(2, [&](Broker& b) { (void)b.subscribe({queue_named("jobs.a"), AckMode::client, 1, plain}, nullptr); });
  on(1, [&](Broker& b) { b.send({make("2", queue_named("jobs.a"))}, nullptr); });
  EXPECT_EQ(plain->bodies(), (std::vector<std::string>{"2"})) << "each message goes to one consumer";
  EXPECT_EQ(a->got.size(), 1u);
  bool removed = false;
  on(0, [&](Broker& b) { b.unsubscribe(wild, [&](Status st) { removed = st.has_value(); }); });
  EXPECT_TRUE(removed);
  // Its unacknowledged message went back to the queue; nothing new reaches it.
  on(1, [&](Broker& b) { b.send({make("3", queue_named("jobs.b"))}, nullptr); });
  EXPECT_EQ(a->got.size(), 1u);
  std::size_t ready = 0, queues_unacked = 0;
  for (auto& b : brokers_) {
    ready += b->stats().messages_ready;
    queues_unacked += b->stats().messages_unacked;
  }
  EXPECT_EQ(ready, 2u);  // "1" (requeued, waiting for the plain consumer's credit) and "3"
  EXPECT_EQ(queues_unacked, 1u);  // "2" with the plain consumer
}

TEST_F(BrokerTest, WildcardQueueSelectorAppliesToEveryQueue) {
  auto c = std::make_shared<WatchCollector>();
  SubscribeRequest req{queue_named("sel.*"), AckMode::auto_ack, 0, c};
  // Any non-null selector: the test's matcher takes messages whose body is "yes".
  auto token = std::make_shared<int>(0);
  req.selector = std::shared_ptr<const selector::Selector>(token, reinterpret_cast<const selector::Selector*>(token.get()));
  for (auto& b : brokers_) {
    b->set_selectors(nullptr, [](const selector::Selector&, const Message& m) { return *m.body == "yes"; });
  }
  on(0, [&](Broker& b) { (void)b.subscribe(req, nullptr); });
  on(1, [&](Broker& b) { b.send({make("yes", queue_named("sel.a")), make("no", queue_named("sel.b"))}, nullptr); });
  EXPECT_EQ(c->bodies(), (std::vector<std::string>{"yes"}));
}

TEST_F(BrokerTest, IdleQueueWithOnlyWildcardChildrenIsFreedAndReattachedWhenRecreated) {
  Options o;
  o.sweep_interval_ms = 100;
  DestinationPolicy p;
  p.idle_expiry_ms = 1000;
  o.policies.push_back(p);
  build(o);
  for (auto& b : brokers_) ex_.on(b->shard(), [&] { b->start(); });
  auto c = std::make_shared<WatchCollector>();
  on(0, [&](Broker& b) { (void)b.subscribe({queue_named("gc.*"), AckMode::auto_ack, 0, c}, nullptr); });
  for (int i = 0; i < 20; ++i) {
    on(1, [&](Broker& b) { b.send({make("m" + std::to_string(i), queue_named("gc.q" + std::to_string(i)))}, nullptr); });
  }
  ASSERT_EQ(c->got.size(), 20u);
  // The session's auto-acks.
  for (const auto& [child, d] : c->got) on(0, [&](Broker& b) { b.ack(child, {d.tag}, nullptr); });
  for (int i = 0; i < 12; ++i) advance(100);
  std::size_t queues = 0;
  for (auto& b : brokers_) queues += b->stats().queues;
  EXPECT_EQ(queues, 0u) << "wildcard children do not keep empty queues alive";
  EXPECT_EQ(c->detached_count, 20u);
  EXPECT_TRUE(c->children.empty());
  on(2, [&](Broker& b) { b.send({make("again", queue_named("gc.q3"))}, nullptr); });
  ASSERT_EQ(c->got.size(), 21u);
  EXPECT_EQ(*c->got.back().second.message->body, "again");
  EXPECT_FALSE(c->unannounced);
}

TEST_F(BrokerTest, WildcardUnsubscribedBeforeItsAttachNoticesLeavesNoChildren) {
  for (std::uint32_t shard = 0; shard < kShards; ++shard) {
    on(shard, [&](Broker& b) { b.send({make("m" + std::to_string(shard), queue_named("race.q" + std::to_string(shard)))}, nullptr); });
  }
  auto c = std::make_shared<WatchCollector>();
  bool removed = false;
  // SUBSCRIBE and UNSUBSCRIBE before any other shard has run: the notices find no parent.
  ex_.on(ShardId(1), [&] {
    auto id = *brokers_[1]->subscribe({queue_named("race.*"), AckMode::client, 5, c}, nullptr);
    brokers_[1]->unsubscribe(id, [&](Status st) { removed = st.has_value(); });
  });
  ex_.drain();
  EXPECT_TRUE(removed);
  EXPECT_TRUE(c->children.empty());
  // Deliveries that were on their way name children the session never knew (it drops them); the
  // queues took them back: they are all still there for an ordinary consumer.
  auto plain = std::make_shared<Collector>();
  for (std::uint32_t i = 0; i < kShards; ++i) {
    on(0, [&](Broker& b) { (void)b.subscribe({queue_named("race.q" + std::to_string(i)), AckMode::auto_ack, 0, plain}, nullptr); });
  }
  EXPECT_EQ(plain->got.size(), kShards);
  std::size_t unacked = 0;
  for (auto& b : brokers_) unacked += b->stats().messages_unacked;
  EXPECT_EQ(unacked, kShards);  // with the plain consumer, none with a vanished child
}

TEST_F(BrokerTest, WildcardsOnQueuesOnlyWhenSubscribing) {
  EXPECT_FALSE(brokers_[0]->check_destination(queue_named("orders.*"), false));
  EXPECT_TRUE(brokers_[0]->check_destination(queue_named("orders.*"), true));
  EXPECT_FALSE(brokers_[0]->check_destination(queue_named("orders.>.x"), true));
  EXPECT_FALSE(brokers_[0]->check_destination(Destination{DestinationKind::temp_queue, "t.*"}, true));
}

}  // namespace
}  // namespace carrier::core
