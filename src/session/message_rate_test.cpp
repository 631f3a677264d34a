#include "session/message_rate.hpp"

#include <gtest/gtest.h>

namespace carrier::session {
namespace {

using namespace std::chrono_literals;

TEST(MessageRateTest, ABurstThenTheRate) {
  auto now = MessageRate::Clock::now();
  MessageRate rate(10, 3, now);  // 3 at once, then one every 100 ms
  EXPECT_TRUE(rate.take(now));
  EXPECT_TRUE(rate.take(now));
  EXPECT_TRUE(rate.take(now));
  EXPECT_FALSE(rate.take(now));
  const auto wait = rate.wait(now);
  EXPECT_GE(wait, 100ms);
  EXPECT_LT(wait, 101ms);
  EXPECT_FALSE(rate.take(now + 99ms));
  EXPECT_TRUE(rate.take(now + wait));
  EXPECT_FALSE(rate.take(now + wait));
  now += 1h;  // refills to the burst only
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(rate.take(now));
  EXPECT_FALSE(rate.take(now));
}

TEST(MessageRateTest, WaitIsZeroWithATokenAndLargeRatesWork) {
  auto now = MessageRate::Clock::now();
  MessageRate rate(4'000'000'000u, 1, now);
  EXPECT_EQ(rate.wait(now), MessageRate::Clock::duration::zero());
  EXPECT_TRUE(rate.take(now));
  EXPECT_LE(rate.wait(now), 2us);
}

TEST(MessageRateTest, ABatchTakesItsCountAndIsOwed) {
  auto now = MessageRate::Clock::now();
  MessageRate rate(5, 5, now);
  EXPECT_TRUE(rate.take(now, 20));  // one token was there: the batch goes, 15 are owed
  EXPECT_FALSE(rate.take(now, 1));
  // 16 tokens to reach one again at 5 a second: 3.2 s.
  EXPECT_GT(rate.wait(now), 3100ms);
  EXPECT_LT(rate.wait(now), 3300ms);
  EXPECT_FALSE(rate.take(now + 3s));
  EXPECT_TRUE(rate.take(now + 3300ms, 1));
}

}  // namespace
}  // namespace carrier::session
