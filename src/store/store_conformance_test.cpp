// One test body, run against every backend (nats's testAllStoreAllPermutations). A backend
// joins by adding its kind to backends() below; properties only a durable backend can have are
// skipped for the memory store. PostgreSQL joins when CARRIER_TEST_POSTGRES_URL names a server
// (ctest's store_test_postgres starts one with scripts/postgres-test-server); each test then
// gets a schema of its own.

#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "store/log/journal_directory.hpp"
#include "store/postgres/pg_connection.hpp"
#include "store/store.hpp"
#include "store/test_support.hpp"

namespace carrier::store {
namespace {

using testing::make_message;
using testing::Outcomes;
using testing::TempDir;

const char* postgres_url() { return std::getenv("CARRIER_TEST_POSTGRES_URL"); }

// A schema no other test uses, so every test starts from empty tables on a shared server.
std::string fresh_schema() {
  static std::mt19937_64 random{std::random_device{}()};
  return "conformance_" + std::to_string(random() % 1000000000000ull);
}

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

class StoreConformance : public ::testing::TestWithParam<const char*> {
 protected:
  bool durable() const { return std::string(GetParam()) != "memory"; }

  Options options() const {
    Options o;
    o.kind = GetParam();
    o.data_dir = dir_.path();
    if (segment_bytes_ != 0) o.segment_bytes = segment_bytes_;
    if (o.kind == "postgres") {
      o.postgres_url = postgres_url();
      o.postgres_schema = schema_;
    }
    return o;
  }

  // open → recover → start; returns what recover() visited.
  std::vector<RecoveredMessage> start_store(const RecoverOptions& recover_options = {}) {
    std::vector<RecoveredMessage> recovered;
    auto made = make_store(options());
    EXPECT_TRUE(made) << made.error().to_string();
    if (!made) return recovered;
    store_ = std::move(*made);
    auto opened = store_->open();
    EXPECT_TRUE(opened) << opened.error().to_string();
    auto rec = store_->recover(recover_options, [&](RecoveredMessage m) { recovered.push_back(std::move(m)); });
    EXPECT_TRUE(rec) << rec.error().to_string();
    store_->start();
    return recovered;
  }

  std::vector<RecoveredMessage> restart(const RecoverOptions& recover_options = {}) {
    store_->close();
    store_.reset();
    return start_store(recover_options);
  }

  // Appends and waits for the outcome.
  Status append_sync(Batch batch) {
    Outcomes out;
    store_->append(std::move(batch), out.callback());
    EXPECT_TRUE(out.wait_for(1));
    return out.statuses().at(0);
  }

  struct Appended {
    Status status;
    std::vector<Location> locations;
  };
  // append_located() and waits for the outcome.
  Appended append_located_sync(Batch batch) {
    std::mutex m;
    std::condition_variable cv;
    std::optional<Appended> got;
    store_->append_located(std::move(batch), [&](Status st, std::vector<Location> where) {
      std::lock_guard lock(m);
      got = Appended{std::move(st), std::move(where)};
      cv.notify_all();
    });
    std::unique_lock lock(m);
    EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return got.has_value(); }));
    return got.value_or(Appended{unexpected(Errc::timed_out, "no callback"), {}});
  }

  struct ReadBack {
    std::vector<Result<model::MessagePtr>> answers;
    std::thread::id thread;
  };
  // read() and waits for its one callback.
  ReadBack read_sync(const std::string& queue, std::vector<ReadItem> items) {
    std::mutex m;
    std::condition_variable cv;
    std::optional<ReadBack> got;
    int calls = 0;
    store_->read(queue, std::move(items), [&](std::vector<Result<model::MessagePtr>> answers) {
      std::lock_guard lock(m);
      ++calls;
      got = ReadBack{std::move(answers), std::this_thread::get_id()};
      cv.notify_all();
    });
    std::unique_lock lock(m);
    EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return got.has_value(); }));
    EXPECT_EQ(calls, 1);
    return got.value_or(ReadBack{});
  }

  TempDir dir_;
  const std::string schema_ = fresh_schema();
  std::uint64_t segment_bytes_ = 0;  // log: 0 keeps the default
  std::unique_ptr<Store> store_;
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

