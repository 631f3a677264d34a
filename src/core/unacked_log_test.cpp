#include "core/unacked_log.hpp"

#include <gtest/gtest.h>

#include <string>

namespace carrier::core {
namespace {

TEST(UnackedLog, TakesInOrderAndOutOfOrder) {
  UnackedLog<std::string> log;
  // append, not "m" + std::to_string(t): g++ 12 at -O3 reports a false -Wrestrict in the
  // inlined insert of operator+(const char*, string&&) (GCC bug 105329).
  for (std::uint64_t t = 1; t <= 5; ++t) log.push(t, std::string("m").append(std::to_string(t)));
  EXPECT_EQ(log.size(), 5u);
  EXPECT_EQ(log.take(1), "m1");
  EXPECT_EQ(log.take(4), "m4");  // a hole in the middle
  EXPECT_FALSE(log.take(4));     // taken already
  EXPECT_FALSE(log.take(9));     // never pushed
  EXPECT_FALSE(log.contains(4));
  EXPECT_TRUE(log.contains(3));
  EXPECT_EQ(log.size(), 3u);
  EXPECT_EQ(log.take(2), "m2");
  EXPECT_EQ(log.take(3), "m3");  // the hole at 4 is skipped past
  EXPECT_EQ(log.take(5), "m5");
  EXPECT_TRUE(log.empty());
  EXPECT_FALSE(log.take(0));
}

TEST(UnackedLog, ANeverUsedLogAnswersEveryCallAndHoldsNoSlots) {
  // Most consumers of a quiet queue never get a delivery: their log is made on the first push.
  UnackedLog<std::string> log;
  EXPECT_TRUE(log.empty());
  EXPECT_EQ(log.slots(), 0u);
  EXPECT_FALSE(log.contains(1));
  EXPECT_FALSE(log.take(1));
  EXPECT_TRUE(log.take_all().empty());
  int visited = 0;
  log.for_each([&](const std::string&) { ++visited; });
  EXPECT_EQ(visited, 0);
  log.push(1, "m1");
  EXPECT_TRUE(log.contains(1));
  EXPECT_EQ(log.take(1), "m1");
  EXPECT_TRUE(log.empty());
}

TEST(UnackedLog, TakeAllKeepsTagOrderAndEmpties) {
  UnackedLog<int> log;
  for (int t = 1; t <= 6; ++t) log.push(static_cast<std::uint64_t>(t), t * 10);
  ASSERT_TRUE(log.take(3));
  std::vector<int> seen;
  log.for_each([&](int v) { seen.push_back(v); });
  EXPECT_EQ(seen, (std::vector<int>{10, 20, 40, 50, 60}));
  EXPECT_EQ(log.take_all(), (std::vector<int>{10, 20, 40, 50, 60}));
  EXPECT_TRUE(log.empty());
  EXPECT_FALSE(log.take(1));
  log.push(7, 70);  // usable again, tags still increasing
  EXPECT_EQ(log.take(7), 70);
}

TEST(UnackedLog, AnOldUnackedEntryDoesNotPinEverythingAfterIt) {
  UnackedLog<int> log;
  log.push(1, 1);  // never acked
  for (std::uint64_t t = 2; t < 100'000; ++t) {
    log.push(t, 0);
    ASSERT_TRUE(log.take(t));
    ASSERT_LE(log.slots(), 130u) << "holes behind the oldest entry are not compacted";
  }
  EXPECT_EQ(log.size(), 1u);
  EXPECT_EQ(log.take(1), 1);
  EXPECT_TRUE(log.empty());
}

}  // namespace
}  // namespace carrier::core
