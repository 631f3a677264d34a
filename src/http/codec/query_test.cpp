#include "http/codec/query.hpp"

#include <gtest/gtest.h>

namespace carrier::http::codec {
namespace {

TEST(Query, SplitsTargetAtTheFirstQuestionMark) {
  auto t = split_target("/v1/queues/a/messages?max=5&wait=1s?x");
  EXPECT_EQ(t.path, "/v1/queues/a/messages");
  EXPECT_EQ(t.query, "max=5&wait=1s?x");
  EXPECT_EQ(split_target("/x").query, "");
}

TEST(Query, DecodesPairsInOrder) {
  auto p = parse_query("a=1&b=x%20y+z&flag&&c=");
  ASSERT_TRUE(p);
  ASSERT_EQ(p->size(), 4u);
  EXPECT_EQ((*p)[1].second, "x y z");
  EXPECT_EQ((*p)[2].first, "flag");
  EXPECT_EQ(find_param(*p, "c"), "");
  EXPECT_FALSE(find_param(*p, "d"));
}

TEST(Query, RefusesBadEscapesAndTooManyParams) {
  EXPECT_FALSE(parse_query("a=%G1"));
  EXPECT_FALSE(parse_query("a=%4"));
  EXPECT_FALSE(parse_query("a=1&b=2&c=3", 2));
  EXPECT_EQ(*percent_decode("a+b%2F"), "a+b/");
}

TEST(Query, BoundedNumbers) {
  EXPECT_EQ(*parse_bounded("100", "max", 1, 1000), 100u);
  EXPECT_FALSE(parse_bounded("0", "max", 1, 1000));
  EXPECT_FALSE(parse_bounded("9223372036854775808", "max", 1, 1000));
  EXPECT_FALSE(parse_bounded("99999999999999999999999", "max", 1, 1000));
  EXPECT_FALSE(parse_bounded("-1", "max", 1, 1000));
  EXPECT_FALSE(parse_bounded("", "max", 1, 1000));
  EXPECT_FALSE(parse_bounded("5x", "max", 1, 1000));
}

TEST(Query, Durations) {
  EXPECT_EQ(*parse_duration_ms("30s", "wait", 60000), 30000u);
  EXPECT_EQ(*parse_duration_ms("250ms", "wait", 60000), 250u);
  EXPECT_EQ(*parse_duration_ms("1m", "wait", 60000), 60000u);
  EXPECT_EQ(*parse_duration_ms("7", "wait", 60000), 7000u);
  EXPECT_FALSE(parse_duration_ms("61s", "wait", 60000));
  EXPECT_FALSE(parse_duration_ms("9223372036854775808s", "wait", 60000));
  EXPECT_FALSE(parse_duration_ms("s", "wait", 60000));
  EXPECT_FALSE(parse_duration_ms("1h", "wait", 60000));
}

TEST(Query, Flags) {
  EXPECT_TRUE(*parse_flag("true", "persistent"));
  EXPECT_FALSE(*parse_flag("0", "persistent"));
  EXPECT_FALSE(parse_flag("maybe", "persistent"));
}

}  // namespace
}  // namespace carrier::http::codec
