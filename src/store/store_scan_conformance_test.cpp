// Store::scan, one test body run against every backend that can scan (memory, log, sqlite, and
// postgres when CARRIER_TEST_POSTGRES_URL names a server), like the conformance suite
// (store_conformance_test.cpp and store_read_conformance_test.cpp), whose fixture
// (store_conformance_fixture.hpp) this one follows. What only the journal has (its catalog cache,
// the fallback from a damaged index) is in log/log_store_scan_test.cpp.

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include "store/store.hpp"
#include "store/store_conformance_fixture.hpp"
#include "store/test_support.hpp"

namespace carrier::store {
namespace {

using testing::make_message;
using testing::Outcomes;
using testing::TempDir;

using testing::conformance_options;
using testing::fresh_schema;
using testing::postgres_url;

// make_message(n) with the given priority instead of n % 10.
model::MessagePtr message_at(std::uint64_t n, std::uint8_t priority, std::string body = "body") {
  auto m = std::make_shared<model::Message>(*make_message(n, std::move(body)));
  m->priority = priority;
  return m;
}

class ScanConformance : public ::testing::TestWithParam<const char*> {
 protected:
  bool durable() const { return std::string(GetParam()) != "memory"; }

  Options options() const { return conformance_options(GetParam(), dir_.path(), segment_bytes_, schema_); }

  std::vector<RecoveredMessage> start_store() {
    std::vector<RecoveredMessage> recovered;
    auto made = make_store(options());
    EXPECT_TRUE(made) << made.error().to_string();
    if (!made) return recovered;
    store_ = std::move(*made);
    EXPECT_TRUE(store_->can_scan());
    auto opened = store_->open();
    EXPECT_TRUE(opened) << opened.error().to_string();
    auto rec = store_->recover([&](RecoveredMessage m) { recovered.push_back(std::move(m)); });
    EXPECT_TRUE(rec) << rec.error().to_string();
    store_->start();
    return recovered;
  }

  std::vector<RecoveredMessage> restart() {
    store_->close();
    store_.reset();
    return start_store();
  }

  Status append_sync(Batch batch) {
    Outcomes out;
    store_->append(std::move(batch), out.callback());
    EXPECT_TRUE(out.wait_for(1));
    return out.statuses().at(0);
  }

  // append_located() of one message record; its location.
  Location store_one(const std::string& queue, model::MessagePtr m) {
    std::mutex mu;
    std::condition_variable cv;
    std::optional<std::vector<Location>> got;
    store_->append_located({Record::added(queue, std::move(m))}, [&](Status st, std::vector<Location> where) {
      EXPECT_TRUE(st) << st.error().to_string();
      std::lock_guard lock(mu);
      got = std::move(where);
      cv.notify_all();
    });
    std::unique_lock lock(mu);
    EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return got.has_value(); }));
    return got && got->size() == 1 ? got->at(0) : Location{};
  }

  Result<ScanResult> scan_sync(const std::string& queue, std::uint8_t priority, Location from, std::size_t max) {
    std::mutex mu;
    std::condition_variable cv;
    std::optional<Result<ScanResult>> got;
    int calls = 0;
    store_->scan(queue, priority, from, max, [&](Result<ScanResult> r) {
      std::lock_guard lock(mu);
      ++calls;
      got = std::move(r);
      cv.notify_all();
    });
    std::unique_lock lock(mu);
    EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return got.has_value(); }));
    EXPECT_EQ(calls, 1);
    if (!got) return unexpected(Errc::timed_out, "no scan callback");
    return std::move(*got);
  }

  // Scans one lane from `from` to exhaustion by calls of `max`, checking what every call must
  // hold; the messages in the order found.
  std::vector<ScannedMessage> scan_all(const std::string& queue, std::uint8_t priority, std::size_t max,
                                       Location from = {}) {
    std::vector<ScannedMessage> all;
    for (int calls = 0; calls < 100000; ++calls) {
      auto r = scan_sync(queue, priority, from, max);
      EXPECT_TRUE(r) << r.error().to_string();
      if (!r) break;
      EXPECT_LE(r->messages.size(), max);
      for (const auto& s : r->messages) {
        EXPECT_GE(s.location, from) << "a scan returned a message before its from";
        EXPECT_LT(s.location, r->next) << "next must be past every message returned";
        if (!all.empty()) {
          EXPECT_LT(all.back().location, s.location) << "not in store order";
        }
        all.push_back(s);
      }
      EXPECT_GE(r->next, from);
      from = r->next;
      if (r->exhausted) return all;
    }
    ADD_FAILURE() << "the scan never said exhausted";
    return all;
  }

  TempDir dir_;
  const std::string schema_ = fresh_schema();
  std::uint64_t segment_bytes_ = 0;
  std::unique_ptr<Store> store_;
};

