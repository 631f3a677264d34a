#include "core/deadline.hpp"

#include <gtest/gtest.h>

namespace carrier::core {
namespace {

constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::uint64_t kMaxSpan = std::numeric_limits<std::uint64_t>::max();

TEST(Deadline, AddsOrdinarySpans) {
  EXPECT_EQ(deadline_after(1'700'000'000'000, 0), 1'700'000'000'000);
  EXPECT_EQ(deadline_after(1'700'000'000'000, 3000), 1'700'000'003'000);
  EXPECT_EQ(deadline_after(0, 1), 1);
}

TEST(Deadline, SaturatesInsteadOfWrapping) {
  const std::int64_t now = 1'700'000'000'000;
  EXPECT_EQ(deadline_after(now, 9'223'372'036'854'775'000ULL), kNeverMs);  // the `delay` that wrapped
  EXPECT_EQ(deadline_after(now, static_cast<std::uint64_t>(kNeverMs)), kNeverMs);
  EXPECT_EQ(deadline_after(now, 1ULL << 63), kNeverMs);
  EXPECT_EQ(deadline_after(now, kMaxSpan), kNeverMs);
  EXPECT_EQ(deadline_after(kNeverMs, 1), kNeverMs);
  EXPECT_EQ(deadline_after(kNeverMs - 5, 5), kNeverMs);
  EXPECT_EQ(deadline_after(kNeverMs - 5, 4), kNeverMs - 1);
}

TEST(Deadline, NegativeBases) {
  EXPECT_EQ(deadline_after(-10, 3), -7);
  EXPECT_EQ(deadline_after(-10, 10), 0);
  EXPECT_EQ(deadline_after(-10, 15), 5);
  EXPECT_EQ(deadline_after(kMin, 0), kMin);
  EXPECT_EQ(deadline_after(kMin, 1), kMin + 1);
  EXPECT_EQ(deadline_after(kMin, kMaxSpan), kNeverMs);  // -2^63 + 2^64 - 1 = 2^63 - 1
  EXPECT_EQ(deadline_after(kMin, 1ULL << 63), 0);
}

static_assert(deadline_after(1, kMaxSpan) == kNeverMs);

}  // namespace
}  // namespace carrier::core
