#include "federation/codec/basic_message.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "federation/codec/test_support.hpp"

namespace carrier::federation::codec {
namespace {

using namespace testing;

// The seed's field order, big-endian, byte for byte.
std::string sample_wire() {
  return be32(4) + be32(1) + be32(8) + be32(2) + pstr("orders.eu") + id_bytes(make_id(0x10)) +
         id_bytes(make_id(0x20)) + id_bytes(make_id(0x30)) + id_bytes(make_id(0x40)) +
         std::string("pay\0load", 8) + be32(7) + be32(0xffff'fffe);
}

TEST(BasicMessage, DefaultsAreTheSeeds) {
  BasicMessage m;
  EXPECT_EQ(m.ttl, 5);
  EXPECT_EQ(m.hops, 0);
  EXPECT_TRUE(m.payload.empty());
  EXPECT_TRUE(m.stack.empty());
}

TEST(BasicMessage, EncodesTheSeedLayout) {
  std::string out;
  ASSERT_TRUE(encode_basic_message(sample_message(), out));
  EXPECT_EQ(out, sample_wire());
}

TEST(BasicMessage, RoundTrips) {
  for (BasicMessage m : {sample_message(), BasicMessage{}}) {
    std::string out = "prefix";
    ASSERT_TRUE(encode_basic_message(m, out));
    auto back = decode_basic_message(std::string_view(out).substr(6), Limits{});
    ASSERT_TRUE(back.has_value()) << back.error().to_string();
    EXPECT_EQ(*back, m);
  }
}

TEST(BasicMessage, EveryTruncationIsRefused) {
  expect_every_prefix_refused(sample_wire(), [](std::string_view b) { return decode_basic_message(b, Limits{}); });
}

TEST(BasicMessage, TrailingBytesAreRefused) {
  auto r = decode_basic_message(sample_wire() + "x", Limits{});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, Errc::protocol_error);
  EXPECT_NE(r.error().detail.find("trailing"), std::string::npos);
}

std::string with_counts(std::uint32_t payload_length, std::uint32_t stack_size) {
  return be32(5) + be32(0) + be32(payload_length) + be32(stack_size) + pstr("q") +
         std::string(64, '\0') + "abc";
}

TEST(BasicMessage, HostileCountsHitTheLimitsFirst) {
  auto stack = decode_basic_message(with_counts(0, 0x8000'0000u), Limits{});
  ASSERT_FALSE(stack.has_value());
  EXPECT_EQ(stack.error().code, Errc::limit_exceeded);
  EXPECT_NE(stack.error().detail.find("stack size"), std::string::npos);

  auto payload = decode_basic_message(with_counts(0xffff'ffffu, 0), Limits{});
  ASSERT_FALSE(payload.has_value());
  EXPECT_EQ(payload.error().code, Errc::limit_exceeded);
  EXPECT_NE(payload.error().detail.find("payload length"), std::string::npos);
}

TEST(BasicMessage, HostileCountsUnderHugeLimitsAreTruncationNotAllocation) {
  Limits unlimited;
  unlimited.max_payload_bytes = std::numeric_limits<std::size_t>::max();
  unlimited.max_stack_entries = std::numeric_limits<std::size_t>::max();
  for (auto [payload, stack] : {std::pair{0xffff'ffffu, 0u}, std::pair{0u, 0x8000'0000u},
                                std::pair{0xffff'ffffu, 0xffff'ffffu}}) {
    auto r = decode_basic_message(with_counts(payload, stack), unlimited);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, Errc::protocol_error);
    EXPECT_NE(r.error().detail.find("truncated"), std::string::npos) << r.error().detail;
  }
}

TEST(BasicMessage, SelectorLimitAndMissingNul) {
  Limits small;
  small.max_string_bytes = 4;
  auto long_selector = decode_basic_message(sample_wire(), small);
  ASSERT_FALSE(long_selector.has_value());
  EXPECT_EQ(long_selector.error().code, Errc::limit_exceeded);
  EXPECT_NE(long_selector.error().detail.find("selector"), std::string::npos);
  EXPECT_NE(long_selector.error().detail.find("at byte 16"), std::string::npos);

  auto no_nul = decode_basic_message(be32(5) + be32(0) + be32(0) + be32(0) + "queue", Limits{});
  ASSERT_FALSE(no_nul.has_value());
  EXPECT_EQ(no_nul.error().code, Errc::protocol_error);
  EXPECT_NE(no_nul.error().detail.find("missing NUL"), std::string::npos);
}

TEST(BasicMessage, SelectorWithNulIsNotEncoded) {
  BasicMessage m = sample_message();
  m.selector = std::string("a\0b", 3);
  std::string out = "kept";
  auto s = encode_basic_message(m, out);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, Errc::invalid_argument);
  EXPECT_EQ(out, "kept");
}

}  // namespace
}  // namespace carrier::federation::codec