std::vector<std::string> correlation_ids(const std::vector<ScannedMessage>& ms) {
  std::vector<std::string> out;
  for (const auto& m : ms) out.push_back(m.message->correlation_id);
  return out;
}

std::string corr(int n) { return "corr-" + std::to_string(n); }

TEST_P(ScanConformance, ReturnsOneLaneInStoreOrderWithTheLocationsAppendGave) {
  start_store();
  std::map<int, Location> where;
  for (int i = 0; i < 60; ++i) where[i] = store_one("queue:q", message_at(i, static_cast<std::uint8_t>(i % 3)));
  for (std::uint8_t p = 0; p < 3; ++p) {
    auto got = scan_all("queue:q", p, 1000);
    std::vector<std::string> expected;
    for (int i = p; i < 60; i += 3) expected.push_back(corr(i));
    EXPECT_EQ(correlation_ids(got), expected) << "priority " << int(p);
    for (const auto& s : got) {
      const int n = std::stoi(s.message->correlation_id.substr(5));
      EXPECT_EQ(s.location, where[n]);
      EXPECT_EQ(s.message->priority, p);
      EXPECT_EQ(s.delivery_count, 0u);
      testing::expect_same_message(*s.message, *message_at(n, p));
    }
  }
  EXPECT_TRUE(scan_all("queue:q", 7, 10).empty()) << "a priority nobody used";
}

TEST_P(ScanConformance, MaxIsRespectedAndNextGivesEveryMessageOnce) {
  start_store();
  for (int i = 0; i < 500; ++i) store_one("queue:q", message_at(i, 4));
  for (std::size_t max : {1u, 7u, 128u, 499u, 500u, 501u}) {
    auto got = scan_all("queue:q", 4, max);
    ASSERT_EQ(got.size(), 500u) << "max " << max;
    for (int i = 0; i < 500; ++i) ASSERT_EQ(got[i].message->correlation_id, corr(i)) << "max " << max;
  }
  auto first = scan_sync("queue:q", 4, Location{}, 128);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->messages.size(), 128u) << "a lane holding more than max fills the scan";
  EXPECT_FALSE(first->exhausted);
  // A message appended after a scan lands at or after its next.
  auto all = scan_sync("queue:q", 4, Location{}, 1000);
  ASSERT_TRUE(all);
  ASSERT_TRUE(all->exhausted);
  const Location later = store_one("queue:q", message_at(1000, 4));
  EXPECT_GE(later, all->next);
  auto rest = scan_all("queue:q", 4, 10, all->next);
  EXPECT_EQ(correlation_ids(rest), std::vector<std::string>{corr(1000)});
}

TEST_P(ScanConformance, MessagesOfOtherQueuesAreSkipped) {
  start_store();
  for (int i = 0; i < 90; ++i) store_one(i % 3 == 0 ? "queue:a" : (i % 3 == 1 ? "queue:b" : "topic:t/sub"), message_at(i, 2));
  std::vector<std::string> expected;
  for (int i = 0; i < 90; i += 3) expected.push_back(corr(i));
  EXPECT_EQ(correlation_ids(scan_all("queue:a", 2, 4)), expected);
  EXPECT_TRUE(scan_all("queue:absent", 2, 4).empty());
}

TEST_P(ScanConformance, AnEmptyOrUnknownQueueIsExhausted) {
  start_store();
  auto r = scan_sync("queue:nothing", 4, Location{}, 128);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(r->messages.empty());
  EXPECT_TRUE(r->exhausted);
  store_one("queue:other", message_at(1, 4));
  r = scan_sync("queue:nothing", 4, Location{}, 128);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(r->messages.empty());
  EXPECT_TRUE(r->exhausted);
}

