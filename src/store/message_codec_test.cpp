#include "store/message_codec.hpp"

#include <gtest/gtest.h>

#include <random>

#include "store/test_support.hpp"

namespace carrier::store {
namespace {

using testing::expect_same_message;
using testing::make_message;

TEST(MessageCodec, RoundTripsEveryField) {
  auto m = make_message(7, std::string("binary\0body\xff", 12));
  const std::string bytes = encode_message(*m);
  EXPECT_EQ(bytes.size(), encoded_message_size(*m));
  auto back = decode_message(bytes);
  ASSERT_TRUE(back) << back.error().to_string();
  expect_same_message(*m, *back);
}

// A spilled message (non-persistent, stored to leave memory) says so when read back; the flag
// means nothing on a persistent one.
TEST(MessageCodec, KeepsTheSpilledFlagOfNonPersistentMessagesOnly) {
  auto m = std::make_shared<model::Message>(*make_message(3));
  m->persistent = false;
  m->spilled = true;
  auto back = decode_message(encode_message(*m));
  ASSERT_TRUE(back) << back.error().to_string();
  EXPECT_FALSE(back->persistent);
  EXPECT_TRUE(back->spilled);
  EXPECT_TRUE(back->stored());
  m->persistent = true;
  back = decode_message(encode_message(*m));
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->persistent);
  EXPECT_FALSE(back->spilled);
}

TEST(MessageCodec, KeepsNullAndEmptyBodiesApart) {
  auto with_empty = std::make_shared<model::Message>(*make_message(1, ""));
  auto without = std::make_shared<model::Message>(*with_empty);
  without->body.reset();
  auto a = decode_message(encode_message(*with_empty));
  auto b = decode_message(encode_message(*without));
  ASSERT_TRUE(a && b);
  ASSERT_NE(a->body, nullptr);
  EXPECT_EQ(*a->body, "");
  EXPECT_EQ(b->body, nullptr);
}

TEST(MessageCodec, DefaultMessageRoundTrips) {
  model::Message m;
  auto back = decode_message(encode_message(m));
  ASSERT_TRUE(back);
  expect_same_message(m, *back);
}

TEST(MessageCodec, EveryTruncationIsCorruptData) {
  const std::string bytes = encode_message(*make_message(3));
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    auto r = decode_message(std::string_view(bytes).substr(0, n));
    ASSERT_FALSE(r) << "prefix of " << n << " bytes decoded";
    EXPECT_EQ(r.error().code, Errc::corrupt_data);
  }
}

TEST(MessageCodec, TrailingBytesAreRejected) {
  std::string bytes = encode_message(*make_message(3));
  bytes.push_back('x');
  auto r = decode_message(bytes);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().detail.find("trailing"), std::string::npos) << r.error().detail;
}

TEST(MessageCodec, UnknownVersionIsNamed) {
  std::string bytes = encode_message(*make_message(3));
  bytes[0] = 9;
  auto r = decode_message(bytes);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::corrupt_data);
  EXPECT_NE(r.error().detail.find("version 9"), std::string::npos) << r.error().detail;
}

TEST(MessageCodec, UnknownDestinationKindAndFlagsAreRejected) {
  model::Message m;
  std::string bytes = encode_message(m);
  std::string kind = bytes;
  kind[17] = 3;  // after version(1) + id(16)
  EXPECT_FALSE(decode_message(kind));
  std::string flags = bytes;
  // version 1, id 16, kind 1, name 1 (empty), priority 1, timestamps 16 -> flags at 36
  flags[36] = static_cast<char>(0x80);
  auto r = decode_message(flags);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().detail.find("flag"), std::string::npos) << r.error().detail;
}

TEST(MessageCodec, ForgedPropertyCountDoesNotAllocate) {
  model::Message m;
  std::string bytes = encode_message(m);
  // The property count is the varint after four empty strings (flags at 36, strings 37..40).
  ASSERT_EQ(bytes[41], 0);
  std::string forged = bytes.substr(0, 41);
  forged += std::string("\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 9);
  auto r = decode_message(forged);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().detail.find("property count"), std::string::npos) << r.error().detail;
}

TEST(MessageCodec, OverlongVarintIsRejected) {
  model::Message m;
  std::string bytes = encode_message(m).substr(0, 18);  // up to the destination name length
  bytes += std::string(11, '\xff');
  auto r = decode_message(bytes);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::corrupt_data);
}

// What the fuzzer will do, in miniature: damaged input never crashes, and whatever decodes
// re-encodes to something that decodes to the same message.
TEST(MessageCodec, RandomDamageNeverCrashes) {
  const std::string good = encode_message(*make_message(5, "hello world"));
  std::mt19937 rng(42);
  for (int round = 0; round < 20000; ++round) {
    std::string bytes = good;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) bytes[rng() % bytes.size()] = static_cast<char>(rng());
    if (rng() % 4 == 0) bytes.resize(rng() % bytes.size());
    auto r = decode_message(bytes);
    if (!r) {
      EXPECT_EQ(r.error().code, Errc::corrupt_data);
      continue;
    }
    auto again = decode_message(encode_message(*r));
    ASSERT_TRUE(again);
    expect_same_message(*r, *again);
  }
}

TEST(MessageCodec, ScheduledAndRetainedSurvive) {
  model::Message m;
  m.id = model::MessageId{1, 2};
  m.destination = {model::DestinationKind::topic, "t"};
  m.deliver_at_ms = 1234567890123;
  m.retain = true;
  auto bytes = encode_message(m);
  EXPECT_EQ(bytes.size(), encoded_message_size(m));
  auto back = decode_message(bytes);
  ASSERT_TRUE(back) << back.error().to_string();
  EXPECT_EQ(back->deliver_at_ms, 1234567890123);
  EXPECT_TRUE(back->retain);
}

}  // namespace
}  // namespace carrier::store
