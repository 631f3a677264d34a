// Golden journal files (Mosquitto's files/persist_read/): journals as a build of format
// version 1 wrote them, including damaged ones, kept in testdata/ so a change to the format or
// to the recovery rules shows up as a failing test rather than as lost messages in the field.
//
// To rewrite them after a deliberate change (a new format version gets new files; old ones
// stay and must keep passing): CARRIER_REGENERATE_GOLDEN=1 store_test --gtest_filter='Golden*'

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

#include "store/binary_format.hpp"
#include "store/log/crc32c.hpp"
#include "store/log/journal_test_support.hpp"
#include "store/log/record_codec.hpp"

namespace carrier::store::log {
namespace {

using namespace log::testing;
using store::testing::TempDir;

const std::filesystem::path kTestdata = CARRIER_STORE_TESTDATA;

// The messages in the golden journals. Fixed fields only: no clocks, no randomness.
model::MessagePtr golden_message(int n) {
  auto m = std::make_shared<model::Message>();
  m->id = model::MessageId{0x018f2c3a4b5c7000ULL + static_cast<std::uint64_t>(n), 0x8000000000000000ULL + static_cast<std::uint64_t>(n)};
  m->destination = model::Destination{model::DestinationKind::queue, "orders"};
  m->priority = 4;
  m->timestamp_ms = 1717000000000 + n;
  m->persistent = true;
  m->correlation_id = "golden-" + std::to_string(n);
  m->content_type = "text/plain";
  m->properties = {{"n", std::to_string(n)}};
  if (n != 3) m->body = std::make_shared<const std::string>("golden body " + std::to_string(n));
  return m;
}

std::string frame(const Batch& b) {
  std::string out;
  EXPECT_TRUE(encode_batch(b, out));
  return out;
}

Batch batch_a() {
  return {Record::added("queue:orders", golden_message(1)),
          Record::added("queue:orders", golden_message(2)),
          Record::added("queue:audit", golden_message(1))};
}
Batch batch_b() { return {Record::delivered("queue:orders", golden_message(1)->id, 2)}; }
Batch batch_c() { return {Record::acked("queue:orders", golden_message(2)->id)}; }
Batch batch_d() {
  return {Record::added("queue:orders", golden_message(3)),
          Record::delivered("queue:orders", golden_message(1)->id, 3)};
}
Batch batch_e() { return {Record::added("queue:orders", golden_message(4))}; }

using Files = std::vector<std::pair<std::string, std::string>>;  // name under journal/, bytes

// Each case's files, as this build encodes them.
std::map<std::string, Files> golden_cases() {
  std::map<std::string, Files> cases;
  const std::string seg1 = "00000000000000000001.log";
  const std::string seg2 = "00000000000000000002.log";

  cases["v1_valid"] = {{seg1, encode_segment_header(1) + frame(batch_a()) + frame(batch_b())},
                       {seg2, encode_segment_header(2) + frame(batch_c()) + frame(batch_d())}};

  const std::string torn = frame(batch_c());
  cases["v1_torn_tail"] = {{seg1, encode_segment_header(1) + frame(batch_a()) + frame(batch_b()) +
                                      torn.substr(0, torn.size() / 2)}};

  std::string bad_b = frame(batch_b());
  bad_b[kBatchHeaderBytes + 1] ^= 0x40;  // a payload byte: the header still checks out
  cases["v1_bad_checksum"] = {
      {seg1, encode_segment_header(1) + frame(batch_a()) + bad_b + frame(batch_e())},
      {seg2, encode_segment_header(2) + frame(batch_c())}};

  // A segment from a future format: magic, version 99, and whatever follows.
  std::string future = encode_segment_header(1);
  binary::store_u32(future.data() + 8, 99);
  binary::store_u32(future.data() + 28, crc32c(std::string_view(future).substr(0, 28)));
  cases["v99_unknown_version"] = {{seg1, future + frame(batch_a())}};
  return cases;
}

// Copies a golden case to a scratch data dir (recovery may cut a torn tail).
std::filesystem::path scratch_copy(const std::string& name, const TempDir& tmp) {
  const auto from = kTestdata / name;
  EXPECT_TRUE(std::filesystem::exists(from / "journal")) << from;
  std::filesystem::copy(from, tmp.path() / name, std::filesystem::copy_options::recursive);
  return tmp.path() / name;
}

struct Expected {
  std::string queue;
  std::string correlation_id;
  std::uint32_t deliveries;
};

void expect_messages(const std::vector<RecoveredMessage>& got, const std::vector<Expected>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].queue, want[i].queue) << i;
    EXPECT_EQ(got[i].message->correlation_id, want[i].correlation_id) << i;
    EXPECT_EQ(got[i].delivery_count, want[i].deliveries) << i;
  }
}