// ---- the read path (paging) ---------------------------------------------------------------------

// docs/storage.md, "Non-persistent messages past the budget": a spilled message is stored,
// read back and acked like any other while the process runs, and no restart brings it back;
// the restart after that one finds it gone for good.
TEST_P(StoreConformance, ASpilledMessageIsLiveUntilARestartOnly) {
  if (!durable()) GTEST_SKIP() << "nothing survives a restart of the memory store";
  start_store();
  auto kept = make_message(1);
  auto spilled = std::make_shared<model::Message>(*make_message(2));
  spilled->persistent = false;
  spilled->spilled = true;
  auto acked = std::make_shared<model::Message>(*make_message(3));
  acked->persistent = false;
  acked->spilled = true;
  auto appended = append_located_sync(
      {Record::added("queue:q", kept), Record::added("queue:q", spilled), Record::added("queue:q", acked)});
  ASSERT_TRUE(appended.status) << appended.status.error().to_string();
  auto got = read_sync("queue:q", {{spilled->id, appended.locations[1]}});
  ASSERT_EQ(got.answers.size(), 1u);
  ASSERT_TRUE(got.answers[0]) << got.answers[0].error().to_string();
  testing::expect_same_message(*spilled, **got.answers[0]);
  ASSERT_TRUE(append_sync({Record::acked("queue:q", acked->id)}));
  auto recovered = restart();
  ASSERT_EQ(recovered.size(), 1u);
  EXPECT_EQ(recovered[0].message->id, kept->id);
  recovered = restart();
  ASSERT_EQ(recovered.size(), 1u);
  EXPECT_EQ(recovered[0].message->id, kept->id);
}

TEST_P(StoreConformance, AppendLocatedNamesEveryMessageRecordAndReadGetsItBack) {
  start_store();
  auto a = make_message(1);
  auto b = make_message(2);
  auto old = make_message(3);
  ASSERT_TRUE(append_sync({Record::added("queue:q", old)}));
  auto appended = append_located_sync({Record::added("queue:q", a), Record::delivered("queue:q", old->id, 2),
                                       Record::added("queue:q", b), Record::acked("queue:q", old->id)});
  ASSERT_TRUE(appended.status) << appended.status.error().to_string();
  ASSERT_EQ(appended.locations.size(), 4u);
  EXPECT_TRUE(appended.locations[0].valid());
  EXPECT_FALSE(appended.locations[1].valid()) << "a delivered record stores no message";
  EXPECT_TRUE(appended.locations[2].valid());
  EXPECT_FALSE(appended.locations[3].valid()) << "an ack stores no message";
  EXPECT_NE(appended.locations[0], appended.locations[2]);

  auto got = read_sync("queue:q", {{a->id, appended.locations[0]}, {b->id, appended.locations[2]}});
  ASSERT_EQ(got.answers.size(), 2u);
  ASSERT_TRUE(got.answers[0]) << got.answers[0].error().to_string();
  ASSERT_TRUE(got.answers[1]) << got.answers[1].error().to_string();
  testing::expect_same_message(*a, **got.answers[0]);
  testing::expect_same_message(*b, **got.answers[1]);
  EXPECT_NE(got.thread, std::this_thread::get_id()) << "read callbacks run on a store thread";
}

