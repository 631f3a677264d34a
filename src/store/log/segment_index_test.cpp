// The checkpointed segment index: its codec, that the log store writes one when a segment
// closes, that recovery applies it instead of reading the segment, and that every index that
// does not match its segment exactly (missing, damaged, truncated, another version, stale, left
// as a temporary file by a crash) makes recovery read the segment instead, with the same result,
// and write the index again: the journal stays the source of truth.

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "store/binary_format.hpp"
#include "store/log/crc32c.hpp"
#include "store/log/journal_test_support.hpp"
#include "store/log/segment_index_codec.hpp"
#include "store/log/segment_index_file.hpp"

namespace carrier::store::log {
namespace {

using namespace log::testing;
using store::testing::expect_same_message;
using store::testing::TempDir;

Reopened reopen_with(const Options& options, const RecoverOptions& recover_options) {
  Reopened out;
  LogStore store(options);
  out.status = store.open();
  if (!out.status) return out;
  out.status = store.recover(recover_options, [&](RecoveredMessage m) { out.messages.push_back(std::move(m)); });
  out.report = store.recovery_report();
  store.close();
  return out;
}

// Recomputes both checksums of an index file's bytes after a test changed them.
void reseal(std::string& bytes) {
  binary::store_u32(bytes.data() + 40, crc32c(std::string_view(bytes).substr(kIndexHeaderBytes)));
  binary::store_u32(bytes.data() + 44, crc32c(std::string_view(bytes).substr(0, 44)));
}

void expect_same_recovery(const std::vector<RecoveredMessage>& got, const std::vector<RecoveredMessage>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE("message " + std::to_string(i));
    EXPECT_EQ(got[i].queue, want[i].queue);
    EXPECT_EQ(got[i].delivery_count, want[i].delivery_count);
    EXPECT_EQ(got[i].location, want[i].location);
    ASSERT_EQ(got[i].message == nullptr, want[i].message == nullptr);
    if (got[i].message) expect_same_message(*got[i].message, *want[i].message);
    EXPECT_EQ(got[i].summary.id, want[i].summary.id);
    EXPECT_EQ(got[i].summary.footprint, want[i].summary.footprint);
  }
}

TEST(SegmentIndexCodec, RoundTripsEveryRecordKind) {
  auto m1 = make_message(1), m2 = make_message(2);
  SegmentIndexBuilder b;
  b.reset(7);
  b.add_batch(32, {Record::added("queue:a", m1), Record::added("queue:b", m2)});
  b.add_batch(400, {Record::delivered("queue:a", m1->id, 3), Record::acked("queue:b", m2->id)});
  auto decoded = decode_segment_index(b.encode(900));
  ASSERT_TRUE(decoded) << decoded.error().to_string();
  EXPECT_EQ(decoded->segment_id, 7u);
  EXPECT_EQ(decoded->segment_bytes, 900u);
  EXPECT_EQ(decoded->queues, (std::vector<std::string>{"queue:a", "queue:b"}));
  ASSERT_EQ(decoded->records.size(), 4u);
  const auto& r = decoded->records;
  EXPECT_EQ(r[0].kind, RecordKind::message);
  EXPECT_EQ(r[0].offset, 32u);
  EXPECT_EQ(r[0].record, 0u);
  EXPECT_EQ(r[1].record, 1u);
  EXPECT_EQ(r[1].queue, 1u);
  EXPECT_EQ(r[0].summary.id, m1->id);
  EXPECT_EQ(r[0].summary.priority, m1->priority);
  EXPECT_EQ(r[0].summary.timestamp_ms, m1->timestamp_ms);
  EXPECT_EQ(r[1].summary.expires_ms, m2->expires_ms);
  EXPECT_EQ(r[0].summary.persistent, true);
  EXPECT_EQ(r[0].summary.footprint, m1->footprint());
  EXPECT_EQ(r[2].kind, RecordKind::delivered);
  EXPECT_EQ(r[2].delivery_count, 3u);
  EXPECT_EQ(r[2].offset, 400u);
  EXPECT_EQ(r[3].kind, RecordKind::ack);
  EXPECT_EQ(r[3].id, m2->id);
}

TEST(SegmentIndexCodec, ASummaryKeepsTheSpilledFlag) {
  auto spilled = std::make_shared<model::Message>(*make_message(1));
  spilled->persistent = false;
  spilled->spilled = true;
  SegmentIndexBuilder b;
  b.reset(3);
  b.add_batch(32, {Record::added("queue:a", spilled), Record::added("queue:a", make_message(2))});
  auto decoded = decode_segment_index(b.encode(500));
  ASSERT_TRUE(decoded) << decoded.error().to_string();
  ASSERT_EQ(decoded->records.size(), 2u);
  EXPECT_FALSE(decoded->records[0].summary.persistent);
  EXPECT_TRUE(decoded->records[0].summary.spilled);
  EXPECT_TRUE(decoded->records[1].summary.persistent);
  EXPECT_FALSE(decoded->records[1].summary.spilled);
}

TEST(SegmentIndexCodec, AcksAndDeliveriesKeepTheCopyTheyName) {
  auto m = make_message(1);
  const StoredRef at{Location{3, 64, 12}, 2, 777};
  SegmentIndexBuilder b;
  b.reset(9);
  b.add_batch(32, {Record::acked("queue:a", m->id, at), Record::delivered("queue:a", m->id, 4, at),
                   Record::acked("queue:a", m->id)});
  auto decoded = decode_segment_index(b.encode(100));
  ASSERT_TRUE(decoded) << decoded.error().to_string();
  ASSERT_EQ(decoded->records.size(), 3u);
  const auto& r = decoded->records;
  EXPECT_EQ(r[0].kind, RecordKind::ack);
  EXPECT_EQ(r[0].stored.location, at.location);
  EXPECT_EQ(r[0].stored.priority, 2);
  EXPECT_EQ(r[0].stored.footprint, 777u);
  EXPECT_EQ(r[1].kind, RecordKind::delivered);
  EXPECT_EQ(r[1].delivery_count, 4u);
  EXPECT_EQ(r[1].stored.location, at.location);
  EXPECT_EQ(r[2].kind, RecordKind::ack);
  EXPECT_FALSE(r[2].stored.known());
}

TEST(SegmentIndexCodec, RefusesDamageByName) {
  SegmentIndexBuilder b;
  b.reset(1);
  b.add_batch(32, {Record::added("queue:a", make_message(1))});
  const std::string good = b.encode(100);
  ASSERT_TRUE(decode_segment_index(good));

  for (std::size_t cut : {std::size_t(0), std::size_t(20), kIndexHeaderBytes, good.size() - 1}) {
    EXPECT_FALSE(decode_segment_index(std::string_view(good).substr(0, cut))) << "cut at " << cut;
  }
  for (std::size_t at = 0; at < good.size(); ++at) {
    std::string bad = good;
    bad[at] ^= 0x20;
    EXPECT_FALSE(decode_segment_index(bad)) << "flipped byte " << at;
  }
  std::string v2 = good;
  binary::store_u32(v2.data() + 8, 2);
  auto refused = decode_segment_index(v2);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().detail.find("unsupported index format version 2"), std::string::npos);