TEST(Golden, RegenerateWhenAsked) {
  if (std::getenv("CARRIER_REGENERATE_GOLDEN") == nullptr) GTEST_SKIP() << "not asked to";
  for (const auto& [name, files] : golden_cases()) {
    const auto dir = kTestdata / name / "journal";
    std::filesystem::remove_all(kTestdata / name);
    std::filesystem::create_directories(dir);
    for (const auto& [file, bytes] : files) write_file(dir / file, bytes);
  }
}

// The encoder of this build still writes version 1 byte for byte. If this fails, the format
// changed: bump kFormatVersion and add new golden files instead of rewriting these.
TEST(Golden, ThisBuildStillWritesTheV1Bytes) {
  for (const auto& [name, files] : golden_cases()) {
    for (const auto& [file, bytes] : files) {
      const auto path = kTestdata / name / "journal" / file;
      EXPECT_TRUE(read_file(path) == bytes) << path << " differs from what this build writes";
    }
  }
}

TEST(Golden, ValidJournal) {
  TempDir tmp;
  auto r = reopen(journal_options(scratch_copy("v1_valid", tmp)));
  ASSERT_TRUE(r.status) << r.status.error().to_string();
  expect_messages(r.messages, {{"queue:orders", "golden-1", 3},
                               {"queue:audit", "golden-1", 0},
                               {"queue:orders", "golden-3", 0}});
  EXPECT_EQ(r.messages[2].message->body, nullptr);
  ASSERT_NE(r.messages[0].message->body, nullptr);
  EXPECT_EQ(*r.messages[0].message->body, "golden body 1");
  EXPECT_EQ(r.report.truncated_bytes, 0u);
}

TEST(Golden, TornTailIsCut) {
  TempDir tmp;
  const auto data = scratch_copy("v1_torn_tail", tmp);
  const auto file = data / "journal" / "00000000000000000001.log";
  const auto before = std::filesystem::file_size(file);
  auto r = reopen(journal_options(data));
  ASSERT_TRUE(r.status) << r.status.error().to_string();
  expect_messages(r.messages, {{"queue:orders", "golden-1", 2},
                               {"queue:orders", "golden-2", 0},
                               {"queue:audit", "golden-1", 0}});
  EXPECT_GT(r.report.truncated_bytes, 0u);
  EXPECT_EQ(std::filesystem::file_size(file), before - r.report.truncated_bytes);
}

TEST(Golden, BadChecksumInTheMiddleStopsStrictRecovery) {
  TempDir tmp;
  const auto data = scratch_copy("v1_bad_checksum", tmp);
  auto r = reopen(journal_options(data));
  ASSERT_FALSE(r.status);
  EXPECT_EQ(r.status.error().code, Errc::corrupt_data);
  const std::string offset = std::to_string(kSegmentHeaderBytes + frame(batch_a()).size());
  EXPECT_NE(r.status.error().detail.find("00000000000000000001.log at offset " + offset),
            std::string::npos)
      << r.status.error().detail;
}

TEST(Golden, BadChecksumIsSkippedWhenAsked) {
  TempDir tmp;
  auto o = journal_options(scratch_copy("v1_bad_checksum", tmp));
  o.recovery = RecoveryMode::skip_corrupt;
  auto r = reopen(o);
  ASSERT_TRUE(r.status) << r.status.error().to_string();
  // Batch B (golden-1's delivery count) is lost; C's ack of golden-2 in segment 2 still holds.
  expect_messages(r.messages, {{"queue:orders", "golden-1", 0},
                               {"queue:audit", "golden-1", 0},
                               {"queue:orders", "golden-4", 0}});
  EXPECT_EQ(r.report.skipped_batches, 1u);
}

TEST(Golden, UnknownVersionIsRefused) {
  TempDir tmp;
  for (auto mode : {RecoveryMode::strict, RecoveryMode::skip_corrupt}) {
    auto o = journal_options(scratch_copy("v99_unknown_version", tmp));
    o.recovery = mode;
    auto r = reopen(o);
    ASSERT_FALSE(r.status);
    EXPECT_EQ(r.status.error().code, Errc::corrupt_data);
    EXPECT_NE(r.status.error().detail.find("version 99"), std::string::npos)
        << r.status.error().detail;
    std::filesystem::remove_all(o.data_dir);
  }
}

}  // namespace
}  // namespace carrier::store::log
