#include "base/log_format.hpp"

#include <gtest/gtest.h>

namespace carrier::logging {
namespace {

using std::chrono::seconds;

const auto kTime = std::chrono::system_clock::time_point(std::chrono::milliseconds(1764615600123));  // 2025-12-01

TEST(JsonLine, PlainMessageHasTheFourFields) {
  EXPECT_EQ(json_line(kTime, "info", "broker", "carrier ready"),
            R"({"time":"2025-12-01T19:00:00.123Z","level":"info","logger":"broker","msg":"carrier ready"})");
}

TEST(JsonLine, ConnectionPrefixBecomesFields) {
  EXPECT_EQ(json_line(kTime, "warning", "mqtt", "[mqtt c42 127.0.0.1:50312] messages not stored: full"),
            R"({"time":"2025-12-01T19:00:00.123Z","level":"warn","logger":"mqtt","msg":"messages not stored: full",)"
            R"("protocol":"mqtt","connection":42,"remote":"127.0.0.1:50312"})");
  EXPECT_EQ(json_line(kTime, "info", "stomp", "[stomp c7 [::1]:6000 /queue/a b] dropped"),
            R"({"time":"2025-12-01T19:00:00.123Z","level":"info","logger":"stomp","msg":"dropped",)"
            R"("protocol":"stomp","connection":7,"remote":"[::1]:6000","destination":"/queue/a b"})");
}

TEST(JsonLine, BracketsThatAreNoPrefixStayInTheMessage) {
  EXPECT_EQ(json_line(kTime, "info", "x", "[not a prefix] hi"),
            R"({"time":"2025-12-01T19:00:00.123Z","level":"info","logger":"x","msg":"[not a prefix] hi"})");
  EXPECT_EQ(json_line(kTime, "info", "x", "[stomp cX peer] hi"),
            R"({"time":"2025-12-01T19:00:00.123Z","level":"info","logger":"x","msg":"[stomp cX peer] hi"})");
}

TEST(JsonLine, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(json_line(kTime, "info", "x", "a\"b\\c\nd\x01"),
            R"({"time":"2025-12-01T19:00:00.123Z","level":"info","logger":"x","msg":"a\"b\\c\nd\u0001"})");
}

TEST(RepeatLimiter, KindIgnoresPrefixAndNumbers) {
  EXPECT_EQ(RepeatLimiter::kind_of("[stomp c1 127.0.0.1:5] refused after 12 tries"), "refused after # tries");
  EXPECT_EQ(RepeatLimiter::kind_of("[mqtt c99 10.0.0.1:7] refused after 3 tries"), "refused after # tries");
  EXPECT_EQ(RepeatLimiter::kind_of("[no prefix] 12"), "[no prefix] #");
}

TEST(RepeatLimiter, LetsABurstThroughThenCountsWhatItHeldBack) {
  RepeatLimiter limiter(2, seconds(10));
  const auto t0 = std::chrono::steady_clock::time_point(seconds(100));
  EXPECT_EQ(limiter.admit("[stomp c1 a:1] slow 1", t0), std::optional<std::size_t>(0));
  EXPECT_EQ(limiter.admit("[stomp c2 a:2] slow 2", t0), 0u);
  EXPECT_EQ(limiter.admit("[stomp c3 a:3] slow 3", t0), std::nullopt);
  EXPECT_EQ(limiter.admit("[stomp c4 a:4] slow 4", t0 + seconds(1)), std::nullopt);
  EXPECT_EQ(limiter.admit("another kind", t0 + seconds(1)), 0u);
  EXPECT_EQ(limiter.admit("[stomp c5 a:5] slow 5", t0 + seconds(10)), 2u);  // a new window
  EXPECT_EQ(limiter.admit("[stomp c6 a:6] slow 6", t0 + seconds(10)), 0u);
}

TEST(RepeatLimiter, ForgetsKindsPastItsBound) {
  RepeatLimiter limiter(1, seconds(10), 2);
  const auto t0 = std::chrono::steady_clock::time_point(seconds(100));
  EXPECT_EQ(limiter.admit("a", t0), 0u);
  EXPECT_EQ(limiter.admit("a", t0), std::nullopt);
  EXPECT_EQ(limiter.admit("b", t0), 0u);
  EXPECT_EQ(limiter.admit("c", t0), 0u);  // cleared: "a" is new again
  EXPECT_EQ(limiter.admit("a", t0), 0u);
}

}  // namespace
}  // namespace carrier::logging
