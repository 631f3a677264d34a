#include "store/log/segment_reader.hpp"

#include <gtest/gtest.h>

#include "store/log/record_codec.hpp"
#include "store/test_support.hpp"

namespace carrier::store::log {
namespace {

using store::testing::make_message;

std::string frame_of(Batch b) {
  std::string f;
  EXPECT_TRUE(encode_batch(b, f));
  return f;
}

std::string segment(const std::vector<std::string>& frames) {
  std::string s = encode_segment_header(1);
  for (const auto& f : frames) s += f;
  return s;
}

TEST(SegmentReader, ReadsFramesThenEnd) {
  auto r = SegmentReader::from_bytes(segment({frame_of({Record::added("q", make_message(1))}),
                                              frame_of({})}));
  ASSERT_TRUE(r.read_header());
  auto a = r.next();
  ASSERT_EQ(a.kind, SegmentReader::Item::Kind::batch);
  EXPECT_EQ(a.offset, kSegmentHeaderBytes);
  EXPECT_EQ(a.batch.size(), 1u);
  auto b = r.next();
  ASSERT_EQ(b.kind, SegmentReader::Item::Kind::batch);
  EXPECT_EQ(b.offset, a.next);
  EXPECT_EQ(r.next().kind, SegmentReader::Item::Kind::end);
}

TEST(SegmentReader, ShortFrameIsTruncatedDamage) {
  const std::string f = frame_of({Record::added("q", make_message(1))});
  for (std::size_t cut : {std::size_t(1), kBatchHeaderBytes - 1, kBatchHeaderBytes, f.size() - 1}) {
    auto r = SegmentReader::from_bytes(segment({f}).substr(0, kSegmentHeaderBytes + cut), "seg");
    ASSERT_TRUE(r.read_header());
    auto item = r.next();
    ASSERT_EQ(item.kind, SegmentReader::Item::Kind::damaged) << cut;
    EXPECT_TRUE(item.truncated) << cut;
    EXPECT_EQ(item.offset, kSegmentHeaderBytes);
    EXPECT_NE(item.detail.find("seg at offset 32"), std::string::npos) << item.detail;
  }
}

TEST(SegmentReader, BadChecksumIsDamageAndResyncFindsTheNextFrame) {
  const std::string a = frame_of({Record::added("q", make_message(1))});
  const std::string b = frame_of({Record::added("q", make_message(2))});
  std::string bytes = segment({a, b});
  bytes[kSegmentHeaderBytes + kBatchHeaderBytes + 3] ^= 1;
  auto r = SegmentReader::from_bytes(bytes);
  ASSERT_TRUE(r.read_header());
  auto item = r.next();
  ASSERT_EQ(item.kind, SegmentReader::Item::Kind::damaged);
  EXPECT_FALSE(item.truncated);
  EXPECT_NE(item.detail.find("checksum"), std::string::npos) << item.detail;
  EXPECT_EQ(r.position(), kSegmentHeaderBytes);  // does not move past damage by itself
  auto next = r.find_next_frame(item.offset);
  ASSERT_TRUE(next);
  EXPECT_EQ(*next, kSegmentHeaderBytes + a.size());
  r.seek(*next);
  auto good = r.next();
  ASSERT_EQ(good.kind, SegmentReader::Item::Kind::batch);
  EXPECT_EQ(good.batch[0].message->correlation_id, "corr-2");
  EXPECT_FALSE(r.find_next_frame(*next));
}

TEST(SegmentReader, ZeroFilledTailIsDamageWithNothingAfter) {
  std::string bytes = segment({frame_of({})}) + std::string(4096, '\0');
  auto r = SegmentReader::from_bytes(bytes);
  ASSERT_TRUE(r.read_header());
  ASSERT_EQ(r.next().kind, SegmentReader::Item::Kind::batch);
  auto item = r.next();
  ASSERT_EQ(item.kind, SegmentReader::Item::Kind::damaged);
  EXPECT_FALSE(r.find_next_frame(item.offset));
}

}  // namespace
}  // namespace carrier::store::log
