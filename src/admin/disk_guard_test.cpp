#include "admin/disk_guard.hpp"

#include <gtest/gtest.h>

namespace carrier::admin {
namespace {

using namespace std::chrono_literals;

TEST(DiskGuard, ReadsTheRealDisk) {
  const auto free = free_disk_bytes(".");
  ASSERT_TRUE(free.has_value());
  EXPECT_GT(*free, 0u);
  EXPECT_FALSE(free_disk_bytes("/no/such/directory/at/all").has_value());
}

TEST(DiskGuard, FeedsTheAlarmAndLogsEachTransitionAtMostOncePerInterval) {
  core::DiskAlarm alarm(1000);
  std::uint64_t free = 5000;
  DiskGuard guard("/data", alarm, [&free](const std::filesystem::path&) { return std::optional(free); });
  const auto t0 = std::chrono::steady_clock::time_point{} + 1h;
  guard.poll(t0);
  EXPECT_FALSE(alarm.holding());
  EXPECT_EQ(guard.log_lines(), 0u);  // nothing changed: nothing said
  free = 10;
  guard.poll(t0 + 1s);
  EXPECT_TRUE(alarm.holding());
  EXPECT_EQ(guard.log_lines(), 1u);
  // Flapping at the line inside the interval: the alarm follows every reading, the log does not.
  free = 5000;
  guard.poll(t0 + 2s);
  EXPECT_FALSE(alarm.holding());
  free = 10;
  guard.poll(t0 + 3s);
  free = 5000;
  guard.poll(t0 + 4s);
  EXPECT_FALSE(alarm.holding());
  EXPECT_EQ(guard.log_lines(), 1u);
  // Once the interval is over, the state in force is said, once.
  guard.poll(t0 + 1s + DiskGuard::kLogInterval);
  EXPECT_EQ(guard.log_lines(), 2u);
  guard.poll(t0 + 2s + DiskGuard::kLogInterval * 2);
  EXPECT_EQ(guard.log_lines(), 2u);
}

TEST(DiskGuard, AnUnreadableDiskHoldsNobody) {
  core::DiskAlarm alarm(1000);
  DiskGuard guard("/gone", alarm, [](const std::filesystem::path&) { return std::optional<std::uint64_t>(); });
  guard.poll();
  EXPECT_FALSE(alarm.holding());
  EXPECT_FALSE(alarm.measured());
}

}  // namespace
}  // namespace carrier::admin