  // Well sealed but wrong inside: bytes after the last record, a record count the content
  // cannot hold.
  std::string trailing = good + "xx";
  reseal(trailing);
  EXPECT_FALSE(decode_segment_index(trailing));
  std::string counted = good;
  binary::store_u32(counted.data() + 36, UINT32_MAX);
  reseal(counted);
  EXPECT_FALSE(decode_segment_index(counted));
}

// An index file written by hand from docs/storage.md (also the fuzz seed
// fuzz/corpus/log_index/three_kinds): the decoder reads the documented layout.
TEST(SegmentIndexCodec, ReadsTheDocumentedV1Layout) {
  const std::string bytes = read_file(std::filesystem::path(CARRIER_STORE_TESTDATA) / "v1_index_three_kinds.idx");
  auto decoded = decode_segment_index(bytes);
  ASSERT_TRUE(decoded) << decoded.error().to_string();
  EXPECT_EQ(decoded->segment_id, 1u);
  EXPECT_EQ(decoded->segment_bytes, 700u);
  EXPECT_EQ(decoded->queues, (std::vector<std::string>{"queue:orders", "queue:audit"}));
  ASSERT_EQ(decoded->records.size(), 4u);
  const model::MessageId id{0x018f2c3a4b5c7001ULL, 0x8000000000000001ULL};
  EXPECT_EQ(decoded->records[0].id, id);
  EXPECT_EQ(decoded->records[0].summary.timestamp_ms, 1717000000001);
  EXPECT_EQ(decoded->records[0].summary.footprint, 300u);
  EXPECT_EQ(decoded->records[1].queue, 1u);
  EXPECT_EQ(decoded->records[1].record, 1u);
  EXPECT_EQ(decoded->records[1].summary.expires_ms, 1800000000000);
  EXPECT_EQ(decoded->records[2].kind, RecordKind::delivered);
  EXPECT_EQ(decoded->records[2].delivery_count, 2u);
  EXPECT_EQ(decoded->records[2].offset, 400u);
  EXPECT_EQ(decoded->records[3].kind, RecordKind::ack);
  EXPECT_EQ(decoded->records[3].offset, 460u);
}

