#include "store/log/log_store.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <random>
#include <thread>

#include "store/log/journal_test_support.hpp"
#include "store/log/record_codec.hpp"

namespace carrier::store::log {
namespace {

using namespace log::testing;
using store::testing::TempDir;

// A started LogStore with helpers to append and wait.
class Journal {
 public:
  explicit Journal(Options o) : store_(std::move(o)) {
    auto opened = store_.open();
    EXPECT_TRUE(opened) << opened.error().to_string();
    auto recovered = store_.recover([&](RecoveredMessage m) { recovered_.push_back(std::move(m)); });
    EXPECT_TRUE(recovered) << recovered.error().to_string();
    store_.start();
  }
  Status append(Batch b) {
    Outcomes out;
    store_.append(std::move(b), out.callback());
    EXPECT_TRUE(out.wait_for(1));
    return out.statuses().at(0);
  }
  LogStore& store() { return store_; }
  std::vector<RecoveredMessage>& recovered() { return recovered_; }

 private:
  std::vector<RecoveredMessage> recovered_;
  LogStore store_;
};

TEST(LogStore, RollsSegmentsAtSegmentBytes) {
  TempDir dir;
  auto o = journal_options(dir.path(), 4096);
  {
    Journal j(o);
    for (int i = 0; i < 100; ++i) {
      ASSERT_TRUE(j.append({Record::added("queue:q", make_message(i, std::string(1000, 'b')))}));
    }
  }
  auto segs = segments_of(o);
  EXPECT_GE(segs.size(), 25u);
  for (const auto& s : segs) EXPECT_LE(s.size, 4096u) << s.path;
  EXPECT_EQ(reopen(o).messages.size(), 100u);
}

TEST(LogStore, AFrameLargerThanASegmentGetsOneToItself) {
  TempDir dir;
  auto o = journal_options(dir.path(), 1024);
  {
    Journal j(o);
    ASSERT_TRUE(j.append(one_message(1)));
    ASSERT_TRUE(j.append({Record::added("queue:q", make_message(2, std::string(100000, 'x')))}));
    ASSERT_TRUE(j.append(one_message(3)));
  }
  auto segs = segments_of(o);
  ASSERT_EQ(segs.size(), 3u);
  EXPECT_GT(segs[1].size, 100000u);
  EXPECT_EQ(correlation_ids(reopen(o).messages),
            (std::vector<std::string>{"corr-1", "corr-2", "corr-3"}));
}

// The acceptance test: a long run of send+ack must keep the journal small.
TEST(LogStore, LongSendAckRunKeepsTheJournalSmall) {
  TempDir dir;
  auto o = journal_options(dir.path(), 1024);
  LogStore::Stats stats;
  {
    Journal j(o);
    Outcomes out;
    constexpr int kMessages = 10000;
    constexpr int kLag = 20;  // acks trail sends, as with a real consumer
    std::vector<model::MessagePtr> sent;
    for (int i = 0; i < kMessages; ++i) {
      sent.push_back(make_message(i, "payload " + std::to_string(i)));
      j.store().append({Record::added("queue:work", sent.back())}, out.callback());
      if (i >= kLag) {
        j.store().append({Record::delivered("queue:work", sent[i - kLag]->id, 1),
                          Record::acked("queue:work", sent[i - kLag]->id)},
                         out.callback());
      }
    }
    for (int i = kMessages - kLag; i < kMessages; ++i) {
      j.store().append({Record::acked("queue:work", sent[i]->id)}, out.callback());
    }
    ASSERT_TRUE(out.wait_for(2 * kMessages));
    EXPECT_EQ(out.failures(), 0u);
    j.store().close();  // the last group's reclamation runs after its callbacks
    stats = j.store().stats();
  }
  EXPECT_LE(segments_of(o).size(), 3u);
  EXPECT_GT(stats.segments_created, 1000u);
  EXPECT_GE(stats.segments_deleted + 3, stats.segments_created);
  auto r = reopen(o);
  ASSERT_TRUE(r.status);
  EXPECT_TRUE(r.messages.empty());
}

// A model-checked random run: sends to several queues, acks in random order (so acks often
// cover messages in much older segments), delivery hints, restarts. Whatever the reclaimer
// deletes, recovery must return exactly the model's live messages, in order.
TEST(LogStore, ReclamationNeverResurrectsOrLosesMessages) {
  TempDir dir;
  auto o = journal_options(dir.path(), 600);
  struct Live {
    std::string queue;
    model::MessagePtr message;
    std::uint32_t deliveries = 0;
  };
  std::vector<Live> model;  // live messages in append order
  std::mt19937 rng(1234);
  int next = 0;
  auto journal = std::make_unique<Journal>(o);
  Outcomes out;
  std::size_t appended = 0;
  auto check = [&] {
    ASSERT_TRUE(out.wait_for(appended));
    ASSERT_EQ(out.failures(), 0u);
    journal.reset();
    journal = std::make_unique<Journal>(o);
    const auto& got = journal->recovered();
    ASSERT_EQ(got.size(), model.size());
    for (std::size_t i = 0; i < model.size(); ++i) {
      ASSERT_EQ(got[i].queue, model[i].queue) << i;
      ASSERT_EQ(got[i].message->id, model[i].message->id) << i;
      ASSERT_EQ(got[i].delivery_count, model[i].deliveries) << i;
    }
  };
  for (int op = 0; op < 6000; ++op) {
    const unsigned what = rng() % 20;
    Batch batch;
    if (what < 8) {
      const int records = 1 + static_cast<int>(rng() % 3);
      for (int r = 0; r < records; ++r) {
        const std::string queue = "queue:q" + std::to_string(rng() % 4);
        auto m = make_message(next++);
        batch.push_back(Record::added(queue, m));
        model.push_back(Live{queue, m, 0});
      }
    } else if (what < 16) {
      if (model.empty()) continue;
      // Usually near the front (like consumers), sometimes anywhere.
      const std::size_t k = rng() % 3 == 0 ? rng() % model.size() : rng() % std::min<std::size_t>(model.size(), 4);
      batch.push_back(Record::acked(model[k].queue, model[k].message->id));
      model.erase(model.begin() + static_cast<std::ptrdiff_t>(k));
    } else if (what < 19) {
      if (model.empty()) continue;
      auto& e = model[rng() % model.size()];
      batch.push_back(Record::delivered(e.queue, e.message->id, ++e.deliveries));
    } else {
      check();
      if (::testing::Test::HasFatalFailure()) return;
      continue;
    }
    journal->store().append(std::move(batch), out.callback());
    ++appended;
  }
  check();
  if (::testing::Test::HasFatalFailure()) return;
  // Drain everything: the journal must shrink back to almost nothing.
  Batch acks;
  for (const auto& e : model) acks.push_back(Record::acked(e.queue, e.message->id));
  model.clear();
  journal->store().append(std::move(acks), out.callback());
  ++appended;
  check();
  journal.reset();
  EXPECT_LE(segments_of(o).size(), 2u);
}

// Everything queued when the writer wakes is one group: one write, one fdatasync. (Appends
// made before start() are queued, which makes the group deterministic; under load the same
// happens whenever appends arrive faster than a sync completes.)
TEST(LogStore, GroupCommitSyncsOncePerGroupNotPerBatch) {
  TempDir dir;
  auto o = journal_options(dir.path());
  o.fsync = true;
  LogStore store(o);
  ASSERT_TRUE(store.open());
  ASSERT_TRUE(store.recover([](RecoveredMessage) {}));
  constexpr int kBatches = 5000;
  Outcomes out;
  for (int i = 0; i < kBatches; ++i) store.append(one_message(i), out.tagged(i));
  store.start();
  ASSERT_TRUE(out.wait_for(kBatches));
  EXPECT_EQ(out.failures(), 0u);
  const auto s = store.stats();
  EXPECT_EQ(s.batches, static_cast<std::uint64_t>(kBatches));
  EXPECT_EQ(s.group_commits, 1u);
  EXPECT_EQ(s.syncs, 1u);
}

TEST(LogStore, ConcurrentAppendersAllLand) {
  TempDir dir;
  auto o = journal_options(dir.path());
  o.fsync = true;
  constexpr int kThreads = 4;
  constexpr int kPerThread = 2000;
  {
    Journal j(o);
    Outcomes out;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) {
          j.store().append(one_message(t * kPerThread + i), out.callback());
        }
      });
    }
    for (auto& th : threads) th.join();
    ASSERT_TRUE(out.wait_for(kThreads * kPerThread));
    EXPECT_EQ(out.failures(), 0u);
    const auto s = j.store().stats();
    EXPECT_EQ(s.syncs, s.group_commits);  // one segment per group here
    EXPECT_LE(s.syncs, s.batches);
  }
  EXPECT_EQ(reopen(o).messages.size(), static_cast<std::size_t>(kThreads * kPerThread));
}

