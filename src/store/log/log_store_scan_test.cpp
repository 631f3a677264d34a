// What only the journal's scan has: it loads what it examines (one segment's catalog for a short
// scan, each segment once for a whole lane), its bounded catalog cache, the fallback to a
// segment's frames when the index is missing or damaged, and errors for damaged frames. What
// every backend's scan must do is in store_scan_conformance_test.cpp.

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <iterator>
#include <filesystem>
#include <mutex>
#include <optional>

#include "base/logging.hpp"
#include "store/log/catalog_cache.hpp"
#include "store/log/journal_test_support.hpp"
#include "store/log/log_store.hpp"

namespace carrier::store::log {
namespace {

using namespace log::testing;
using store::testing::TempDir;

model::MessagePtr lane_message(int n, std::uint8_t priority = 4, std::size_t body = 500) {
  auto m = std::make_shared<model::Message>(*make_message(n, std::string(body, 'z')));
  m->priority = priority;
  return m;
}

// A started LogStore with synchronous append and scan.
class ScanJournal {
 public:
  explicit ScanJournal(Options o) : store_(std::move(o)) {
    EXPECT_TRUE(store_.open());
    EXPECT_TRUE(store_.recover([](RecoveredMessage) {}));
    store_.start();
  }
  void append(Batch b) {
    Outcomes out;
    store_.append(std::move(b), out.callback());
    ASSERT_TRUE(out.wait_for(1));
    ASSERT_TRUE(out.statuses().at(0)) << out.statuses()[0].error().to_string();
  }
  Result<ScanResult> scan(const std::string& queue, Location from, std::size_t max, std::uint8_t priority = 4) {
    std::mutex mu;
    std::condition_variable cv;
    std::optional<Result<ScanResult>> got;
    store_.scan(queue, priority, from, max, [&](Result<ScanResult> r) {
      std::lock_guard lock(mu);
      got = std::move(r);
      cv.notify_all();
    });
    std::unique_lock lock(mu);
    EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return got.has_value(); }));
    if (!got) return unexpected(Errc::timed_out, "no scan callback");
    return std::move(*got);
  }
  // Scans to exhaustion; the correlation ids found and the number of calls.
  std::pair<std::vector<std::string>, int> scan_lane(const std::string& queue, std::size_t max) {
    std::vector<std::string> ids;
    Location from;
    for (int calls = 1; calls < 10000; ++calls) {
      auto r = scan(queue, from, max);
      EXPECT_TRUE(r) << r.error().to_string();
      if (!r) return {ids, calls};
      for (const auto& s : r->messages) ids.push_back(s.message->correlation_id);
      from = r->next;
      if (r->exhausted) return {ids, calls};
    }
    ADD_FAILURE() << "never exhausted";
    return {ids, 0};
  }
  LogStore& store() { return store_; }

 private:
  LogStore store_;
};

std::vector<std::string> corr_range(int from, int to, int step = 1) {
  std::vector<std::string> out;
  for (int i = from; i < to; i += step) out.push_back("corr-" + std::to_string(i));
  return out;
}

TEST(LogStoreScan, AShortScanLoadsOneSegmentAndALaneLoadsEachOnce) {
  TempDir dir;
  auto o = journal_options(dir.path(), 4096);
  ScanJournal j(o);
  for (int i = 0; i < 200; ++i) j.append({Record::added("queue:q", lane_message(i))});
  const std::size_t segments = segments_of(o).size();
  ASSERT_GE(segments, 20u);

  auto first = j.scan("queue:q", Location{}, 5);
  ASSERT_TRUE(first) << first.error().to_string();
  EXPECT_EQ(first->messages.size(), 5u);
  EXPECT_FALSE(first->exhausted);
  auto s = j.store().stats();
  EXPECT_EQ(s.scan_catalogs_from_index + s.scan_catalogs_from_frames, 1u) << "a scan of 5 read one segment's index";

  auto [ids, calls] = j.scan_lane("queue:q", 5);
  EXPECT_EQ(ids, corr_range(0, 200));
  s = j.store().stats();
  // Every closed segment from its index, the open one from its frames; the second pass above
  // found the first segment still cached, and each segment was loaded once however many scans
  // it took.
  EXPECT_EQ(s.scan_catalogs_from_index, segments - 1);
  EXPECT_EQ(s.scan_catalogs_from_frames, 1u);
  EXPECT_GT(s.scan_catalog_hits, 0u);
  EXPECT_EQ(s.scans, static_cast<std::uint64_t>(calls) + 1);
}

TEST(LogStoreScan, AMissingOrDamagedIndexFallsBackToTheSegmentsFrames) {
  TempDir dir;
  auto o = journal_options(dir.path(), 4096);
  ScanJournal j(o);
  for (int i = 0; i < 100; ++i) j.append({Record::added(i % 2 ? "queue:q" : "queue:other", lane_message(i))});
  const auto segments = segments_of(o);
  ASSERT_GE(segments.size(), 5u);
  const auto jdir = journal_dir(o.data_dir);
  ASSERT_TRUE(std::filesystem::remove(index_path(jdir, segments[1].id)));
  flip_byte(index_path(jdir, segments[2].id), 60);                              // bad checksum
  truncate_file(index_path(jdir, segments[3].id), kIndexHeaderBytes + 3);       // truncated
  auto [ids, calls] = j.scan_lane("queue:q", 7);
  EXPECT_EQ(ids, corr_range(1, 100, 2));
  const auto s = j.store().stats();
  EXPECT_EQ(s.scan_catalogs_from_frames, 4u) << "three unusable indexes and the open segment";
  EXPECT_EQ(s.scan_catalogs_from_index, segments.size() - 4);
}

