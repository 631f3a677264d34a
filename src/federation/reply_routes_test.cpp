#include "federation/reply_routes.hpp"

#include <gtest/gtest.h>

namespace carrier::federation {
namespace {

using namespace std::chrono_literals;
using Clock = ReplyRoutes::Clock;

TEST(ReplyRoutes, LearnsAndFindsTheWayBack) {
  ReplyRoutes routes(10, 60s);
  const auto now = Clock::now();
  EXPECT_TRUE(routes.learn("carrier-x.r", {3, 7}, now).empty());
  const auto* stack = routes.use("carrier-x.r", now);
  ASSERT_NE(stack, nullptr);
  EXPECT_EQ(*stack, (std::vector<std::int32_t>{3, 7}));
  EXPECT_EQ(routes.use("carrier-x.other", now), nullptr);
}

TEST(ReplyRoutes, RelearningReplacesTheStack) {
  ReplyRoutes routes(10, 60s);
  const auto now = Clock::now();
  (void)routes.learn("q", {1}, now);
  (void)routes.learn("q", {2, 5}, now);
  EXPECT_EQ(routes.size(), 1u);
  EXPECT_EQ(*routes.use("q", now), (std::vector<std::int32_t>{2, 5}));
}

TEST(ReplyRoutes, ForgetsTheLeastRecentlyUsedWhenFull) {
  ReplyRoutes routes(2, 60s);
  const auto now = Clock::now();
  (void)routes.learn("a", {1}, now);
  (void)routes.learn("b", {1}, now);
  (void)routes.use("a", now);  // b is now the least recently used
  EXPECT_EQ(routes.learn("c", {1}, now), std::vector<std::string>{"b"});
  EXPECT_TRUE(routes.contains("a"));
  EXPECT_FALSE(routes.contains("b"));
  EXPECT_TRUE(routes.contains("c"));
  EXPECT_EQ(routes.size(), 2u);
}

TEST(ReplyRoutes, ExpiresIdleRoutesOnly) {
  ReplyRoutes routes(10, 10s);
  const auto t0 = Clock::now();
  (void)routes.learn("old", {1}, t0);
  (void)routes.learn("busy", {1}, t0);
  (void)routes.use("busy", t0 + 8s);
  EXPECT_EQ(routes.expire(t0 + 12s), std::vector<std::string>{"old"});
  EXPECT_TRUE(routes.contains("busy"));
  EXPECT_EQ(routes.expire(t0 + 19s), std::vector<std::string>{"busy"});
  EXPECT_EQ(routes.size(), 0u);
}

}  // namespace
}  // namespace carrier::federation