TEST(LogStore, FsyncOffNeverSyncs) {
  TempDir dir;
  Journal j(journal_options(dir.path()));
  ASSERT_TRUE(j.append(one_message(1)));
  EXPECT_EQ(j.store().stats().syncs, 0u);
}

TEST(LogStore, EncodingErrorIsReportedInItsPlace) {
  TempDir dir;
  Journal j(journal_options(dir.path()));
  Record bad;
  bad.kind = RecordKind::message;
  bad.queue = "queue:q";
  Outcomes out;
  j.store().append(one_message(1), out.tagged(1));
  j.store().append({bad}, out.tagged(2));
  j.store().append(one_message(3), out.tagged(3));
  ASSERT_TRUE(out.wait_for(3));
  EXPECT_EQ(out.tags(), (std::vector<int>{1, 2, 3}));
  auto st = out.statuses();
  EXPECT_TRUE(st[0]);
  ASSERT_FALSE(st[1]);
  EXPECT_EQ(st[1].error().code, Errc::invalid_argument);
  EXPECT_TRUE(st[2]);
}

TEST(LogStore, ASecondStoreOnTheSameJournalIsRefused) {
  TempDir dir;
  auto o = journal_options(dir.path());
  LogStore first(o);
  ASSERT_TRUE(first.open());
  LogStore second(o);
  auto st = second.open();
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, Errc::unavailable);
  first.close();
  LogStore third(o);
  EXPECT_TRUE(third.open());
}