TEST(LogStoreScan, ADamagedFrameWithoutAnIndexIsCorruptData) {
  TempDir dir;
  auto o = journal_options(dir.path(), 4096);
  ScanJournal j(o);
  for (int i = 0; i < 40; ++i) j.append({Record::added("queue:q", lane_message(i))});
  const auto segments = segments_of(o);
  ASSERT_GE(segments.size(), 3u);
  const auto jdir = journal_dir(o.data_dir);
  ASSERT_TRUE(std::filesystem::remove(index_path(jdir, segments[1].id)));
  flip_byte(segments[1].path, frame_offsets(segments[1].path).at(0) + 40);
  Location from;
  std::optional<Error> failed;
  for (int calls = 0; calls < 100 && !failed; ++calls) {
    auto r = j.scan("queue:q", from, 3);
    if (!r) {
      failed = r.error();
      break;
    }
    ASSERT_FALSE(r->exhausted) << "the damaged segment was never read";
    from = r->next;
  }
  ASSERT_TRUE(failed.has_value());
  EXPECT_EQ(failed->code, Errc::corrupt_data) << failed->to_string();
}

TEST(LogStoreScan, ADamagedFrameInAnIndexedSegmentIsSkippedAndCountedAndTheScanGoesOn) {
  TempDir dir;
  auto o = journal_options(dir.path(), 4096);
  ScanJournal j(o);
  for (int i = 0; i < 40; ++i) j.append({Record::added("queue:q", lane_message(i))});
  const auto segments = segments_of(o);
  ASSERT_GE(segments.size(), 3u);
  const auto jdir = journal_dir(o.data_dir);
  ASSERT_TRUE(std::filesystem::exists(index_path(jdir, segments[1].id))) << "the closed segment has its index";
  flip_byte(segments[1].path, frame_offsets(segments[1].path).at(0) + 40);  // one message per frame here
  std::vector<std::string> ids;
  std::uint64_t unreadable = 0;
  Location from;
  for (int calls = 0; calls < 1000; ++calls) {
    auto r = j.scan("queue:q", from, 3);
    ASSERT_TRUE(r) << r.error().to_string();
    for (const auto& m : r->messages) ids.push_back(m.message->correlation_id);
    unreadable += r->unreadable;
    from = r->next;
    if (r->exhausted) break;
  }
  EXPECT_EQ(unreadable, 1u);
  ASSERT_EQ(ids.size(), 39u) << "every message but the damaged one";
  auto all = corr_range(0, 40);
  auto sorted_ids = ids;
  std::sort(all.begin(), all.end());
  std::sort(sorted_ids.begin(), sorted_ids.end());
  std::vector<std::string> missing;
  std::set_difference(all.begin(), all.end(), sorted_ids.begin(), sorted_ids.end(), std::back_inserter(missing));
  ASSERT_EQ(missing.size(), 1u);
  std::vector<std::string> expected;
  for (const auto& c : corr_range(0, 40)) {
    if (c != missing[0]) expected.push_back(c);
  }
  EXPECT_EQ(ids, expected) << "the rest come in store order";
}

TEST(LogStoreScan, AScanStopsAfterABoundedNumberOfSegmentsOfOtherQueues) {
  TempDir dir;
  auto o = journal_options(dir.path(), 4096);
  ScanJournal j(o);
  j.append({Record::added("queue:rare", lane_message(0))});
  for (int i = 1; i < 200; ++i) j.append({Record::added("queue:busy", lane_message(i))});
  j.append({Record::added("queue:rare", lane_message(200))});
  ASSERT_GT(segments_of(o).size(), 2 * LogStore::kMaxSegmentsPerScan);
  const auto before = j.store().stats();
  auto r = j.scan("queue:rare", Location{}, 10);
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_EQ(r->messages.size(), 1u);
  EXPECT_FALSE(r->exhausted);
  const auto after = j.store().stats();
  EXPECT_LE(after.scan_catalogs_from_index + after.scan_catalogs_from_frames -
                (before.scan_catalogs_from_index + before.scan_catalogs_from_frames),
            LogStore::kMaxSegmentsPerScan);
  auto [ids, calls] = j.scan_lane("queue:rare", 10);
  EXPECT_EQ(ids, (std::vector<std::string>{"corr-0", "corr-200"}));
  EXPECT_GE(calls, 3);
}