class SegmentIndex : public ::testing::Test {
 protected:
  // Small segments: the journal below rolls every few batches.
  Options options() { return journal_options(dir_.path(), 700); }
  std::filesystem::path dir() { return journal_dir(dir_.path()); }

  // Two queues, a delivered record and acks that reach back into older segments.
  void write_mixed_journal(const Options& o) {
    std::vector<Batch> batches;
    for (int n = 1; n <= 12; ++n) batches.push_back(one_message(n, n % 3 == 0 ? "queue:paged" : "queue:q"));
    batches.push_back({Record::delivered("queue:q", make_message(1)->id, 2)});
    batches.push_back({Record::acked("queue:q", make_message(2)->id)});
    batches.push_back({Record::acked("queue:paged", make_message(3)->id)});
    for (int n = 13; n <= 16; ++n) batches.push_back(one_message(n));
    batches.push_back({Record::delivered("queue:paged", make_message(6)->id, 5)});
    write_journal(o, std::move(batches));
  }
  std::size_t index_files() {
    auto listed = list_index_files(dir());
    EXPECT_TRUE(listed);
    return listed ? listed->size() : 0;
  }
  void remove_indexes() {
    for (const auto& s : segments_of(options())) std::filesystem::remove(index_path(dir(), s.id));
  }

  TempDir dir_;
};

TEST_F(SegmentIndex, TheStoreWritesOneForEveryClosedSegmentAndNoneForTheTail) {
  auto o = options();
  write_mixed_journal(o);
  const auto segs = segments_of(o);
  ASSERT_GE(segs.size(), 4u);
  for (std::size_t i = 0; i + 1 < segs.size(); ++i) {
    auto index = load_index_file(dir(), segs[i].id, segs[i].size);
    ASSERT_TRUE(index) << index.error().to_string();
    // One entry per record of the segment, at the frames' offsets.
    const auto offsets = frame_offsets(segs[i].path);
    std::size_t records = 0;
    auto reader = SegmentReader::open(segs[i].path);
    ASSERT_TRUE(reader && reader->read_header());
    for (auto item = reader->next(); item.kind == SegmentReader::Item::Kind::batch; item = reader->next()) {
      records += item.batch.size();
    }
    EXPECT_EQ(index->records.size(), records);
    ASSERT_FALSE(index->records.empty());
    EXPECT_EQ(index->records.front().offset, offsets.front());
  }
  EXPECT_FALSE(std::filesystem::exists(index_path(dir(), segs.back().id)));
}

TEST_F(SegmentIndex, RecoveryAppliesTheIndexInsteadOfReadingClosedSegments) {
  auto o = options();
  write_mixed_journal(o);
  const auto segs = segments_of(o);
  auto indexed = reopen(o);
  ASSERT_TRUE(indexed.status) << indexed.status.error().to_string();
  EXPECT_EQ(indexed.report.segments_indexed, segs.size() - 1);
  EXPECT_EQ(indexed.report.segments_read, 1u);  // the tail, always
  EXPECT_GT(indexed.report.messages_read_back, 0u);

  remove_indexes();
  auto read = reopen(o);
  ASSERT_TRUE(read.status);
  EXPECT_EQ(read.report.segments_indexed, 0u);
  EXPECT_EQ(read.report.segments_read, segs.size());
  EXPECT_EQ(read.report.indexes_written, segs.size() - 1);
  expect_same_recovery(indexed.messages, read.messages);
  // And the delivered counts and acks that reach across segments came through.
  EXPECT_EQ(correlation_ids(read.messages),
            (std::vector<std::string>{"corr-1", "corr-4", "corr-5", "corr-6", "corr-7", "corr-8", "corr-9", "corr-10",
                                      "corr-11", "corr-12", "corr-13", "corr-14", "corr-15", "corr-16"}));
  EXPECT_EQ(read.messages[0].delivery_count, 2u);
  EXPECT_EQ(read.messages[3].delivery_count, 5u);

  // The rewritten indexes are used again.
  auto again = reopen(o);
  EXPECT_EQ(again.report.segments_indexed, segs.size() - 1);
  expect_same_recovery(again.messages, read.messages);
}

