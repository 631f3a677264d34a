#include "store/log/recovery.hpp"

#include <gtest/gtest.h>

#include "store/log/journal_test_support.hpp"

namespace carrier::store::log {
namespace {

using namespace log::testing;
using store::testing::TempDir;

class Recovery : public ::testing::Test {
 protected:
  Options options(std::uint64_t segment_bytes = 64ull << 20) {
    return journal_options(dir_.path(), segment_bytes);
  }
  std::filesystem::path only_segment(const Options& o) {
    auto segs = segments_of(o);
    EXPECT_EQ(segs.size(), 1u);
    return segs.empty() ? std::filesystem::path() : segs.back().path;
  }
  TempDir dir_;
};

TEST_F(Recovery, TornTailIsCutAndTheJournalStaysUsable) {
  auto o = options();
  write_journal(o, {one_message(1), one_message(2), one_message(3)});
  const auto file = only_segment(o);
  const auto offsets = frame_offsets(file);
  ASSERT_EQ(offsets.size(), 4u);
  truncate_file(file, offsets[3] - 5);  // the last frame lost its last five bytes

  auto r = reopen(o);
  ASSERT_TRUE(r.status) << r.status.error().to_string();
  EXPECT_EQ(correlation_ids(r.messages), (std::vector<std::string>{"corr-1", "corr-2"}));
  EXPECT_EQ(r.report.truncated_bytes, offsets[3] - 5 - offsets[2]);
  EXPECT_EQ(std::filesystem::file_size(file), offsets[2]);

  write_journal(o, {one_message(4)});
  EXPECT_EQ(correlation_ids(reopen(o).messages),
            (std::vector<std::string>{"corr-1", "corr-2", "corr-4"}));
}

TEST_F(Recovery, TornBatchIsAllOrNothing) {
  auto o = options();
  write_journal(o, {one_message(1),
                    {Record::added("queue:q", make_message(2)), Record::added("queue:q", make_message(3)),
                     Record::added("queue:r", make_message(4))}});
  const auto file = only_segment(o);
  const auto offsets = frame_offsets(file);
  // Cut anywhere inside the three-record batch: none of it may come back.
  for (std::uint64_t cut : {offsets[1] + 1, offsets[1] + 30, (offsets[1] + offsets[2]) / 2, offsets[2] - 1}) {
    const std::string whole = read_file(file);
    truncate_file(file, cut);
    auto r = reopen(o);
    ASSERT_TRUE(r.status);
    EXPECT_EQ(correlation_ids(r.messages), (std::vector<std::string>{"corr-1"})) << cut;
    write_file(file, whole);
  }
}

TEST_F(Recovery, ChecksumFailureInTheLastFrameIsATornTail) {
  auto o = options();
  write_journal(o, {one_message(1), one_message(2)});
  const auto file = only_segment(o);
  const auto offsets = frame_offsets(file);
  flip_byte(file, offsets[2] - 2);
  auto r = reopen(o);
  ASSERT_TRUE(r.status) << r.status.error().to_string();
  EXPECT_EQ(correlation_ids(r.messages), (std::vector<std::string>{"corr-1"}));
  EXPECT_GT(r.report.truncated_bytes, 0u);
}

TEST_F(Recovery, ZeroFilledTailIsATornTail) {
  auto o = options();
  write_journal(o, {one_message(1)});
  const auto file = only_segment(o);
  write_file(file, read_file(file) + std::string(8192, '\0'));
  auto r = reopen(o);
  ASSERT_TRUE(r.status) << r.status.error().to_string();
  EXPECT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(r.report.truncated_bytes, 8192u);
}

TEST_F(Recovery, ChecksumFailureInTheMiddleStopsStartNamingFileAndOffset) {
  auto o = options();
  write_journal(o, {one_message(1), one_message(2), one_message(3)});
  const auto file = only_segment(o);
  const auto offsets = frame_offsets(file);
  flip_byte(file, offsets[1] + kBatchHeaderBytes + 10);
  auto r = reopen(o);
  ASSERT_FALSE(r.status);
  EXPECT_EQ(r.status.error().code, Errc::corrupt_data);
  const std::string& detail = r.status.error().detail;
  EXPECT_NE(detail.find(file.string()), std::string::npos) << detail;
  EXPECT_NE(detail.find("offset " + std::to_string(offsets[1])), std::string::npos) << detail;
  // Nothing was cut: the operator decides.
  EXPECT_EQ(std::filesystem::file_size(file), offsets[3]);
}

TEST_F(Recovery, SkipCorruptDropsOnlyTheDamagedBatch) {
  auto o = options();
  o.recovery = RecoveryMode::skip_corrupt;
  write_journal(o, {one_message(1), one_message(2), one_message(3)});
  const auto file = only_segment(o);
  const auto offsets = frame_offsets(file);
  flip_byte(file, offsets[1] + 2);  // the header this time: its own checksum catches it
  auto r = reopen(o);
  ASSERT_TRUE(r.status) << r.status.error().to_string();
  EXPECT_EQ(correlation_ids(r.messages), (std::vector<std::string>{"corr-1", "corr-3"}));
  EXPECT_EQ(r.report.skipped_batches, 1u);
  EXPECT_EQ(r.report.skipped_bytes, offsets[2] - offsets[1]);
  // Appending after a skip still works and keeps order.
  write_journal(o, {one_message(4)});
  EXPECT_EQ(correlation_ids(reopen(o).messages),
            (std::vector<std::string>{"corr-1", "corr-3", "corr-4"}));
}

// A skipped damaged stretch shifts the ordinals of the records after it in its segment, so an
// ack naming its copy by position would miss it: skip_corrupt finds the copy by queue and id.
TEST_F(Recovery, SkipCorruptFindsAnAckedCopyByIdWhenDamageShiftedItsPosition) {
  auto o = options();
  o.recovery = RecoveryMode::skip_corrupt;
  auto second = make_message(2);
  write_journal(o, {one_message(1), {Record::added("queue:q", second)}, one_message(3)});
  const auto file = only_segment(o);
  const auto offsets = frame_offsets(file);
  // The ack of corr-2 names where it was written: the segment's second record.
  const StoredRef at{Location{1, static_cast<std::uint32_t>(offsets[1]), 1}, second->priority,
                     static_cast<std::uint32_t>(second->footprint())};
  write_journal(o, {{Record::acked("queue:q", second->id, at)}});
  flip_byte(file, offsets[0] + kBatchHeaderBytes + 3);  // corr-1's payload
  auto r = reopen(o);
  ASSERT_TRUE(r.status) << r.status.error().to_string();
  EXPECT_EQ(correlation_ids(r.messages), (std::vector<std::string>{"corr-3"}));
  EXPECT_EQ(r.report.skipped_batches, 1u);
}

TEST_F(Recovery, DamageAtTheEndOfAnOlderSegmentIsCorruption) {
  auto o = options(200);  // a segment per message
  write_journal(o, {one_message(1), one_message(2), one_message(3)});
  auto segs = segments_of(o);
  ASSERT_EQ(segs.size(), 3u);
  truncate_file(segs[0].path, segs[0].size - 3);
  auto r = reopen(o);
  ASSERT_FALSE(r.status);
  EXPECT_EQ(r.status.error().code, Errc::corrupt_data);
  EXPECT_NE(r.status.error().detail.find(segs[0].path.string()), std::string::npos);

  o.recovery = RecoveryMode::skip_corrupt;
  r = reopen(o);
  ASSERT_TRUE(r.status);
  EXPECT_EQ(correlation_ids(r.messages), (std::vector<std::string>{"corr-2", "corr-3"}));
}

TEST_F(Recovery, TornHeaderOfANewLastSegmentIsRemoved) {
  auto o = options();
  write_journal(o, {one_message(1)});
  const auto stub = segment_path(journal_dir(o.data_dir), 2);
  write_file(stub, encode_segment_header(2).substr(0, 11));
  auto r = reopen(o);
  ASSERT_TRUE(r.status) << r.status.error().to_string();
  EXPECT_EQ(r.messages.size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(stub));
  write_journal(o, {one_message(2)});
  EXPECT_EQ(reopen(o).messages.size(), 2u);
}

TEST_F(Recovery, UnknownFormatVersionIsRefusedInEveryMode) {
  auto o = options();
  write_journal(o, {one_message(1)});
  const auto file = only_segment(o);
  std::string bytes = read_file(file);
  bytes[8] = 2;  // version field, little-endian
  write_file(file, bytes);
  for (auto mode : {RecoveryMode::strict, RecoveryMode::skip_corrupt}) {
    o.recovery = mode;
    auto r = reopen(o);
    ASSERT_FALSE(r.status);
    EXPECT_EQ(r.status.error().code, Errc::corrupt_data);
    EXPECT_NE(r.status.error().detail.find("version 2"), std::string::npos)
        << r.status.error().detail;
  }
}

TEST_F(Recovery, CorruptHeaderOfAnOlderSegment) {
  auto o = options(200);
  write_journal(o, {one_message(1), one_message(2)});
  auto segs = segments_of(o);
  ASSERT_EQ(segs.size(), 2u);
  flip_byte(segs[0].path, 20);
  auto r = reopen(o);
  ASSERT_FALSE(r.status);
  EXPECT_EQ(r.status.error().code, Errc::corrupt_data);
  o.recovery = RecoveryMode::skip_corrupt;
  r = reopen(o);
  ASSERT_TRUE(r.status);
  EXPECT_EQ(correlation_ids(r.messages), (std::vector<std::string>{"corr-2"}));
  EXPECT_EQ(r.report.skipped_segments, 1u);
}

TEST_F(Recovery, OtherFilesInTheDirectoryAreIgnored) {
  auto o = options();
  write_journal(o, {one_message(1)});
  write_file(journal_dir(o.data_dir) / "notes.txt", "hello");
  write_file(journal_dir(o.data_dir) / "123.log", "short name: not a segment");
  auto r = reopen(o);
  ASSERT_TRUE(r.status) << r.status.error().to_string();
  EXPECT_EQ(r.messages.size(), 1u);
}

}  // namespace
}  // namespace carrier::store::log