TEST(LogStoreScan, AppendedButUnappliedRecordsAreNeverBehindNext) {
  TempDir dir;
  auto o = journal_options(dir.path(), 8192);
  ScanJournal j(o);
  // Appends racing scans: every message appended is found exactly once by a reader that
  // follows `next`, whatever the interleaving.
  Outcomes out;
  std::vector<std::string> found;
  Location from;
  constexpr int kMessages = 400;
  for (int i = 0; i < kMessages; ++i) {
    j.store().append({Record::added("queue:q", lane_message(i, 4, 100))}, out.callback());
    if (i % 3 == 0) {
      auto r = j.scan("queue:q", from, 50);
      ASSERT_TRUE(r) << r.error().to_string();
      for (const auto& s : r->messages) found.push_back(s.message->correlation_id);
      from = r->next;
    }
  }
  ASSERT_TRUE(out.wait_for(kMessages));
  for (;;) {
    auto r = j.scan("queue:q", from, 50);
    ASSERT_TRUE(r) << r.error().to_string();
    for (const auto& s : r->messages) found.push_back(s.message->correlation_id);
    from = r->next;
    if (r->exhausted) break;
  }
  EXPECT_EQ(found, corr_range(0, kMessages));
}

TEST(LogStoreScan, SegmentsAboveTwoGibibytesCannotBeScanned) {
  TempDir dir;
  auto o = journal_options(dir.path(), std::uint64_t{4} << 30);
  LogStore store(o);
  EXPECT_FALSE(store.can_scan());
  std::optional<Result<ScanResult>> got;
  store.scan("queue:q", 4, Location{}, 1, [&](Result<ScanResult> r) { got = std::move(r); });
  ASSERT_TRUE(got.has_value());
  ASSERT_FALSE(*got);
  EXPECT_EQ(got->error().code, Errc::unavailable);
}

TEST(CatalogCache, KeepsAFewSegmentsAndServesRepeatsFromMemory) {
  TempDir dir;
  auto o = journal_options(dir.path(), 4096);
  std::vector<Batch> batches;
  for (int i = 0; i < 120; ++i) batches.push_back({Record::added("queue:q", lane_message(i))});
  write_journal(o, std::move(batches));
  const auto segments = segments_of(o);
  ASSERT_GT(segments.size(), CatalogCache::kMaxSegments + 2);
  const auto jdir = journal_dir(o.data_dir);
  FrameReader frames(jdir);
  CatalogCache cache(jdir, logging::get("store"));
  std::size_t entries = 0;
  for (const auto& seg : segments) {
    auto c = cache.get(frames, seg.id, std::nullopt);
    ASSERT_TRUE(c) << c.error().to_string();
    EXPECT_EQ((*c)->segment_id(), seg.id);
    EXPECT_EQ((*c)->covered(), seg.size);
    entries += (*c)->lane("queue:q", 4).size();
    EXPECT_LE(cache.size(), CatalogCache::kMaxSegments);
  }
  EXPECT_EQ(entries, 120u);
  EXPECT_EQ(cache.hits(), 0u);
  // The last one is cached; the first was evicted and is loaded again.
  ASSERT_TRUE(cache.get(frames, segments.back().id, std::nullopt));
  EXPECT_EQ(cache.hits(), 1u);
  const auto loads = cache.loaded_from_index() + cache.loaded_from_frames();
  ASSERT_TRUE(cache.get(frames, segments.front().id, std::nullopt));
  EXPECT_EQ(cache.loaded_from_index() + cache.loaded_from_frames(), loads + 1);
  // A segment that is gone is not_found.
  std::filesystem::remove(segments[2].path);
  std::filesystem::remove(index_path(jdir, segments[2].id));
  frames.close_all();
  auto gone = cache.get(frames, segments[2].id, std::nullopt);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code, Errc::not_found);
}

TEST(CatalogCache, ExtendsTheOpenSegmentsCatalogAsItGrows) {
  TempDir dir;
  auto o = journal_options(dir.path());
  ScanJournal j(o);
  j.append({Record::added("queue:q", lane_message(1))});
  j.append({Record::added("queue:q", lane_message(2))});
  const auto jdir = journal_dir(o.data_dir);
  const auto seg = segments_of(o).at(0);
  const auto offsets = frame_offsets(seg.path);  // two frames and the end
  ASSERT_EQ(offsets.size(), 3u);
  FrameReader frames(jdir);
  CatalogCache cache(jdir, logging::get("store"));
  auto c = cache.get(frames, seg.id, offsets[1]);
  ASSERT_TRUE(c) << c.error().to_string();
  EXPECT_EQ((*c)->lane("queue:q", 4).size(), 1u);
  auto grown = cache.get(frames, seg.id, offsets[2]);
  ASSERT_TRUE(grown) << grown.error().to_string();
  EXPECT_EQ(grown->get(), c->get()) << "the same catalog, extended in place";
  EXPECT_EQ((*grown)->lane("queue:q", 4).size(), 2u);
  EXPECT_EQ(cache.loaded_from_frames(), 1u);
  // An end inside a frame is corrupt_data, not a guess.
  CatalogCache fresh(jdir, logging::get("store"));
  auto inside = fresh.get(frames, seg.id, offsets[1] + 5);
  ASSERT_FALSE(inside);
  EXPECT_EQ(inside.error().code, Errc::corrupt_data);
}

}  // namespace
}  // namespace carrier::store::log