TEST_F(SegmentIndex, SummaryOnlyQueuesComeBackAsSummariesThatReadBack) {
  auto o = options();
  write_mixed_journal(o);
  RecoverOptions paged;
  paged.summary_only = [](std::string_view q) { return q == "queue:paged"; };
  for (bool with_index : {true, false}) {
    SCOPED_TRACE(with_index ? "from the index" : "from the segments");
    if (!with_index) remove_indexes();
    auto r = reopen_with(o, paged);
    ASSERT_TRUE(r.status) << r.status.error().to_string();
    std::size_t summaries = 0;
    for (const auto& m : r.messages) {
      if (m.queue != "queue:paged") {
        ASSERT_NE(m.message, nullptr) << m.queue;
        continue;
      }
      ASSERT_EQ(m.message, nullptr);
      ++summaries;
      const std::uint64_t n = m.summary.id.lo & 0xff;  // make_message(n)'s id
      const auto original = make_message(n);
      EXPECT_EQ(m.summary.id, original->id);
      EXPECT_EQ(m.summary.priority, original->priority);
      EXPECT_EQ(m.summary.timestamp_ms, original->timestamp_ms);
      EXPECT_EQ(m.summary.expires_ms, original->expires_ms);
      EXPECT_EQ(m.summary.deliver_at_ms, original->deliver_at_ms);
      EXPECT_TRUE(m.summary.persistent);
      EXPECT_EQ(m.summary.footprint, original->footprint());
      EXPECT_TRUE(m.location.valid());
    }
    EXPECT_EQ(summaries, 3u);  // 6, 9, 12 (3 was acked)
    EXPECT_EQ(r.report.summaries, 3u);
  }

  // A summary's location reads the message back.
  LogStore store(o);
  ASSERT_TRUE(store.open());
  std::vector<RecoveredMessage> got;
  ASSERT_TRUE(store.recover(paged, [&](RecoveredMessage m) {
    if (!m.message) got.push_back(std::move(m));
  }));
  store.start();
  std::vector<ReadItem> items;
  for (const auto& m : got) items.push_back(ReadItem{m.summary.id, m.location});
  std::mutex mu;
  std::condition_variable cv;
  std::vector<Result<model::MessagePtr>> answers;
  bool done = false;
  store.read("queue:paged", items, [&](std::vector<Result<model::MessagePtr>> a) {
    std::lock_guard lock(mu);
    answers = std::move(a);
    done = true;
    cv.notify_all();
  });
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return done; }));
  }
  ASSERT_EQ(answers.size(), got.size());
  for (std::size_t i = 0; i < answers.size(); ++i) {
    ASSERT_TRUE(answers[i]) << answers[i].error().to_string();
    EXPECT_EQ((*answers[i])->id, got[i].summary.id);
  }
  store.close();
}