TEST_P(ScanConformance, AckedMessagesAreNotReturned) {
  start_store();
  std::vector<model::MessagePtr> ms;
  for (int i = 0; i < 40; ++i) {
    ms.push_back(message_at(i, 5));
    store_one("queue:q", ms.back());
  }
  // Durable acks.
  ASSERT_TRUE(append_sync({Record::acked("queue:q", ms[0]->id), Record::acked("queue:q", ms[10]->id)}));
  // Acks appended and not waited for: the scan is called after append() returned, so it must
  // not hand these out, durable yet or not.
  Outcomes pending;
  for (int i = 20; i < 30; ++i) store_->append({Record::acked("queue:q", ms[i]->id)}, pending.callback());
  auto got = scan_all("queue:q", 5, 1000);
  std::vector<std::string> expected;
  for (int i = 0; i < 40; ++i) {
    if (i != 0 && i != 10 && (i < 20 || i >= 30)) expected.push_back(corr(i));
  }
  EXPECT_EQ(correlation_ids(got), expected);
  ASSERT_TRUE(pending.wait_for(10));
  // An ack of the same id in another queue hides nothing here.
  ASSERT_TRUE(append_sync({Record::acked("queue:other", ms[5]->id)}));
  EXPECT_EQ(correlation_ids(scan_all("queue:q", 5, 1000)), expected);
}

TEST_P(ScanConformance, AnAckRacingTheScanNeverLetsItsMessageOut) {
  start_store();
  for (int round = 0; round < 200; ++round) {
    auto m = message_at(round, 1);
    const Location at = store_one("queue:race", m);
    Outcomes acked;
    store_->append({Record::acked("queue:race", m->id)}, acked.callback());
    auto r = scan_sync("queue:race", 1, at, 10);
    ASSERT_TRUE(r) << r.error().to_string();
    for (const auto& s : r->messages) ASSERT_NE(s.message->id, m->id) << "round " << round;
    ASSERT_TRUE(acked.wait_for(1));
  }
}

TEST_P(ScanConformance, DeliveryCountsAreTheLatestDelivered) {
  start_store();
  auto a = message_at(1, 3), b = message_at(2, 3), c = message_at(3, 3);
  store_one("queue:q", a);
  store_one("queue:q", b);
  store_one("queue:q", c);
  ASSERT_TRUE(append_sync({Record::delivered("queue:q", a->id, 1)}));
  ASSERT_TRUE(append_sync({Record::delivered("queue:q", a->id, 3)}));
  ASSERT_TRUE(append_sync({Record::delivered("queue:q", c->id, 2)}));
  ASSERT_TRUE(append_sync({Record::delivered("queue:other", b->id, 9)}));  // another queue's count
  auto counts = [&] {
    std::map<std::string, std::uint32_t> out;
    for (const auto& s : scan_all("queue:q", 3, 2)) out[s.message->correlation_id] = s.delivery_count;
    return out;
  };
  const std::map<std::string, std::uint32_t> expected{{corr(1), 3}, {corr(2), 0}, {corr(3), 2}};
  EXPECT_EQ(counts(), expected);
  if (!durable()) return;
  restart();
  EXPECT_EQ(counts(), expected) << "after recovery";
}

TEST_P(ScanConformance, AcrossSegmentRollsAndReclaimedSegments) {
  segment_bytes_ = 4096;  // log: a few messages per segment
  start_store();
  std::vector<model::MessagePtr> ms;
  std::vector<Location> where;
  for (int i = 0; i < 200; ++i) {
    ms.push_back(message_at(i, i % 2 == 0 ? 4 : 6, std::string(500, 'x')));
    where.push_back(store_one(i % 5 == 0 ? "queue:other" : "queue:q", ms.back()));
  }
  auto lane = [&](int from, int to) {
    std::vector<std::string> out;
    for (int i = from; i < to; ++i) {
      if (i % 5 != 0 && i % 2 == 0) out.push_back(corr(i));
    }
    return out;
  };
  EXPECT_EQ(correlation_ids(scan_all("queue:q", 4, 9)), lane(0, 200));
  // Ack the first 150 of both queues: the journal reclaims the segments they filled.
  Batch acks;
  for (int i = 0; i < 150; ++i) acks.push_back(Record::acked(i % 5 == 0 ? "queue:other" : "queue:q", ms[i]->id));
  ASSERT_TRUE(append_sync(std::move(acks)));
  EXPECT_EQ(correlation_ids(scan_all("queue:q", 4, 9)), lane(150, 200));
  // A location in a reclaimed segment is a good place to start from.
  EXPECT_EQ(correlation_ids(scan_all("queue:q", 4, 9, where[20])), lane(150, 200));
  if (!durable()) return;
  restart();
  EXPECT_EQ(correlation_ids(scan_all("queue:q", 4, 9)), lane(150, 200));
}

