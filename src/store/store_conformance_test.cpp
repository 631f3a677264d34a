// One test body, run against every backend (nats's testAllStoreAllPermutations). A backend
// joins by adding its kind to kBackends below; properties only a durable backend can have are
// skipped for the memory store.

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <thread>

#include "store/store.hpp"
#include "store/test_support.hpp"

namespace carrier::store {
namespace {

using testing::make_message;
using testing::Outcomes;
using testing::TempDir;

class StoreConformance : public ::testing::TestWithParam<const char*> {
 protected:
  bool durable() const { return std::string(GetParam()) != "memory"; }

  Options options() const {
    Options o;
    o.kind = GetParam();
    o.data_dir = dir_.path();
    return o;
  }

  // open → recover → start; returns what recover() visited.
  std::vector<RecoveredMessage> start_store() {
    std::vector<RecoveredMessage> recovered;
    auto made = make_store(options());
    EXPECT_TRUE(made) << made.error().to_string();
    if (!made) return recovered;
    store_ = std::move(*made);
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

  // Appends and waits for the outcome.
  Status append_sync(Batch batch) {
    Outcomes out;
    store_->append(std::move(batch), out.callback());
    EXPECT_TRUE(out.wait_for(1));
    return out.statuses().at(0);
  }

  TempDir dir_;
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
  std::vector<core::MessagePtr> ms;
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
  ASSERT_TRUE(append_sync({Record::delivered("queue:q", core::MessageId{9, 9}, 2)}));
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
  std::map<std::string, std::vector<core::MessagePtr>> sent;
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
  std::map<std::string, std::vector<core::MessageId>> got;
  for (const auto& r : recovered) got[r.queue].push_back(r.message->id);
  ASSERT_EQ(got.size(), static_cast<std::size_t>(kQueues));
  for (auto& [queue, msgs] : sent) {
    EXPECT_EQ(got[queue], (std::vector<core::MessageId>{msgs[1]->id, msgs[3]->id})) << queue;
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

TEST(MakeStore, UnknownKindIsNamed) {
  Options o;
  o.kind = "cassandra";
  auto made = make_store(o);
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().code, Errc::invalid_argument);
  EXPECT_NE(made.error().detail.find("cassandra"), std::string::npos);
}

const char* const kBackends[] = {"memory", "log"};

INSTANTIATE_TEST_SUITE_P(Backends, StoreConformance, ::testing::ValuesIn(kBackends),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

}  // namespace
}  // namespace carrier::store
