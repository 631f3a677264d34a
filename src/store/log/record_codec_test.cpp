#include "store/log/record_codec.hpp"

#include <gtest/gtest.h>

#include <random>

#include "store/log/crc32c.hpp"
#include "store/test_support.hpp"

namespace carrier::store::log {
namespace {

using testing::expect_same_message;
using testing::make_message;

Batch sample_batch() {
  auto m1 = make_message(1);
  auto m2 = make_message(2, std::string(5000, 'x'));
  return Batch{Record::added("queue:orders", m1), Record::added("queue:audit", m2),
               Record::delivered("queue:orders", m1->id, 3), Record::acked("queue:audit", m2->id)};
}

void expect_same_record(const Record& a, const Record& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.queue, b.queue);
  EXPECT_EQ(a.message_id, b.message_id);
  EXPECT_EQ(a.delivery_count, b.delivery_count);
  ASSERT_EQ(a.message == nullptr, b.message == nullptr);
  if (a.message) expect_same_message(*a.message, *b.message);
}

TEST(RecordCodec, SegmentHeaderRoundTrips) {
  const std::string h = encode_segment_header(42);
  ASSERT_EQ(h.size(), kSegmentHeaderBytes);
  auto back = decode_segment_header(h);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->version, kFormatVersion);
  EXPECT_EQ(back->segment_id, 42u);
  std::string bad = h;
  bad[20] ^= 1;
  EXPECT_FALSE(decode_segment_header(bad));
  EXPECT_FALSE(decode_segment_header(h.substr(0, 31)));
}

TEST(RecordCodec, BatchRoundTrips) {
  const Batch batch = sample_batch();
  std::string frame;
  ASSERT_TRUE(encode_batch(batch, frame));
  auto back = decode_batch(frame + "trailing bytes are the next frame's business");
  ASSERT_TRUE(back) << back.error().to_string();
  EXPECT_EQ(back->bytes, frame.size());
  ASSERT_EQ(back->batch.size(), batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i) expect_same_record(batch[i], back->batch[i]);
}

// An ack or delivered record that names its stored copy keeps it through the journal: recovery
// from the live-set checkpoint resolves it by position (docs/storage.md, "Live-set checkpoint").
TEST(RecordCodec, AcksAndDeliveriesNamingTheirCopyRoundTrip) {
  auto m = make_message(1);
  const StoredRef at{Location{7, 4096, 300}, 9, 1234};
  const Batch batch{Record::acked("queue:a", m->id, at), Record::delivered("queue:a", m->id, 5, at),
                    Record::acked("queue:b", m->id), Record::delivered("queue:b", m->id, 2)};
  std::string frame;
  ASSERT_TRUE(encode_batch(batch, frame));
  auto back = decode_batch(frame);
  ASSERT_TRUE(back) << back.error().to_string();
  ASSERT_EQ(back->batch.size(), batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i) {
    SCOPED_TRACE(i);
    expect_same_record(batch[i], back->batch[i]);
    EXPECT_EQ(back->batch[i].stored.known(), batch[i].stored.known());
    EXPECT_EQ(back->batch[i].stored.location, batch[i].stored.location);
    EXPECT_EQ(back->batch[i].stored.priority, batch[i].stored.priority);
    EXPECT_EQ(back->batch[i].stored.footprint, batch[i].stored.footprint);
  }
  // A record naming no copy is written as it always was: older journals read the same.
  std::string plain;
  ASSERT_TRUE(encode_batch({Record::acked("queue:b", m->id)}, plain));
  EXPECT_EQ(plain[kBatchHeaderBytes], static_cast<char>(RecordKind::ack));
}

TEST(RecordCodec, ACopyThatNamesNothingIsRefused) {
  auto m = make_message(1);
  std::string frame;
  ASSERT_TRUE(encode_batch({Record::acked("queue:a", m->id, StoredRef{Location{7, 1, 2}, 3, 4})}, frame));
  const std::string payload = frame.substr(kBatchHeaderBytes);
  // kind, queue (1 + 7), id (16), then the segment varint: 0 names none.
  const std::size_t segment_at = 1 + 1 + 7 + 16;
  ASSERT_EQ(payload[segment_at], 7);
  std::string forged = payload;
  forged[segment_at] = 0;
  auto refused = decode_record(forged);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().detail.find("stored copy segment"), std::string::npos) << refused.error().detail;
  forged = payload;
  forged[segment_at + 3] = 10;  // priority past 9
  refused = decode_record(forged);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().detail.find("stored copy priority"), std::string::npos) << refused.error().detail;
}

