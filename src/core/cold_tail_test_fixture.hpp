#pragma once

// The owner's half of cold tails under test (owned_cold_tails_test.cpp, recovered_tails_test.cpp):
// a store double that implements Store::scan's contract, and the fixtures over it.
#include <gtest/gtest.h>

#include <map>

#include "core/broker_test_fixture.hpp"
#include "core/queue.hpp"
#include "core/queue_maintenance.hpp"
#include "selector/selector.hpp"

namespace carrier::core::cold_tail_testing {

using model::DestinationKind;
using model::Message;
using model::MessageId;
using model::MessagePtr;
using model::ShardId;

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
    make_brokers(options);
  }

  // The shards (again, replacing any), with `options`.
  void make_brokers(const Options& options) {
    brokers_.clear();
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
  // Acks everything `c` has been given, on the queue's owner.
  void ack_all(const broker_testing::Collector& c) {
    std::vector<std::uint64_t> tags;
    for (const auto& d : c.got) tags.push_back(d.tag);
    on(model::owner_shard(kQueue.key(), kShards).value(), [&](Broker& b) {
      b.owned_queues().settle(kQueue.key(), last_id_, tags, true, true, {}, nullptr);
    });
    settle();
  }
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

}  // namespace carrier::core::cold_tail_testing
