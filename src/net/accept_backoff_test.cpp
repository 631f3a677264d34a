#include "net/accept_backoff.hpp"

#include <gtest/gtest.h>

namespace carrier::net {
namespace {

using namespace std::chrono_literals;

TEST(AcceptBackoff, DoublesFromMinToMaxAndResetsOnSuccess) {
  AcceptBackoff backoff;
  const auto t = AcceptBackoff::Clock::now();
  EXPECT_EQ(backoff.fail(t), 10ms);
  EXPECT_EQ(backoff.fail(t), 20ms);
  EXPECT_EQ(backoff.fail(t), 40ms);
  for (int i = 0; i < 10; ++i) backoff.fail(t);
  EXPECT_EQ(backoff.fail(t), 1000ms);
  EXPECT_EQ(backoff.succeed(), 14u);
  EXPECT_EQ(backoff.fail(t), 10ms);
}

TEST(AcceptBackoff, LogsTheFirstFailureThenAtMostOncePerInterval) {
  AcceptBackoff backoff;
  const auto t = AcceptBackoff::Clock::now();
  backoff.fail(t);
  ASSERT_TRUE(backoff.should_log());
  EXPECT_EQ(backoff.failures_to_log(), 1u);
  backoff.fail(t + 1s);
  EXPECT_FALSE(backoff.should_log());
  backoff.fail(t + 9s);
  EXPECT_FALSE(backoff.should_log());
  backoff.fail(t + 10s);
  ASSERT_TRUE(backoff.should_log());
  EXPECT_EQ(backoff.failures_to_log(), 3u);  // the two held back and this one
  // A success starts over: the next failure is news again.
  backoff.succeed();
  backoff.fail(t + 11s);
  EXPECT_TRUE(backoff.should_log());
  EXPECT_EQ(backoff.failures_to_log(), 1u);
}

}  // namespace
}  // namespace carrier::net
