#include "store/log/frame_reader.hpp"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "store/log/journal_test_support.hpp"
#include "store/log/log_store.hpp"

namespace carrier::store::log {
namespace {

using namespace log::testing;
using store::testing::TempDir;

// A journal of three batches (the second holding two messages), written and closed.
struct Written {
  Options options;
  std::filesystem::path segment;
  std::vector<std::uint64_t> offsets;  // of the three frames (and the end)
};

Written write_three(const std::filesystem::path& dir) {
  Written w{journal_options(dir), {}, {}};
  write_journal(w.options, {one_message(1), {Record::added("queue:q", make_message(2)), Record::added("queue:q", make_message(3))},
                            one_message(4)});
  w.segment = segment_path(journal_dir(dir), 1);
  w.offsets = frame_offsets(w.segment);
  return w;
}

TEST(FrameReader, ReadsTheFrameAtAnOffset) {
  TempDir dir;
  auto w = write_three(dir.path());
  ASSERT_EQ(w.offsets.size(), 4u);
  FrameReader reader(journal_dir(dir.path()));
  auto batch = reader.read_batch(1, w.offsets[1]);
  ASSERT_TRUE(batch) << batch.error().to_string();
  ASSERT_EQ(batch->size(), 2u);
  EXPECT_EQ((*batch)[1].message->correlation_id, "corr-3");
  batch = reader.read_batch(1, w.offsets[2]);
  ASSERT_TRUE(batch);
  EXPECT_EQ((*batch)[0].message->correlation_id, "corr-4");
}

TEST(FrameReader, BadLocationsAreCleanErrors) {
  TempDir dir;
  auto w = write_three(dir.path());
  FrameReader reader(journal_dir(dir.path()));
  // No such segment.
  auto got = reader.read_batch(9, w.offsets[0]);
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code, Errc::not_found);
  // Inside the segment header, in the middle of a frame, at and past the end of the file.
  for (std::uint64_t offset : {std::uint64_t{3}, w.offsets[0] + 5, w.offsets[3], w.offsets[3] + 1000}) {
    got = reader.read_batch(1, offset);
    ASSERT_FALSE(got) << offset;
    EXPECT_EQ(got.error().code, Errc::corrupt_data) << offset << ": " << got.error().to_string();
    EXPECT_NE(got.error().detail.find(w.segment.filename().string()), std::string::npos) << got.error().detail;
  }
}

TEST(FrameReader, ADamagedFrameIsCorruptDataAndItsNeighboursStillRead) {
  TempDir dir;
  auto w = write_three(dir.path());
  flip_byte(w.segment, w.offsets[1] + kBatchHeaderBytes + 10);  // in the second frame's payload
  FrameReader reader(journal_dir(dir.path()));
  auto got = reader.read_batch(1, w.offsets[1]);
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code, Errc::corrupt_data) << got.error().to_string();
  EXPECT_TRUE(reader.read_batch(1, w.offsets[0]));
  EXPECT_TRUE(reader.read_batch(1, w.offsets[2]));
}

TEST(FrameReader, ATruncatedFrameIsCorruptData) {
  TempDir dir;
  auto w = write_three(dir.path());
  truncate_file(w.segment, w.offsets[2] + kBatchHeaderBytes + 3);
  FrameReader reader(journal_dir(dir.path()));
  auto got = reader.read_batch(1, w.offsets[2]);
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code, Errc::corrupt_data) << got.error().to_string();
}

TEST(FrameReader, FramesBackToBackComeFromOneRead) {
  TempDir dir;
  auto w = write_three(dir.path());
  FrameReader reader(journal_dir(dir.path()));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(reader.read_batch(1, w.offsets[i])) << i;
  EXPECT_EQ(reader.preads(), 1u);
  EXPECT_EQ(reader.window_hits(), 2u);
  // close_all() drops the window with the descriptors.
  reader.close_all();
  ASSERT_TRUE(reader.read_batch(1, w.offsets[1]));
  EXPECT_EQ(reader.preads(), 2u);
  // Before where the window starts: the file again.
  ASSERT_TRUE(reader.read_batch(1, w.offsets[0]));
  EXPECT_EQ(reader.preads(), 3u);
  EXPECT_EQ(reader.window_hits(), 2u);
}

// The window may hold the first bytes of a frame the writer was still writing: that frame is
// read from the file once it is asked for, never decoded from what the window kept.
TEST(FrameReader, AFrameHalfWrittenWhenTheWindowWasReadComesFromTheFile) {
  TempDir dir;
  auto w = write_three(dir.path());
  const std::string whole = read_file(w.segment);
  truncate_file(w.segment, w.offsets[2] + kBatchHeaderBytes + 3);
  FrameReader reader(journal_dir(dir.path()));
  ASSERT_TRUE(reader.read_batch(1, w.offsets[1]));
  write_file(w.segment, whole);  // the writer finishes the third frame
  auto third = reader.read_batch(1, w.offsets[2]);
  ASSERT_TRUE(third) << third.error().to_string();
  EXPECT_EQ((*third)[0].message->correlation_id, "corr-4");
  EXPECT_EQ(reader.window_hits(), 0u);
  EXPECT_EQ(reader.preads(), 2u);
}

// Through the store: damage found at read time fails only the items in that frame, with
// corrupt_data; a record index past its batch is not_found.
TEST(LogStoreRead, DamageFailsOnlyItsItems) {
  TempDir dir;
  auto w = write_three(dir.path());
  LogStore store(w.options);
  std::vector<RecoveredMessage> live;
  ASSERT_TRUE(store.open());
  ASSERT_TRUE(store.recover([&](RecoveredMessage m) { live.push_back(std::move(m)); }));
  store.start();
  ASSERT_EQ(live.size(), 4u);
  flip_byte(w.segment, w.offsets[1] + kBatchHeaderBytes + 10);  // corr-2 and corr-3's frame
  std::vector<ReadItem> items;
  for (const auto& m : live) items.push_back({m.message->id, m.location});
  items[3].location.record = 7;
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<Result<model::MessagePtr>> answers;
  bool done = false;
  store.read("queue:q", items, [&](std::vector<Result<model::MessagePtr>> a) {
    std::lock_guard lock(mutex);
    answers = std::move(a);
    done = true;
    cv.notify_all();
  });
  std::unique_lock lock(mutex);
  ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return done; }));
  ASSERT_EQ(answers.size(), 4u);
  ASSERT_TRUE(answers[0]) << answers[0].error().to_string();
  EXPECT_EQ((*answers[0])->correlation_id, "corr-1");
  for (int i : {1, 2}) {
    ASSERT_FALSE(answers[i]);
    EXPECT_EQ(answers[i].error().code, Errc::corrupt_data) << answers[i].error().to_string();
  }
  ASSERT_FALSE(answers[3]);
  EXPECT_EQ(answers[3].error().code, Errc::not_found) << answers[3].error().to_string();
}

}  // namespace
}  // namespace carrier::store::log