TEST_P(StoreConformance, ReadInBatchesAnswersEveryItemInOrder) {
  start_store();
  constexpr int kMessages = 60;
  std::vector<model::MessagePtr> ms;
  std::vector<Location> where;
  for (int i = 0; i < kMessages; i += 3) {  // batches of three, so records share frames
    Batch batch;
    for (int k = 0; k < 3; ++k) {
      ms.push_back(make_message(static_cast<std::uint64_t>(i + k), "body-" + std::to_string(i + k)));
      batch.push_back(Record::added("queue:many", ms.back()));
    }
    auto appended = append_located_sync(std::move(batch));
    ASSERT_TRUE(appended.status);
    ASSERT_EQ(appended.locations.size(), 3u);
    for (const auto& l : appended.locations) where.push_back(l);
  }
  // Backwards, one item asked twice, and bad items in between: each gets its own answer.
  std::vector<ReadItem> items;
  std::vector<int> expect;  // index into ms, or -1 for a bad item
  for (int i = kMessages - 1; i >= 0; --i) {
    items.push_back({ms[i]->id, where[i]});
    expect.push_back(i);
    if (i % 17 == 0) {
      items.push_back({ms[i]->id, Location{}});  // nowhere
      expect.push_back(-1);
      items.push_back({model::MessageId{7, 7}, where[i]});  // someone else's location
      expect.push_back(-1);
    }
  }
  items.push_back({ms[5]->id, where[5]});
  expect.push_back(5);
  auto got = read_sync("queue:many", items);
  ASSERT_EQ(got.answers.size(), items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (expect[i] < 0) {
      ASSERT_FALSE(got.answers[i]) << "item " << i;
      EXPECT_EQ(got.answers[i].error().code, Errc::not_found) << got.answers[i].error().to_string();
      continue;
    }
    ASSERT_TRUE(got.answers[i]) << "item " << i << ": " << got.answers[i].error().to_string();
    EXPECT_EQ(*(*got.answers[i])->body, "body-" + std::to_string(expect[i]));
  }
  // The location of another queue's message is not this queue's.
  got = read_sync("queue:other", {{ms[0]->id, where[0]}});
  ASSERT_EQ(got.answers.size(), 1u);
  ASSERT_FALSE(got.answers[0]);
  EXPECT_EQ(got.answers[0].error().code, Errc::not_found);
  // An empty read is answered too.
  EXPECT_TRUE(read_sync("queue:many", {}).answers.empty());
}

TEST_P(StoreConformance, ReadOfAnAckedMessageIsNotFound) {
  start_store();
  auto a = make_message(1);
  auto b = make_message(2);
  auto appended = append_located_sync({Record::added("queue:q", a), Record::added("queue:q", b)});
  ASSERT_TRUE(appended.status);
  ASSERT_TRUE(append_sync({Record::acked("queue:q", a->id)}));
  auto got = read_sync("queue:q", {{a->id, appended.locations[0]}, {b->id, appended.locations[1]}});
  ASSERT_EQ(got.answers.size(), 2u);
  ASSERT_FALSE(got.answers[0]);
  EXPECT_EQ(got.answers[0].error().code, Errc::not_found) << got.answers[0].error().to_string();
  ASSERT_TRUE(got.answers[1]) << got.answers[1].error().to_string();
  testing::expect_same_message(*b, **got.answers[1]);
}

TEST_P(StoreConformance, ReadOfAReclaimedLocationIsNotFound) {
  segment_bytes_ = 4096;  // log: a few messages per segment, so acking them frees segments
  start_store();
  std::vector<model::MessagePtr> ms;
  std::vector<Location> where;
  for (int i = 0; i < 40; ++i) {
    ms.push_back(make_message(static_cast<std::uint64_t>(i), std::string(700, 'x')));
    auto appended = append_located_sync({Record::added("queue:q", ms.back())});
    ASSERT_TRUE(appended.status);
    where.push_back(appended.locations.at(0));
  }
  Batch acks;
  for (int i = 0; i < 30; ++i) acks.push_back(Record::acked("queue:q", ms[i]->id));
  ASSERT_TRUE(append_sync(std::move(acks)));
  if (std::string(GetParam()) == "log") {
    // The first segment goes once its messages are acked (the writer deletes it after the
    // group commit that made it free): wait for that, bounded.
    const auto first = log::segment_path(log::journal_dir(dir_.path()), where[0].file);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::filesystem::exists(first) && std::chrono::steady_clock::now() < deadline) {
      ASSERT_TRUE(append_sync({}));  // an empty batch: one more group commit, one more reclaim
    }
    ASSERT_FALSE(std::filesystem::exists(first)) << first << " was not reclaimed";
  }
  std::vector<ReadItem> items;
  for (int i = 0; i < 40; ++i) items.push_back({ms[i]->id, where[i]});
  auto got = read_sync("queue:q", items);
  ASSERT_EQ(got.answers.size(), 40u);
  for (int i = 0; i < 40; ++i) {
    if (i < 30) {
      ASSERT_FALSE(got.answers[i]) << "acked message " << i << " was read";
      EXPECT_EQ(got.answers[i].error().code, Errc::not_found) << got.answers[i].error().to_string();
    } else {
      ASSERT_TRUE(got.answers[i]) << i << ": " << got.answers[i].error().to_string();
      testing::expect_same_message(*ms[i], **got.answers[i]);
    }
  }
}

