// The store conformance suite, part two: the read path (append_located, read, the locations
// recovery hands back, summaries), run against every backend. The fixture and the backends are in
// store_conformance_fixture.hpp; the suite is instantiated once, in store_conformance_test.cpp.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "store/log/journal_directory.hpp"
#include "store/store.hpp"
#include "store/store_conformance_fixture.hpp"
#include "store/test_support.hpp"

namespace carrier::store {
namespace {

using testing::make_message;
using testing::StoreConformance;

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

}  // namespace
}  // namespace carrier::store
