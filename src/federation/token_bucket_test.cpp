#include "federation/token_bucket.hpp"

#include <gtest/gtest.h>

namespace carrier::federation {
namespace {

TEST(TokenBucket, UnlimitedByDefaultAndAtRateZero) {
  TokenBucket b;
  EXPECT_FALSE(b.limited());
  EXPECT_EQ(b.take(1'000'000, 0), 0);
  b.set_rate(10, 0);
  b.set_rate(0, 0);
  EXPECT_EQ(b.take(5, 0), 0);
}

TEST(TokenBucket, HoldsTheRateOverTime) {
  TokenBucket b;
  b.set_rate(100, 0);  // 100 messages per second
  std::int64_t now = 0;
  int taken = 0;
  while (now < 10'000'000) {  // ten simulated seconds, asking as fast as allowed
    const auto wait = b.take(1, now);
    if (wait == 0) {
      ++taken;
    } else {
      now += wait;
    }
  }
  EXPECT_NEAR(taken, 1000, 15);
}

TEST(TokenBucket, IdleTimeBuysATenthOfASecondOnly) {
  TokenBucket b;
  b.set_rate(1000, 0);
  int burst = 0;
  while (b.take(1, 60'000'000) == 0) ++burst;  // a minute idle
  EXPECT_EQ(burst, 100);
}

TEST(TokenBucket, ACostAboveTheBurstStillPasses) {
  TokenBucket b;
  b.set_rate(80, 0);  // bits per second; an 800-bit push
  const auto wait = b.take(800, 0);
  EXPECT_GT(wait, 9'000'000);
  EXPECT_EQ(b.take(800, wait), 0);
}

}  // namespace
}  // namespace carrier::federation
