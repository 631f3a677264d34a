#include "federation/reconnect_backoff.hpp"

#include <gtest/gtest.h>

namespace carrier::federation {
namespace {

TEST(ReconnectBackoff, GrowsRandomlyUpToTheCapAndResets) {
  ReconnectBackoff b(100, 1000, 42);
  std::uint32_t base = 100;
  for (int i = 0; i < 10; ++i) {
    const auto d = b.next_delay_ms();
    EXPECT_GE(d, std::max<std::uint32_t>(100, base / 2));
    EXPECT_LE(d, base);
    base = std::min<std::uint32_t>(base * 2, 1000);
  }
  b.reset();
  EXPECT_EQ(b.next_delay_ms(), 100u);
}

TEST(ReconnectBackoff, DelaysDifferBetweenLinks) {
  ReconnectBackoff a(100, 10000, 1);
  ReconnectBackoff b(100, 10000, 2);
  bool differ = false;
  for (int i = 0; i < 8; ++i) differ |= a.next_delay_ms() != b.next_delay_ms();
  EXPECT_TRUE(differ);
}

}  // namespace
}  // namespace carrier::federation
