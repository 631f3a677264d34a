#include "federation/codec/forwarder.hpp"

#include <gtest/gtest.h>

#include "federation/codec/test_support.hpp"

namespace carrier::federation::codec {
namespace {

using namespace testing;

TEST(Forwarder, SeedLayoutAndRoundTrip) {
  const Forwarder f{-3, "priority", "9"};
  std::string out;
  ASSERT_TRUE(encode_forwarder(f, out));
  EXPECT_EQ(out, be32(0xffff'fffdu) + pstr("priority") + pstr("9"));
  auto back = decode_forwarder(out, Limits{});
  ASSERT_TRUE(back.has_value()) << back.error().to_string();
  EXPECT_EQ(*back, f);
  expect_every_prefix_refused(out, [](std::string_view b) { return decode_forwarder(b, Limits{}); });
}

TEST(Forwarder, DefaultIsEmptyStrings) {
  std::string out;
  ASSERT_TRUE(encode_forwarder(Forwarder{}, out));
  EXPECT_EQ(out, be32(0) + pstr("") + pstr(""));
  EXPECT_EQ(*decode_forwarder(out, Limits{}), Forwarder{});
}

TEST(Forwarder, Refusals) {
  Limits small;
  small.max_string_bytes = 3;
  auto long_key = decode_forwarder(be32(0) + pstr("priority") + pstr(""), small);
  ASSERT_FALSE(long_key.has_value());
  EXPECT_EQ(long_key.error().code, Errc::limit_exceeded);
  auto trailing = decode_forwarder(be32(0) + pstr("") + pstr("") + "x", Limits{});
  ASSERT_FALSE(trailing.has_value());
  EXPECT_EQ(trailing.error().code, Errc::protocol_error);
  std::string out;
  EXPECT_FALSE(encode_forwarder(Forwarder{0, "k", std::string(1, '\0')}, out).has_value());
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace carrier::federation::codec
