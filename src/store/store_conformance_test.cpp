// The store conformance suite, part one: the write and recovery contract (append and its
// callbacks, acks, batches, restarts, storage that fails and comes back). The fixture and the
// backends are in store_conformance_fixture.hpp; the read path is in
// store_read_conformance_test.cpp. The suite is instantiated at the end of this file, once for
// the binary: that covers the read path's tests too.

#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <signal.h>
#include <sys/resource.h>

#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "store/postgres/pg_connection.hpp"
#include "store/store.hpp"
#include "store/store_conformance_fixture.hpp"
#include "store/test_support.hpp"

namespace carrier::store {
namespace {

using testing::backends;
using testing::make_message;
using testing::Outcomes;
using testing::StoreConformance;

// Makes the backend's storage fail for the object's lifetime, the way production storage does:
// a full disk for the file backends (RLIMIT_FSIZE 0, so every write past offset 0 fails with
// EFBIG; SIGXFSZ ignored), the database gone for PostgreSQL (connections refused and the store's
// session terminated). The destructor gives the storage back.
class StorageOutage {
 public:
  explicit StorageOutage(const Options& o) : kind_(o.kind) {
    if (kind_ == "postgres") {
      // The test database cannot be closed from a session inside it: administer from `postgres`.
      auto c = postgres::PgConnection::connect(o.postgres_url);
      EXPECT_TRUE(c) << c.error().to_string();
      if (!c) return;
      auto name = c->exec("SELECT quote_ident(current_database()), current_database()");
      EXPECT_TRUE(name) << name.error().to_string();
      if (!name) return;
      database_ = PQgetvalue(name->get(), 0, 0);
      const std::string literal = PQgetvalue(name->get(), 0, 1);
      c = postgres::PgConnection::connect(o.postgres_url, "postgres");
      EXPECT_TRUE(c) << c.error().to_string();
      if (!c) return;
      admin_ = std::move(*c);
      expect_exec("ALTER DATABASE " + database_ + " WITH ALLOW_CONNECTIONS false");
      postgres::Params p;
      p.add(literal.data(), literal.size());
      auto killed = admin_.exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1::text", p);
      EXPECT_TRUE(killed) << killed.error().to_string();
      return;
    }
    previous_handler_ = ::signal(SIGXFSZ, SIG_IGN);
    EXPECT_EQ(::getrlimit(RLIMIT_FSIZE, &previous_limit_), 0);
    rlimit none = previous_limit_;
    none.rlim_cur = 0;
    EXPECT_EQ(::setrlimit(RLIMIT_FSIZE, &none), 0);
  }
  ~StorageOutage() {
    if (kind_ == "postgres") {
      if (admin_) expect_exec("ALTER DATABASE " + database_ + " WITH ALLOW_CONNECTIONS true");
      return;
    }
    EXPECT_EQ(::setrlimit(RLIMIT_FSIZE, &previous_limit_), 0);
    ::signal(SIGXFSZ, previous_handler_);
  }
  StorageOutage(const StorageOutage&) = delete;
  StorageOutage& operator=(const StorageOutage&) = delete;

 private:
  void expect_exec(const std::string& sql) {
    auto r = admin_.exec(sql);
    EXPECT_TRUE(r) << r.error().to_string();
  }