// Every way an index can fail to match its segment: the segment is read instead, with the same
// result, and the index is written again.
TEST_F(SegmentIndex, AnUnusableIndexFallsBackToTheSegmentAndIsRewritten) {
  auto o = options();
  write_mixed_journal(o);
  const auto segs = segments_of(o);
  const auto victim = index_path(dir(), segs[1].id);
  const std::string good = read_file(victim);
  remove_indexes();
  const auto reference = reopen(o);  // from the segments alone
  ASSERT_TRUE(reference.status);

  struct Damage {
    const char* name;
    std::function<void()> apply;
    bool unusable;  // counted as present but unusable (a missing one is not)
  };
  const std::string other_index = read_file(index_path(dir(), segs[2].id));
  std::vector<Damage> damages = {
      {"missing", [&] { std::filesystem::remove(victim); }, false},
      {"flipped content byte", [&] { std::string b = good; b[b.size() - 3] ^= 1; write_file(victim, b); }, true},
      {"flipped header byte", [&] { std::string b = good; b[20] ^= 1; write_file(victim, b); }, true},
      {"truncated", [&] { write_file(victim, good.substr(0, good.size() / 2)); }, true},
      {"empty", [&] { write_file(victim, ""); }, true},
      {"another version", [&] { std::string b = good; binary::store_u32(b.data() + 8, 9); reseal(b); write_file(victim, b); }, true},
      {"another segment's", [&] { write_file(victim, other_index); }, true},
      {"far larger than its segment", [&] { write_file(victim, good + std::string(4 * segs[1].size + 8192, 'x')); }, true},
      {"stale (covers another size)", [&] { std::string b = good; binary::store_u64(b.data() + 24, segs[1].size - 10); reseal(b); write_file(victim, b); }, true},
  };
  for (const auto& d : damages) {
    SCOPED_TRACE(d.name);
    d.apply();
    auto r = reopen(o);
    ASSERT_TRUE(r.status) << r.status.error().to_string();
    EXPECT_EQ(r.report.segments_read, 2u);  // the damaged one and the tail
    EXPECT_EQ(r.report.segments_indexed, segs.size() - 2);
    EXPECT_EQ(r.report.indexes_unusable, d.unusable ? 1u : 0u);
    EXPECT_EQ(r.report.indexes_written, 1u);
    expect_same_recovery(r.messages, reference.messages);
    EXPECT_EQ(read_file(victim), good) << "rewritten as the writer wrote it";
  }
}

// A crash after the index was written under its temporary name but before the rename: the
// temporary file is removed, never read, and the segment is read instead.
TEST_F(SegmentIndex, ACrashBeforeTheRenameLeavesATemporaryFileThatIsIgnored) {
  auto o = options();
  write_mixed_journal(o);
  const auto segs = segments_of(o);
  const auto path = index_path(dir(), segs[0].id);
  const auto temp = index_temp_path(dir(), segs[0].id);
  // Its content even claims to be valid: it must still not be used.
  std::filesystem::rename(path, temp);
  auto r = reopen(o);
  ASSERT_TRUE(r.status) << r.status.error().to_string();
  EXPECT_EQ(r.report.segments_read, 2u);
  EXPECT_FALSE(std::filesystem::exists(temp));
  EXPECT_TRUE(load_index_file(dir(), segs[0].id, segs[0].size));
  remove_indexes();
  expect_same_recovery(r.messages, reopen(o).messages);
}

TEST_F(SegmentIndex, ReclaimedSegmentsTakeTheirIndexWithThemAndStrayOnesAreRemoved) {
  auto o = options();
  std::vector<Batch> batches;
  for (int n = 1; n <= 10; ++n) batches.push_back(one_message(n));
  for (int n = 1; n <= 10; ++n) batches.push_back({Record::acked("queue:q", make_message(n)->id)});
  for (int n = 11; n <= 20; ++n) batches.push_back(one_message(n));
  write_journal(o, std::move(batches));
  auto segs = segments_of(o);
  auto listed = list_index_files(dir());
  ASSERT_TRUE(listed);
  for (const auto& f : *listed) {
    const bool present = std::any_of(segs.begin(), segs.end(), [&](const SegmentFile& s) { return s.id == f.id; });
    EXPECT_TRUE(present) << f.path << " outlived its segment";
  }
  EXPECT_EQ(listed->size(), segs.size() - 1);

  // An index whose segment is gone (a crash between the two unlinks) is removed at start.
  write_file(index_path(dir(), segs.front().id - 1 == 0 ? 999 : segs.front().id - 1), "stray");
  const std::size_t before = index_files();
  auto r = reopen(o);
  ASSERT_TRUE(r.status);
  EXPECT_EQ(index_files(), before - 1);
  EXPECT_EQ(r.messages.size(), 10u);
}

// A damaged or unknown-version segment header is noticed even when an index would cover the
// segment: the segment is read, and its damage handled as without an index.
TEST_F(SegmentIndex, TheSegmentHeaderIsStillChecked) {
  auto o = options();
  write_mixed_journal(o);
  const auto segs = segments_of(o);
  flip_byte(segs[1].path, 20);
  auto r = reopen(o);
  ASSERT_FALSE(r.status);
  EXPECT_EQ(r.status.error().code, Errc::corrupt_data);
}