TEST_P(StoreConformance, RecoveryHandsBackTheLocationsAppendGave) {
  if (!durable()) GTEST_SKIP() << "nothing survives a restart of the memory store";
  start_store();
  std::vector<model::MessagePtr> ms;
  std::vector<Location> where;
  for (int i = 0; i < 6; i += 2) {
    ms.push_back(make_message(static_cast<std::uint64_t>(i)));
    ms.push_back(make_message(static_cast<std::uint64_t>(i + 1)));
    auto appended = append_located_sync({Record::added("queue:q", ms[i]), Record::added("queue:q", ms[i + 1])});
    ASSERT_TRUE(appended.status);
    where.insert(where.end(), appended.locations.begin(), appended.locations.end());
  }
  ASSERT_TRUE(append_sync({Record::acked("queue:q", ms[2]->id), Record::delivered("queue:q", ms[3]->id, 2)}));
  auto recovered = restart();
  ASSERT_EQ(recovered.size(), 5u);
  std::vector<ReadItem> items;
  for (const auto& r : recovered) {
    EXPECT_TRUE(r.location.valid());
    const auto at = std::find_if(ms.begin(), ms.end(), [&](const auto& m) { return m->id == r.message->id; });
    ASSERT_NE(at, ms.end());
    EXPECT_EQ(r.location, where[static_cast<std::size_t>(at - ms.begin())]) << "recovery moved a location";
    items.push_back({r.message->id, r.location});
  }
  auto got = read_sync("queue:q", items);
  ASSERT_EQ(got.answers.size(), recovered.size());
  for (std::size_t i = 0; i < recovered.size(); ++i) {
    ASSERT_TRUE(got.answers[i]) << got.answers[i].error().to_string();
    testing::expect_same_message(*recovered[i].message, **got.answers[i]);
  }
  // The acked one stays unreadable after the restart.
  got = read_sync("queue:q", {{ms[2]->id, where[2]}});
  ASSERT_FALSE(got.answers.at(0));
  EXPECT_EQ(got.answers[0].error().code, Errc::not_found);
  // Locations survive a second restart, and new appends do not reuse them.
  auto appended = append_located_sync({Record::added("queue:q", make_message(100))});
  ASSERT_TRUE(appended.status);
  for (const auto& l : where) EXPECT_NE(l, appended.locations.at(0));
  recovered = restart();
  ASSERT_EQ(recovered.size(), 6u);
  EXPECT_EQ(recovered.back().location, appended.locations[0]);
}

TEST_P(StoreConformance, ReadsBackSixteenMebibyteBodies) {
  start_store();
  std::string body(16 << 20, '\0');
  for (std::size_t i = 0; i < body.size(); i += 4093) body[i] = static_cast<char>(i * 7);
  auto big = make_message(1, body);
  auto small = make_message(2);
  auto appended = append_located_sync({Record::added("queue:big", big), Record::added("queue:big", small)});
  ASSERT_TRUE(appended.status);
  auto got = read_sync("queue:big", {{small->id, appended.locations[1]}, {big->id, appended.locations[0]}});
  ASSERT_EQ(got.answers.size(), 2u);
  ASSERT_TRUE(got.answers[0] && got.answers[1]);
  testing::expect_same_message(*small, **got.answers[0]);
  testing::expect_same_message(*big, **got.answers[1]);
  if (!durable()) return;
  auto recovered = restart();
  ASSERT_EQ(recovered.size(), 2u);
  got = read_sync("queue:big", {{big->id, recovered[0].location}});
  ASSERT_TRUE(got.answers.at(0)) << got.answers[0].error().to_string();
  testing::expect_same_message(*big, **got.answers[0]);
}