TEST(RecordCodec, EmptyBatchIsAFrame) {
  std::string frame;
  ASSERT_TRUE(encode_batch({}, frame));
  EXPECT_EQ(frame.size(), kBatchHeaderBytes);
  auto back = decode_batch(frame);
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->batch.empty());
}

TEST(RecordCodec, RefusesMessageRecordWithoutMessage) {
  Record r;
  r.kind = RecordKind::message;
  r.queue = "queue:x";
  std::string frame = "keep";
  auto st = encode_batch({r}, frame);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, Errc::invalid_argument);
  EXPECT_EQ(frame, "keep");
}

TEST(RecordCodec, DecodeRecordIsPure) {
  auto m = make_message(9);
  std::string frame;
  ASSERT_TRUE(encode_batch({Record::added("queue:q", m)}, frame));
  auto rec = decode_record(std::string_view(frame).substr(kBatchHeaderBytes));
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->bytes, frame.size() - kBatchHeaderBytes);
  EXPECT_EQ(rec->record.queue, "queue:q");
  expect_same_message(*m, *rec->record.message);
}

TEST(RecordCodec, EveryTruncationFails) {
  std::string frame;
  ASSERT_TRUE(encode_batch(sample_batch(), frame));
  for (std::size_t n = 0; n < frame.size(); n += (n < 200 ? 1 : 97)) {
    auto r = decode_batch(std::string_view(frame).substr(0, n));
    ASSERT_FALSE(r) << n;
    EXPECT_EQ(r.error().code, Errc::corrupt_data);
  }
}

TEST(RecordCodec, EveryBitFlipIsCaught) {
  std::string frame;
  ASSERT_TRUE(encode_batch({Record::acked("queue:q", model::MessageId{1, 2}),
                            Record::delivered("queue:q", model::MessageId{1, 2}, 7)},
                           frame));
  for (std::size_t byte = 0; byte < frame.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = frame;
      bad[byte] ^= static_cast<char>(1 << bit);
      EXPECT_FALSE(decode_batch(bad)) << "flip of bit " << bit << " in byte " << byte;
    }
  }
}

TEST(RecordCodec, ForgedHeaderLimitsAreRejected) {
  std::string frame;
  ASSERT_TRUE(encode_batch({}, frame));
  // A header claiming 2^31 bytes, with a correct header checksum: still refused.
  std::string forged(kBatchHeaderBytes, '\0');
  auto put = [&](std::size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) forged[at + i] = static_cast<char>(v >> (8 * i));
  };
  put(0, kBatchMagic);
  put(4, 0x80000000u);
  put(20, crc32c(std::string_view(forged).substr(0, 20)));
  auto r = decode_batch_header(forged);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().detail.find("exceeds"), std::string::npos) << r.error().detail;
}

TEST(RecordCodec, RandomDamageNeverCrashes) {
  std::string frame;
  ASSERT_TRUE(encode_batch(sample_batch(), frame));
  std::mt19937 rng(7);
  for (int round = 0; round < 3000; ++round) {
    std::string bytes = frame;
    for (int f = 0; f < 3; ++f) bytes[rng() % bytes.size()] = static_cast<char>(rng());
    auto r = decode_batch(bytes);
    if (r) continue;  // astronomically unlikely with both checksums, but not an error
    EXPECT_EQ(r.error().code, Errc::corrupt_data);
    // The payload decoder alone, without the checksum's protection.
    auto p = decode_batch_payload(std::string_view(bytes).substr(kBatchHeaderBytes), 4);
    if (!p) {
      EXPECT_EQ(p.error().code, Errc::corrupt_data);
    }
  }
}

}  // namespace
}  // namespace carrier::store::log
