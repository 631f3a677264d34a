#include "federation/codec/negotiator.hpp"

#include <gtest/gtest.h>

#include "federation/codec/test_support.hpp"

namespace carrier::federation::codec {
namespace {

using namespace testing;

TEST(Negotiator, DefaultsAreTheSeeds) {
  const Negotiator n;
  EXPECT_EQ(n.cost_request, 0);
  EXPECT_EQ(n.agreement_id, -1);
  std::string out;
  ASSERT_TRUE(encode_negotiator(n, out));
  EXPECT_EQ(out, be32(0) + be32(0xffff'ffffu) + pstr(""));
}

TEST(Negotiator, SeedLayoutAndRoundTrip) {
  const Negotiator n{10, 42, "agreed"};
  std::string out;
  ASSERT_TRUE(encode_negotiator(n, out));
  EXPECT_EQ(out, be32(10) + be32(42) + pstr("agreed"));
  auto back = decode_negotiator(out, Limits{});
  ASSERT_TRUE(back.has_value()) << back.error().to_string();
  EXPECT_EQ(*back, n);
  expect_every_prefix_refused(out, [](std::string_view b) { return decode_negotiator(b, Limits{}); });
}

TEST(Negotiator, Refusals) {
  auto trailing = decode_negotiator(be32(0) + be32(0) + pstr("") + "x", Limits{});
  ASSERT_FALSE(trailing.has_value());
  EXPECT_NE(trailing.error().detail.find("1 trailing bytes at byte 9"), std::string::npos)
      << trailing.error().detail;
  std::string out;
  EXPECT_FALSE(encode_negotiator(Negotiator{0, 0, std::string(1, '\0')}, out).has_value());
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace carrier::federation::codec