TEST_P(StoreConformance, ReadAfterCloseFailsWithShuttingDown) {
  start_store();
  auto a = make_message(1);
  auto appended = append_located_sync({Record::added("queue:q", a)});
  ASSERT_TRUE(appended.status);
  store_->close();
  auto got = read_sync("queue:q", {{a->id, appended.locations[0]}});
  ASSERT_EQ(got.answers.size(), 1u);
  ASSERT_FALSE(got.answers[0]);
  EXPECT_EQ(got.answers[0].error().code, Errc::shutting_down) << got.answers[0].error().to_string();
  bool failed = false;
  store_->append_located({Record::added("queue:q", make_message(2))},
                         [&](Status st, std::vector<Location> where) { failed = !st && where.empty(); });
  EXPECT_TRUE(failed) << "append_located after close() fails at once, with no locations";
}

// With summary_only, a backend may hand back a summary (message null) instead of the message:
// the journal does, from its segment indexes; the others may return whole messages. Either way
// the order, queues, delivery counts and locations are those of a plain recovery, a summary
// matches its message, and its location reads the message back.
TEST_P(StoreConformance, RecoverWithSummaryOnlyGivesSummariesThatReadBack) {
  if (!durable()) GTEST_SKIP() << "nothing survives a restart of the memory store";
  segment_bytes_ = 2048;  // log: several closed segments, so their indexes are used
  start_store();
  std::map<model::MessageId, model::MessagePtr> sent;
  for (std::uint64_t n = 1; n <= 24; ++n) {
    auto m = make_message(n, std::string(100 + n, 'b'));
    if (n % 5 == 0) {
      auto scheduled = std::make_shared<model::Message>(*m);
      scheduled->deliver_at_ms = 1900000000000 + static_cast<std::int64_t>(n);
      m = scheduled;
    }
    sent[m->id] = m;
    ASSERT_TRUE(append_sync({Record::added(n % 2 ? "queue:paged" : "queue:whole", m)}));
  }
  const auto id = [](std::uint64_t n) { return make_message(n)->id; };
  ASSERT_TRUE(append_sync({Record::acked("queue:paged", id(3)), Record::delivered("queue:paged", id(7), 4),
                           Record::delivered("queue:whole", id(8), 2)}));
  const auto plain = restart();
  RecoverOptions paged;
  paged.summary_only = [](std::string_view q) { return q == "queue:paged"; };
  // Twice: the first restart may write indexes the second then uses.
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const auto got = restart(paged);
    ASSERT_EQ(got.size(), plain.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      const RecoveredMessage& r = got[i];
      const model::MessageId rid = r.message ? r.message->id : r.summary.id;
      ASSERT_EQ(rid, plain[i].message->id) << "order differs at " << i;
      EXPECT_EQ(r.queue, plain[i].queue);
      EXPECT_EQ(r.delivery_count, plain[i].delivery_count);
      EXPECT_EQ(r.location, plain[i].location);
      const auto& original = sent.at(rid);
      if (r.message) {
        testing::expect_same_message(*original, *r.message);
        continue;
      }
      EXPECT_EQ(r.queue, "queue:paged") << "only summary_only queues may come back as summaries";
      EXPECT_EQ(r.summary.priority, original->priority);
      EXPECT_EQ(r.summary.persistent, original->persistent);
      EXPECT_EQ(r.summary.timestamp_ms, original->timestamp_ms);
      EXPECT_EQ(r.summary.expires_ms, original->expires_ms);
      EXPECT_EQ(r.summary.deliver_at_ms, original->deliver_at_ms);
      EXPECT_EQ(r.summary.footprint, original->footprint());
      ASSERT_TRUE(r.location.valid());
      auto back = read_sync(r.queue, {{rid, r.location}});
      ASSERT_TRUE(back.answers.at(0)) << back.answers[0].error().to_string();
      testing::expect_same_message(*original, **back.answers[0]);
    }
  }
  if (std::string(GetParam()) == "log") {
    const auto got = restart(paged);
    const auto summaries = std::count_if(got.begin(), got.end(), [](const auto& r) { return !r.message; });
    EXPECT_EQ(summaries, 11) << "the journal hands back every live message of queue:paged as a summary";
  }
}

std::vector<const char*> backends() {
  std::vector<const char*> kinds = {"memory", "log", "sqlite"};
  if (postgres_url() != nullptr) kinds.push_back("postgres");
  return kinds;
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreConformance, ::testing::ValuesIn(backends()),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

}  // namespace
}  // namespace carrier::store
