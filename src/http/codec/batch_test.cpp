#include "http/codec/batch.hpp"

#include <gtest/gtest.h>

namespace carrier::http::codec {
namespace {

TEST(Batch, DecodesEntries) {
  auto b = decode_batch(R"([{"headers":{"priority":"7","n":42,"f":true},"body":"hi"},{"body_base64":"AAH/"},{}])", 10);
  ASSERT_TRUE(b) << b.error().detail;
  ASSERT_EQ(b->size(), 3u);
  EXPECT_EQ((*b)[0].body, "hi");
  // JSON objects come out sorted by name.
  const Headers expected{{"f", "true"}, {"n", "42"}, {"priority", "7"}};
  EXPECT_EQ((*b)[0].headers, expected);
  EXPECT_EQ((*b)[1].body, std::string("\x00\x01\xff", 3));
  EXPECT_EQ((*b)[2].body, "");
}

TEST(Batch, RefusesOtherShapes) {
  EXPECT_FALSE(decode_batch("{}", 10));
  EXPECT_FALSE(decode_batch("[1]", 10));
  EXPECT_FALSE(decode_batch(R"([{"body":"a","body_base64":"YQ=="}])", 10));
  EXPECT_FALSE(decode_batch(R"([{"body":1}])", 10));
  EXPECT_FALSE(decode_batch(R"([{"headers":{"a":{}}}])", 10));
  EXPECT_FALSE(decode_batch(R"([{"other":1}])", 10));
  EXPECT_FALSE(decode_batch(R"([{"body_base64":"!!"}])", 10));
  EXPECT_FALSE(decode_batch("[", 10));
  EXPECT_EQ(decode_batch("[{},{},{}]", 2).error().code, Errc::limit_exceeded);
}

TEST(Batch, DeepNestingIsRefusedBeforeParsing) {
  EXPECT_FALSE(decode_batch(std::string(1'000'000, '['), 10));
  EXPECT_TRUE(decode_batch(R"([{"body":"[[[[[[{{{{"}])", 10));
}

}  // namespace
}  // namespace carrier::http::codec