TEST_P(ScanConformance, AfterRecoveryAScanFromTheStartReturnsExactlyTheLiveSet) {
  if (!durable()) GTEST_SKIP() << "the memory store recovers nothing";
  segment_bytes_ = 8192;
  start_store();
  std::vector<model::MessagePtr> ms;
  Batch batch;
  for (int i = 0; i < 300; ++i) {
    ms.push_back(message_at(i, static_cast<std::uint8_t>(i % 4), std::string(100 + i, 'y')));
    batch.push_back(Record::added(i % 2 ? "queue:odd" : "queue:even", ms.back()));
    if (batch.size() == 7) {
      ASSERT_TRUE(append_sync(std::exchange(batch, {})));
    }
  }
  ASSERT_TRUE(append_sync(std::exchange(batch, {})));
  for (int i = 0; i < 300; i += 3) batch.push_back(Record::acked(i % 2 ? "queue:odd" : "queue:even", ms[i]->id));
  for (int i = 1; i < 300; i += 7) batch.push_back(Record::delivered(i % 2 ? "queue:odd" : "queue:even", ms[i]->id, 2));
  ASSERT_TRUE(append_sync(std::move(batch)));
  const auto recovered = restart();
  // What recovery says is live, per queue and priority, in order.
  std::map<std::pair<std::string, int>, std::vector<RecoveredMessage>> expected;
  for (const auto& r : recovered) expected[{r.queue, r.message->priority}].push_back(r);
  ASSERT_EQ(recovered.size(), 200u);
  std::size_t total = 0;
  for (const std::string queue : {"queue:odd", "queue:even"}) {
    for (int p = 0; p < 4; ++p) {
      auto got = scan_all(queue, static_cast<std::uint8_t>(p), 16);
      const auto& want = expected[{queue, p}];
      ASSERT_EQ(got.size(), want.size()) << queue << " priority " << p;
      for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].message->id, want[i].message->id);
        EXPECT_EQ(got[i].location, want[i].location);
        EXPECT_EQ(got[i].delivery_count, want[i].delivery_count);
      }
      total += got.size();
    }
  }
  EXPECT_EQ(total, 200u);
}

TEST_P(ScanConformance, ALocationFromAppendLocatedStartsAtThatMessage) {
  start_store();
  std::vector<Location> where;
  Batch batch;
  for (int i = 0; i < 30; ++i) where.push_back(store_one("queue:q", message_at(i, 8)));
  for (int start : {0, 1, 13, 29}) {
    auto r = scan_sync("queue:q", 8, where[start], 3);
    ASSERT_TRUE(r) << r.error().to_string();
    ASSERT_FALSE(r->messages.empty());
    EXPECT_EQ(r->messages[0].message->correlation_id, corr(start));
    EXPECT_EQ(r->messages[0].location, where[start]);
  }
}

TEST_P(ScanConformance, ScansQueuedBeforeStartAreAnsweredAfterIt) {
  auto made = make_store(options());
  ASSERT_TRUE(made);
  store_ = std::move(*made);
  ASSERT_TRUE(store_->open());
  ASSERT_TRUE(store_->recover([](RecoveredMessage) {}));
  std::mutex mu;
  std::condition_variable cv;
  std::optional<Result<ScanResult>> got;
  store_->scan("queue:q", 4, Location{}, 10, [&](Result<ScanResult> r) {
    std::lock_guard lock(mu);
    got = std::move(r);
    cv.notify_all();
  });
  store_->start();
  std::unique_lock lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return got.has_value(); }));
  ASSERT_TRUE(*got) << got->error().to_string();
  EXPECT_TRUE((*got)->exhausted);
}

TEST_P(ScanConformance, AfterCloseAScanAnswersShuttingDown) {
  start_store();
  store_one("queue:q", message_at(1, 4));
  store_->close();
  std::optional<Result<ScanResult>> got;
  store_->scan("queue:q", 4, Location{}, 10, [&](Result<ScanResult> r) { got = std::move(r); });
  ASSERT_TRUE(got.has_value()) << "a closed store answers at once";
  ASSERT_FALSE(*got);
  EXPECT_EQ(got->error().code, Errc::shutting_down);
}

std::vector<const char*> scan_backends() {
  std::vector<const char*> kinds = {"memory", "log", "sqlite"};
  if (postgres_url() != nullptr) kinds.push_back("postgres");
  return kinds;
}

INSTANTIATE_TEST_SUITE_P(Backends, ScanConformance, ::testing::ValuesIn(scan_backends()),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

}  // namespace
}  // namespace carrier::store