// Appending after a restart continues the tail's index: when the tail closes later, its index
// covers the records from before the restart too.
TEST_F(SegmentIndex, TheTailsIndexSurvivesARestartAndCoversEverythingInIt) {
  auto o = options();
  write_journal(o, {one_message(1)});
  write_journal(o, {one_message(2), one_message(3), one_message(4), one_message(5), one_message(6)});
  const auto segs = segments_of(o);
  ASSERT_GE(segs.size(), 2u);
  auto first = load_index_file(dir(), segs[0].id, segs[0].size);
  ASSERT_TRUE(first) << first.error().to_string();
  ASSERT_FALSE(first->records.empty());
  EXPECT_EQ(first->records.front().id, make_message(1)->id);
  auto indexed = reopen(o);
  remove_indexes();
  expect_same_recovery(indexed.messages, reopen(o).messages);
}

// Mostly acked traffic: far more dead records than live ones, so the replay squeezes its dead
// entries out as it goes; the live ones keep their order, counts and locations.
TEST_F(SegmentIndex, ReplayOfMostlyAckedTrafficKeepsTheLiveOnesInOrder) {
  auto o = journal_options(dir_.path(), 1 << 20);
  std::vector<Batch> batches;
  std::vector<std::string> live;
  for (std::uint64_t b = 0; b < 80; ++b) {
    Batch batch;
    for (std::uint64_t k = 0; k < 1000; ++k) batch.push_back(Record::added("queue:q", make_message(b * 1000 + k)));
    for (std::uint64_t k = 0; k < 1000; ++k) {
      if (k != 500) batch.push_back(Record::acked("queue:q", make_message(b * 1000 + k)->id));
    }
    live.push_back("corr-" + std::to_string(b * 1000 + 500));
    batches.push_back(std::move(batch));
  }
  batches.push_back({Record::delivered("queue:q", make_message(500)->id, 3)});
  write_journal(o, std::move(batches));
  ASSERT_GT(segments_of(o).size(), 3u);
  auto indexed = reopen(o);
  ASSERT_TRUE(indexed.status) << indexed.status.error().to_string();
  EXPECT_GT(indexed.report.segments_indexed, 0u);
  EXPECT_EQ(correlation_ids(indexed.messages), live);
  EXPECT_EQ(indexed.messages.at(0).delivery_count, 3u);
  remove_indexes();
  auto read = reopen(o);
  ASSERT_TRUE(read.status);
  expect_same_recovery(indexed.messages, read.messages);
}

// A closed segment with one live message among many acked ones: that message is read back with
// a pread of its frame (not the whole segment), and damage in that frame is still caught.
TEST_F(SegmentIndex, AFewLiveMessagesInABigSegmentAreReadBackFrameByFrame) {
  auto o = journal_options(dir_.path(), 256 << 10);
  std::vector<Batch> batches;
  for (std::uint64_t n = 0; n < 400; ++n) batches.push_back({Record::added("queue:q", make_message(n, std::string(1000, 'p')))});
  for (std::uint64_t n = 0; n < 400; ++n) {
    if (n != 7) batches.push_back({Record::acked("queue:q", make_message(n)->id)});
  }
  write_journal(o, std::move(batches));
  const auto segs = segments_of(o);
  ASSERT_GE(segs.size(), 2u);
  auto r = reopen(o);
  ASSERT_TRUE(r.status) << r.status.error().to_string();
  ASSERT_EQ(correlation_ids(r.messages), (std::vector<std::string>{"corr-7"}));
  EXPECT_EQ(r.report.messages_read_back, 1u);
  EXPECT_EQ(*r.messages[0].message->body, std::string(1000, 'p'));
  // Damage the live message's frame: found at the read-back, strict fails naming the file.
  const auto offsets = frame_offsets(segs[0].path);
  flip_byte(segs[0].path, offsets[7] + 100);
  r = reopen(o);
  ASSERT_FALSE(r.status);
  EXPECT_EQ(r.status.error().code, Errc::corrupt_data);
  EXPECT_NE(r.status.error().detail.find(segs[0].path.filename().string()), std::string::npos) << r.status.error().detail;
  o.recovery = RecoveryMode::skip_corrupt;
  r = reopen(o);
  ASSERT_TRUE(r.status);
  EXPECT_TRUE(r.messages.empty());
  EXPECT_EQ(r.report.skipped_messages, 1u);
}

}  // namespace
}  // namespace carrier::store::log