// Write errors: RLIMIT_FSIZE makes the kernel refuse writes past a size (EFBIG), the closest
// thing to a full disk a test can arrange without root or a special filesystem.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);  // else the process is killed
    ::getrlimit(RLIMIT_FSIZE, &old_);
    rlimit lim = old_;
    lim.rlim_cur = bytes;
    EXPECT_EQ(::setrlimit(RLIMIT_FSIZE, &lim), 0);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_);
    std::signal(SIGXFSZ, old_handler_);
  }

 private:
  rlimit old_{};
  void (*old_handler_)(int) = nullptr;
};

TEST(LogStore, AFailedWriteIsReportedAndUndoneAndLaterAppendsSucceed) {
  TempDir dir;
  auto o = journal_options(dir.path());
  o.fsync = true;
  {
    Journal j(o);
    ASSERT_TRUE(j.append(one_message(1)));
    const auto size = segments_of(o).at(0).size;
    {
      FileSizeLimit limit(size + 2000);
      auto failed = j.append({Record::added("queue:q", make_message(2, std::string(8000, 'x')))});
      ASSERT_FALSE(failed);
      EXPECT_EQ(failed.error().code, Errc::io_error);
      EXPECT_NE(failed.error().detail.find(segments_of(o).at(0).path.string()), std::string::npos)
          << failed.error().detail;
      EXPECT_EQ(segments_of(o).at(0).size, size) << "the partial write was not undone";
      // Smaller appends still fit under the limit: the store retries at the last good offset.
      ASSERT_TRUE(j.append(one_message(3)));
    }
    ASSERT_TRUE(j.append({Record::added("queue:q", make_message(4, std::string(8000, 'y')))}));
    EXPECT_EQ(j.store().stats().failed_batches, 1u);
  }
  auto r = reopen(o);
  ASSERT_TRUE(r.status);
  EXPECT_EQ(correlation_ids(r.messages), (std::vector<std::string>{"corr-1", "corr-3", "corr-4"}));
  EXPECT_EQ(r.report.truncated_bytes, 0u);
}