  std::string kind_;
  std::string database_;  // quoted
  postgres::PgConnection admin_;
  rlimit previous_limit_{};
  void (*previous_handler_)(int) = SIG_DFL;
};

std::vector<std::string> ids_of(const std::vector<RecoveredMessage>& ms) {
  std::vector<std::string> out;
  for (const auto& m : ms) out.push_back(m.queue + "/" + m.message->correlation_id);
  return out;
}

TEST_P(StoreConformance, CallbacksRunInAppendOrderOnTheStoreThread) {
  start_store();
  Outcomes out;
  std::mutex threads_mutex;
  std::set<std::thread::id> callback_threads;
  constexpr int kBatches = 2000;
  for (int i = 0; i < kBatches; ++i) {
    auto done = out.tagged(i);
    store_->append({Record::added("queue:q", make_message(i))},
                   [&, done](Status s) {
                     {
                       std::lock_guard lock(threads_mutex);
                       callback_threads.insert(std::this_thread::get_id());
                     }
                     done(std::move(s));
                   });
  }
  ASSERT_TRUE(out.wait_for(kBatches));
  auto tags = out.tags();
  for (int i = 0; i < kBatches; ++i) ASSERT_EQ(tags[i], i);
  EXPECT_EQ(out.failures(), 0u);
  EXPECT_EQ(callback_threads.size(), 1u);
  EXPECT_EQ(callback_threads.count(std::this_thread::get_id()), 0u);
}

TEST_P(StoreConformance, EachAppendersOrderIsKeptUnderConcurrency) {
  start_store();
  constexpr int kThreads = 4;
  constexpr int kPerThread = 500;
  Outcomes out;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const int n = t * kPerThread + i;
        store_->append({Record::added("queue:t" + std::to_string(t), make_message(n))},
                       out.tagged(n));
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_TRUE(out.wait_for(kThreads * kPerThread));
  std::vector<int> last(kThreads, -1);
  for (int n : out.tags()) {
    ASSERT_GT(n, last[n / kPerThread]) << "thread " << n / kPerThread << " reordered";
    last[n / kPerThread] = n;
  }
  auto recovered = restart();
  if (!durable()) return;
  ASSERT_EQ(recovered.size(), static_cast<std::size_t>(kThreads * kPerThread));
}

TEST_P(StoreConformance, AckRemovesAMessage) {
  EXPECT_TRUE(start_store().empty());
  std::vector<model::MessagePtr> ms;
  for (int i = 0; i < 5; ++i) ms.push_back(make_message(i));
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(append_sync({Record::added("queue:q", ms[i])}));
  ASSERT_TRUE(append_sync({Record::acked("queue:q", ms[1]->id), Record::acked("queue:q", ms[3]->id)}));
  auto recovered = restart();
  if (!durable()) {
    EXPECT_TRUE(recovered.empty());
    return;
  }
  EXPECT_EQ(ids_of(recovered),
            (std::vector<std::string>{"queue:q/corr-0", "queue:q/corr-2", "queue:q/corr-4"}));
  // ...and stays removed across a second restart.
  EXPECT_EQ(restart().size(), 3u);
}

TEST_P(StoreConformance, BatchLandsWhole) {
  start_store();
  auto a = make_message(1);
  auto b = make_message(2);
  ASSERT_TRUE(append_sync({Record::added("queue:q", a), Record::added("queue:q", b),
                           Record::acked("queue:q", a->id)}));
  auto recovered = restart();
  if (!durable()) return;
  EXPECT_EQ(ids_of(recovered), (std::vector<std::string>{"queue:q/corr-2"}));
}

TEST_P(StoreConformance, OneMessageInSeveralQueuesIsAckedPerQueue) {
  start_store();
  auto m = make_message(1);
  ASSERT_TRUE(append_sync({Record::added("queue:a", m), Record::added("queue:b", m),
                           Record::added("queue:c", m)}));
  ASSERT_TRUE(append_sync({Record::acked("queue:b", m->id)}));
  auto recovered = restart();
  if (!durable()) return;
  EXPECT_EQ(ids_of(recovered), (std::vector<std::string>{"queue:a/corr-1", "queue:c/corr-1"}));
  testing::expect_same_message(*m, *recovered[0].message);
  testing::expect_same_message(*m, *recovered[1].message);
}

TEST_P(StoreConformance, DeliveredCountSurvivesRestart) {
  if (!durable()) GTEST_SKIP() << "nothing survives a restart of the memory store";
  start_store();
  auto a = make_message(1);
  auto b = make_message(2);
  ASSERT_TRUE(append_sync({Record::added("queue:q", a), Record::added("queue:q", b)}));
  ASSERT_TRUE(append_sync({Record::delivered("queue:q", a->id, 1)}));
  ASSERT_TRUE(append_sync({Record::delivered("queue:q", a->id, 3)}));
  // A hint about a message that is gone is harmless.
  ASSERT_TRUE(append_sync({Record::delivered("queue:q", model::MessageId{9, 9}, 2)}));
  auto recovered = restart();
  ASSERT_EQ(recovered.size(), 2u);
  EXPECT_EQ(recovered[0].delivery_count, 3u);
  EXPECT_EQ(recovered[1].delivery_count, 0u);
  ASSERT_TRUE(append_sync({Record::delivered("queue:q", b->id, 1)}));
  recovered = restart();
  ASSERT_EQ(recovered.size(), 2u);
  EXPECT_EQ(recovered[0].delivery_count, 3u);
  EXPECT_EQ(recovered[1].delivery_count, 1u);
}

TEST_P(StoreConformance, PrioritiesSchedulesAndFlagsSurvive) {
  start_store();
  std::vector<model::MessagePtr> sent;
  for (int i = 0; i < 10; ++i) {
    auto m = std::make_shared<model::Message>(*make_message(i));
    m->priority = static_cast<std::uint8_t>(9 - i);
    m->deliver_at_ms = i % 2 ? 1900000000000 + i : 0;  // scheduled messages
    m->retain = i % 3 == 0;
    if (i == 4) m->body = nullptr;  // no body differs from an empty one
    if (i == 5) m->body = std::make_shared<const std::string>();
    sent.push_back(std::move(m));
  }
  Batch batch;
  for (const auto& m : sent) batch.push_back(Record::added("queue:prio", m));
  ASSERT_TRUE(append_sync(std::move(batch)));
  auto recovered = restart();
  if (!durable()) return;
  ASSERT_EQ(recovered.size(), sent.size());
  for (std::size_t i = 0; i < sent.size(); ++i) {
    // Append order, not priority order: the queue orders by priority itself.
    testing::expect_same_message(*sent[i], *recovered[i].message);
    EXPECT_EQ(recovered[i].message->deliver_at_ms, sent[i]->deliver_at_ms) << i;
    EXPECT_EQ(recovered[i].message->retain, sent[i]->retain) << i;
  }
}

// Durable subscriptions, retained messages and session state are ordinary keys to the store.
TEST_P(StoreConformance, SubscriptionRetainedAndSessionKeys) {
  start_store();
  auto def = make_message(1, "selector=region='eu'");
  auto for_sub = make_message(2);
  auto retained_v1 = make_message(3);
  auto retained_v2 = make_message(4);
  auto session = make_message(5);
  ASSERT_TRUE(append_sync({Record::added("queue:$subscriptions", def)}));
  ASSERT_TRUE(append_sync({Record::added("subscription:stomp:app:s1", for_sub),
                           Record::added("retained:sensors.t1", retained_v1),
                           Record::added("session:mqtt:client-7", session)}));
  // A new retained message replaces the old one in one batch.
  ASSERT_TRUE(append_sync({Record::acked("retained:sensors.t1", retained_v1->id),
                           Record::added("retained:sensors.t1", retained_v2)}));
  ASSERT_TRUE(append_sync({Record::delivered("subscription:stomp:app:s1", for_sub->id, 2)}));
  auto recovered = restart();
  if (!durable()) return;
  EXPECT_EQ(ids_of(recovered),
            (std::vector<std::string>{"queue:$subscriptions/corr-1", "subscription:stomp:app:s1/corr-2",
                                      "session:mqtt:client-7/corr-5", "retained:sensors.t1/corr-4"}));
  ASSERT_EQ(recovered.size(), 4u);
  EXPECT_EQ(recovered[1].delivery_count, 2u);
  EXPECT_EQ(*recovered[0].message->body, "selector=region='eu'");
  // The subscription goes away: its definition and its messages are acked.
  ASSERT_TRUE(append_sync({Record::acked("queue:$subscriptions", def->id),
                           Record::acked("subscription:stomp:app:s1", for_sub->id)}));
  EXPECT_EQ(ids_of(restart()),
            (std::vector<std::string>{"session:mqtt:client-7/corr-5", "retained:sensors.t1/corr-4"}));
}

// A message stored again under a key where it is live replaces the old record: its content,
// its place at the end of the append order, and a delivery count of 0.
TEST_P(StoreConformance, StoringAMessageAgainReplacesIt) {
  start_store();
  auto a = make_message(1);
  auto b = make_message(2);
  ASSERT_TRUE(append_sync({Record::added("queue:q", a), Record::added("queue:q", b)}));
  ASSERT_TRUE(append_sync({Record::delivered("queue:q", a->id, 4)}));
  auto a2 = std::make_shared<model::Message>(*a);
  a2->correlation_id = "corr-1-again";
  ASSERT_TRUE(append_sync({Record::added("queue:q", a2)}));
  auto recovered = restart();
  if (!durable()) return;
  EXPECT_EQ(ids_of(recovered), (std::vector<std::string>{"queue:q/corr-2", "queue:q/corr-1-again"}));
  ASSERT_EQ(recovered.size(), 2u);
  EXPECT_EQ(recovered[1].delivery_count, 0u);
}

// Without waiting in between, so a backend's group commit sees stores, deliveries and acks of
// the same messages in one group.
TEST_P(StoreConformance, StoresDeliveriesAndAcksInFlightTogether) {
  start_store();
  Outcomes out;
  constexpr int kMessages = 400;
  std::vector<model::MessagePtr> ms;
  for (int i = 0; i < kMessages; ++i) ms.push_back(make_message(i));
  int batches = 0;
  for (int i = 0; i < kMessages; ++i) {
    store_->append({Record::added("queue:q", ms[i])}, out.callback());
    ++batches;
    if (i % 3 == 0) {
      store_->append({Record::delivered("queue:q", ms[i]->id, 1)}, out.callback());
      ++batches;
    }
    if (i % 2 == 1) {  // ack the previous one, sometimes after its delivered record
      store_->append({Record::acked("queue:q", ms[i - 1]->id)}, out.callback());
      ++batches;
    }
  }
  ASSERT_TRUE(out.wait_for(batches));
  EXPECT_EQ(out.failures(), 0u);
  auto recovered = restart();
  if (!durable()) return;
  ASSERT_EQ(recovered.size(), static_cast<std::size_t>(kMessages / 2));
  for (int k = 0; k < kMessages / 2; ++k) {
    const int i = 2 * k + 1;
    EXPECT_EQ(recovered[k].message->id, ms[i]->id) << i;
    EXPECT_EQ(recovered[k].delivery_count, i % 3 == 0 ? 1u : 0u) << i;
  }
}

TEST_P(StoreConformance, InvalidBatchFailsAloneInItsPlace) {
  start_store();
  Outcomes out;
  store_->append({Record::added("queue:q", make_message(1))}, out.tagged(1));
  Record broken;  // a message record without its message
  broken.queue = "queue:q";
  store_->append({Record::added("queue:q", make_message(2)), broken}, out.tagged(2));
  store_->append({Record::added("queue:q", make_message(3))}, out.tagged(3));
  ASSERT_TRUE(out.wait_for(3));
  EXPECT_EQ(out.tags(), (std::vector<int>{1, 2, 3}));
  auto statuses = out.statuses();
  if (durable()) {
    EXPECT_TRUE(statuses[0]);
    ASSERT_FALSE(statuses[1]);
    EXPECT_EQ(statuses[1].error().code, Errc::invalid_argument);
    EXPECT_TRUE(statuses[2]);
  }
  auto recovered = restart();
  if (!durable()) return;
  EXPECT_EQ(ids_of(recovered), (std::vector<std::string>{"queue:q/corr-1", "queue:q/corr-3"}));
}

TEST_P(StoreConformance, SixteenMebibyteBodies) {
  start_store();
  std::string body(16 << 20, '\0');
  for (std::size_t i = 0; i < body.size(); i += 4093) body[i] = static_cast<char>(i * 7);
  auto big = make_message(1, body);
  auto big2 = make_message(2, body);
  ASSERT_TRUE(append_sync({Record::added("queue:big", big)}));
  ASSERT_TRUE(append_sync({Record::added("queue:big", big2), Record::added("queue:small", make_message(3))}));
  auto recovered = restart();
  if (!durable()) return;
  ASSERT_EQ(recovered.size(), 3u);
  testing::expect_same_message(*big, *recovered[0].message);
  testing::expect_same_message(*big2, *recovered[1].message);
}

TEST_P(StoreConformance, ManyQueues) {
  start_store();
  constexpr int kQueues = 500;
  constexpr int kPerQueue = 4;
  Outcomes out;
  std::map<std::string, std::vector<model::MessagePtr>> sent;
  int n = 0;
  for (int m = 0; m < kPerQueue; ++m) {
    for (int q = 0; q < kQueues; ++q) {
      const std::string queue = "queue:orders." + std::to_string(q);
      auto msg = make_message(n++);
      sent[queue].push_back(msg);
      store_->append({Record::added(queue, msg)}, out.callback());
    }
  }
  // Ack the even-numbered messages of every queue.
  Batch acks;
  for (auto& [queue, msgs] : sent) {
    for (int m = 0; m < kPerQueue; m += 2) acks.push_back(Record::acked(queue, msgs[m]->id));
  }
  store_->append(std::move(acks), out.callback());
  ASSERT_TRUE(out.wait_for(kQueues * kPerQueue + 1));
  EXPECT_EQ(out.failures(), 0u);
  auto recovered = restart();
  if (!durable()) return;
  std::map<std::string, std::vector<model::MessageId>> got;
  for (const auto& r : recovered) got[r.queue].push_back(r.message->id);
  ASSERT_EQ(got.size(), static_cast<std::size_t>(kQueues));
  for (auto& [queue, msgs] : sent) {
    EXPECT_EQ(got[queue], (std::vector<model::MessageId>{msgs[1]->id, msgs[3]->id})) << queue;
  }
}

TEST_P(StoreConformance, CloseFlushesEverythingAppended) {
  start_store();
  Outcomes out;
  constexpr int kBatches = 300;
  for (int i = 0; i < kBatches; ++i) {
    store_->append({Record::added("queue:q", make_message(i))}, out.tagged(i));
  }
  store_->close();  // no waiting before: close() itself must write, sync and report
  EXPECT_EQ(out.tags().size(), static_cast<std::size_t>(kBatches));
  EXPECT_EQ(out.failures(), 0u);
  auto recovered = restart();
  if (!durable()) return;
  ASSERT_EQ(recovered.size(), static_cast<std::size_t>(kBatches));
  for (int i = 0; i < kBatches; ++i) {
    EXPECT_EQ(recovered[i].message->correlation_id, "corr-" + std::to_string(i));
  }
}

TEST_P(StoreConformance, AppendOrderHoldsAcrossRestarts) {
  start_store();
  ASSERT_TRUE(append_sync({Record::added("queue:q", make_message(1))}));
  restart();
  ASSERT_TRUE(append_sync({Record::added("queue:q", make_message(2))}));
  restart();
  ASSERT_TRUE(append_sync({Record::added("queue:q", make_message(3))}));
  auto recovered = restart();
  if (!durable()) return;
  EXPECT_EQ(ids_of(recovered),
            (std::vector<std::string>{"queue:q/corr-1", "queue:q/corr-2", "queue:q/corr-3"}));
}

TEST_P(StoreConformance, AppendAfterCloseFailsWithShuttingDown) {
  start_store();
  store_->close();
  Outcomes out;
  store_->append({Record::added("queue:q", make_message(1))}, out.callback());
  ASSERT_TRUE(out.wait_for(1));
  ASSERT_FALSE(out.statuses()[0]);
  EXPECT_EQ(out.statuses()[0].error().code, Errc::shutting_down);
  store_->close();  // twice is fine
}

TEST_P(StoreConformance, EmptyBatchIsReportedInOrder) {
  start_store();
  Outcomes out;
  store_->append({Record::added("queue:q", make_message(1))}, out.tagged(1));
  store_->append({}, out.tagged(2));
  store_->append({Record::added("queue:q", make_message(3))}, out.tagged(3));
  ASSERT_TRUE(out.wait_for(3));
  EXPECT_EQ(out.tags(), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(out.failures(), 0u);
}

TEST_P(StoreConformance, FailingStorageFailsAppendsAndTheStoreRecovers) {
  if (!durable()) GTEST_SKIP() << "the memory store has no storage to fail";
  start_store();
  ASSERT_TRUE(append_sync({Record::added("queue:q", make_message(1))}));
  {
    StorageOutage outage(options());
    // Big enough that no backend can keep them in a buffer and call that durable.
    constexpr int kAppends = 20;
    Outcomes out;
    for (int i = 0; i < kAppends; ++i) {
      store_->append({Record::added("queue:q", make_message(100 + i, std::string(64 << 10, 'x'))),
                      Record::acked("queue:q", make_message(1)->id)},
                     out.tagged(i));
    }
    ASSERT_TRUE(out.wait_for(kAppends));
    EXPECT_EQ(out.failures(), static_cast<std::size_t>(kAppends)) << "a batch reported durable while storage was failing";
    for (const auto& st : out.statuses()) {
      if (!st) {
        EXPECT_NE(st.error().code, Errc::shutting_down) << st.error().to_string();
      }
    }
  }
  // Storage is back: appends succeed again without a restart (a backend may wait out a
  // reconnect back-off first, so poll, bounded).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  Status last = unexpected(Errc::unavailable, "never tried");
  while (std::chrono::steady_clock::now() < deadline) {
    last = append_sync({Record::added("queue:q", make_message(2))});
    if (last) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // poll interval
  }
  ASSERT_TRUE(last) << "the store did not recover: " << last.error().to_string();
  auto recovered = restart();
  // The message from before the outage is still there, nothing that failed came back.
  EXPECT_EQ(ids_of(recovered), (std::vector<std::string>{"queue:q/corr-1", "queue:q/corr-2"}));
}

TEST(MakeStore, UnknownKindIsNamed) {
  Options o;
  o.kind = "cassandra";
  auto made = make_store(o);
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().code, Errc::invalid_argument);
  EXPECT_NE(made.error().detail.find("cassandra"), std::string::npos);
}

TEST(MakeStore, PostgresNeedsAUrlAndAPlainSchemaName) {
  Options o;
  o.kind = "postgres";
  auto made = make_store(o);
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().code, Errc::invalid_argument);
  EXPECT_NE(made.error().detail.find("--postgres"), std::string::npos) << made.error().detail;
  o.postgres_url = "postgresql://127.0.0.1:1/none";
  o.postgres_schema = "Robert'); DROP TABLE students;--";
  made = make_store(o);
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().code, Errc::invalid_argument);
  EXPECT_NE(made.error().detail.find("schema"), std::string::npos) << made.error().detail;
}

// Once for the binary, so for store_read_conformance_test.cpp too.
INSTANTIATE_TEST_SUITE_P(Backends, StoreConformance, ::testing::ValuesIn(backends()),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

}  // namespace
}  // namespace carrier::store
