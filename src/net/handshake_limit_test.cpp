#include "net/handshake_limit.hpp"

#include <gtest/gtest.h>

#include <utility>

namespace carrier::net {
namespace {

TEST(HandshakeLimitTest, RefusesPastTheCapAndCountsReleases) {
  HandshakeLimit limit(2);
  auto a = limit.try_acquire();
  auto b = limit.try_acquire();
  EXPECT_TRUE(a.held());
  EXPECT_TRUE(b.held());
  EXPECT_FALSE(limit.try_acquire().held());
  EXPECT_EQ(limit.in_use(), 2u);
  a.release();
  a.release();  // a second release is a no-op
  EXPECT_EQ(limit.in_use(), 1u);
  auto c = limit.try_acquire();
  EXPECT_TRUE(c.held());
  EXPECT_FALSE(limit.try_acquire().held());
}

TEST(HandshakeLimitTest, MovingASlotKeepsOneCountAndDestructionReleases) {
  HandshakeLimit limit(1);
  {
    auto a = limit.try_acquire();
    HandshakeSlot moved(std::move(a));
    EXPECT_FALSE(a.held());
    EXPECT_TRUE(moved.held());
    EXPECT_EQ(limit.in_use(), 1u);
    HandshakeSlot assigned;
    assigned = std::move(moved);
    EXPECT_EQ(limit.in_use(), 1u);
  }
  EXPECT_EQ(limit.in_use(), 0u);
  EXPECT_TRUE(limit.try_acquire().held());
}

}  // namespace
}  // namespace carrier::net
