#include "core/disk_alarm.hpp"

#include <gtest/gtest.h>

namespace carrier::core {
namespace {

using T = DiskAlarm::Transition;

TEST(DiskAlarm, HoldsUnderTheLimitAndReliefOnceWhenSpaceReturns) {
  DiskAlarm alarm(1000);
  int reliefs = 0;
  alarm.set_on_relief([&reliefs] { ++reliefs; });
  EXPECT_FALSE(alarm.measured());
  EXPECT_EQ(alarm.update(5000), T::none);
  EXPECT_TRUE(alarm.measured());
  EXPECT_FALSE(alarm.holding());
  EXPECT_EQ(alarm.update(999), T::raised);
  EXPECT_TRUE(alarm.holding());
  EXPECT_EQ(alarm.update(10), T::none);  // still under: no second transition
  EXPECT_EQ(reliefs, 0);
  EXPECT_EQ(alarm.update(1000), T::cleared);  // at the limit is enough
  EXPECT_FALSE(alarm.holding());
  EXPECT_EQ(reliefs, 1);
  EXPECT_EQ(alarm.update(2000), T::none);
  EXPECT_EQ(reliefs, 1);
  EXPECT_EQ(alarm.alarms(), 1u);
  EXPECT_EQ(alarm.free_bytes(), 2000u);
}

TEST(DiskAlarm, ZeroLimitNeverHolds) {
  DiskAlarm alarm(0);
  EXPECT_EQ(alarm.update(0), T::none);
  EXPECT_FALSE(alarm.holding());
}

TEST(DiskAlarm, NewLimitJudgedAtTheNextReading) {
  DiskAlarm alarm(100);
  int reliefs = 0;
  alarm.set_on_relief([&reliefs] { ++reliefs; });
  EXPECT_EQ(alarm.update(500), T::none);
  alarm.set_limit(std::uint64_t{1} << 62);  // above any disk
  EXPECT_EQ(alarm.limit(), std::uint64_t{1} << 62);
  EXPECT_EQ(alarm.update(500), T::raised);
  alarm.set_limit(0);  // turned off while holding: the held publishers are let go
  EXPECT_EQ(alarm.update(500), T::cleared);
  EXPECT_EQ(reliefs, 1);
}

}  // namespace
}  // namespace carrier::core