// A group is written with one pwritev; if it fails part-way, the whole group is undone and
// failed (reporting part of it durable would need per-frame bookkeeping for a rare event). A
// later, smaller group may fit again. What must hold: recovery returns exactly the batches
// whose callbacks said durable, and nothing half-written is left in the file.
TEST(LogStore, AFailedWriteFailsItsGroupAndRecoveryAgreesWithTheCallbacks) {
  TempDir dir;
  auto o = journal_options(dir.path());
  LogStore store(o);
  ASSERT_TRUE(store.open());
  ASSERT_TRUE(store.recover([](RecoveredMessage) {}));
  Outcomes out;
  store.append(one_message(0), out.tagged(0));
  store.start();
  ASSERT_TRUE(out.wait_for(1));
  const auto size = segments_of(o).at(0).size;
  constexpr int kBatches = 12;
  {
    FileSizeLimit limit(size + 3000);
    for (int i = 1; i <= kBatches; ++i) {
      store.append({Record::added("queue:q", make_message(i, std::string(900, 'z')))},
                   out.tagged(i));
    }
    ASSERT_TRUE(out.wait_for(kBatches + 1));
  }
  const auto st = out.statuses();
  const auto tags = out.tags();
  std::vector<std::string> durable;
  std::size_t failed = 0;
  for (std::size_t k = 0; k < st.size(); ++k) {
    if (st[k]) {
      durable.push_back("corr-" + std::to_string(tags[k]));
    } else {
      ++failed;
      EXPECT_EQ(st[k].error().code, Errc::io_error);
    }
  }
  EXPECT_GE(failed, 1u);
  EXPECT_LE(durable.size(), 4u);  // ~1 KiB frames under a 3000-byte allowance
  store.close();
  auto r = reopen(o);
  EXPECT_EQ(correlation_ids(r.messages), durable);
  EXPECT_EQ(r.report.truncated_bytes, 0u);
}

// A crash can leave fully acked segments behind (deleted only after the acks were synced).
// The next start deletes them.
TEST(LogStore, FullyAckedSegmentsLeftByACrashAreDeletedAtStart) {
  TempDir dir;
  auto o = journal_options(dir.path());
  const auto jdir = journal_dir(o.data_dir);
  std::filesystem::create_directories(jdir);
  auto m1 = make_message(1);
  auto m2 = make_message(2);
  auto write_segment = [&](std::uint64_t id, Batch b) {
    std::string bytes = encode_segment_header(id);
    ASSERT_TRUE(encode_batch(b, bytes));
    write_file(segment_path(jdir, id), bytes);
  };
  write_segment(1, {Record::added("queue:q", m1)});
  write_segment(2, {Record::added("queue:q", m2)});
  write_segment(3, {Record::acked("queue:q", m1->id)});
  write_segment(4, {Record::delivered("queue:q", m2->id, 1)});
  {
    Journal j(o);
    ASSERT_EQ(j.recovered().size(), 1u);
    EXPECT_EQ(j.recovered()[0].delivery_count, 1u);
    // Segment 1 goes, then 3 (its ack covered 1); 2 is live; 4 is being appended to.
    ASSERT_TRUE(j.append(one_message(5)));
  }
  std::vector<std::uint64_t> ids;
  for (const auto& s : segments_of(o)) ids.push_back(s.id);
  EXPECT_EQ(ids, (std::vector<std::uint64_t>{2, 4}));
  EXPECT_EQ(correlation_ids(reopen(o).messages), (std::vector<std::string>{"corr-2", "corr-5"}));
}

TEST(LogStore, CloseWithoutStartStillWritesWhatWasAppended) {
  TempDir dir;
  auto o = journal_options(dir.path());
  {
    LogStore s(o);
    ASSERT_TRUE(s.open());
    ASSERT_TRUE(s.recover([](RecoveredMessage) {}));
    Outcomes out;
    s.append(one_message(1), out.callback());
    s.close();
    ASSERT_TRUE(out.wait_for(1));
    EXPECT_TRUE(out.statuses()[0]);
  }
  EXPECT_EQ(reopen(o).messages.size(), 1u);
}

}  // namespace
}  // namespace carrier::store::log
