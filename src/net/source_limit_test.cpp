#include "net/source_limit.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace carrier::net {
namespace {

using namespace std::chrono_literals;
using Clock = SourceLimiter::Clock;

SourceLimits limits(std::size_t total, std::size_t per_source, std::uint32_t rate, std::uint32_t burst,
                    std::size_t sources = 100) {
  SourceLimits l;
  l.max_connections = total;
  l.max_connections_per_source = per_source;
  l.connection_rate_per_source = rate;
  l.connection_burst_per_source = burst;
  l.max_sources = sources;
  return l;
}

TEST(SourceLimiterTest, CapsOneAddressWhileAnotherGetsIn) {
  SourceLimiter limiter(limits(10, 2, 0, 0));
  const auto now = Clock::now();
  auto a = limiter.admit("10.0.0.1", now);
  auto b = limiter.admit("10.0.0.1", now);
  EXPECT_TRUE(a.counted());
  EXPECT_TRUE(b.counted());
  auto c = limiter.admit("10.0.0.1", now);
  EXPECT_FALSE(c.counted());
  EXPECT_EQ(c.refusal(), Refusal::connections_per_source);
  auto d = limiter.admit("10.0.0.2", now);
  EXPECT_TRUE(d.counted());
  EXPECT_EQ(limiter.connections(), 3u);
  a.release();
  EXPECT_TRUE(limiter.admit("10.0.0.1", now).counted());  // a place came free
}

TEST(SourceLimiterTest, CapsTheTotal) {
  SourceLimiter limiter(limits(2, 10, 0, 0));
  const auto now = Clock::now();
  auto a = limiter.admit("10.0.0.1", now);
  auto b = limiter.admit("10.0.0.2", now);
  auto c = limiter.admit("10.0.0.3", now);
  EXPECT_EQ(c.refusal(), Refusal::connections);
  { Admission moved(std::move(a)); }  // destruction releases, once
  EXPECT_EQ(limiter.connections(), 1u);
  EXPECT_TRUE(limiter.admit("10.0.0.3", now).counted());
  EXPECT_EQ(limiter.connections(), 1u);
}

TEST(SourceLimiterTest, RateIsATokenBucketThatRefills) {
  SourceLimiter limiter(limits(100, 100, 2, 3));  // 3 at once, then 2 a second
  auto now = Clock::now();
  std::vector<Admission> held;
  for (int i = 0; i < 3; ++i) held.push_back(limiter.admit("10.0.0.1", now));
  for (auto& a : held) EXPECT_TRUE(a.counted());
  EXPECT_EQ(limiter.admit("10.0.0.1", now).refusal(), Refusal::connection_rate);
  EXPECT_TRUE(limiter.admit("10.0.0.2", now).counted());  // another address has its own bucket
  now += 499ms;
  EXPECT_EQ(limiter.admit("10.0.0.1", now).refusal(), Refusal::connection_rate);
  now += 2ms;  // one token after half a second
  EXPECT_TRUE(limiter.admit("10.0.0.1", now).counted());
  EXPECT_EQ(limiter.admit("10.0.0.1", now).refusal(), Refusal::connection_rate);
  now += 1h;  // refills to the burst, not beyond
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.admit("10.0.0.1", now).counted());
  EXPECT_FALSE(limiter.admit("10.0.0.1", now).counted());
}

TEST(SourceLimiterTest, ManyAddressesCannotGrowTheTable) {
  SourceLimiter limiter(limits(1000, 10, 1, 1, 50));
  auto now = Clock::now();
  std::vector<Admission> open;
  for (int i = 0; i < 100'000; ++i) {
    auto a = limiter.admit("10.1." + std::to_string(i / 256) + "." + std::to_string(i % 256), now);
    EXPECT_TRUE(a.counted());
    if (i % 10'000 == 0) open.push_back(std::move(a));  // a few stay connected
  }
  EXPECT_LE(limiter.sources(), 50u + open.size());
  EXPECT_EQ(limiter.connections(), open.size());
  open.clear();
  EXPECT_EQ(limiter.connections(), 0u);
}

TEST(SourceLimiterTest, AnIdleAddressWithAFullBucketIsForgotten) {
  SourceLimiter limiter(limits(10, 10, 0, 0));
  const auto now = Clock::now();
  { auto a = limiter.admit("10.0.0.1", now); }
  EXPECT_EQ(limiter.sources(), 0u);
}

TEST(SourceLimiterTest, AnEmptySourceCountsInTheTotalOnly) {
  SourceLimiter limiter(limits(3, 1, 1, 1));
  const auto now = Clock::now();
  auto a = limiter.admit("", now);
  auto b = limiter.admit("", now);  // neither the per-source cap nor the rate applies
  EXPECT_TRUE(a.counted());
  EXPECT_TRUE(b.counted());
  EXPECT_EQ(limiter.sources(), 0u);
  auto c = limiter.admit("10.0.0.1", now);
  EXPECT_TRUE(c.counted());
  EXPECT_EQ(limiter.admit("", now).refusal(), Refusal::connections);  // the total does
  a.release();
  b.release();
  EXPECT_EQ(limiter.connections(), 1u);
}

}  // namespace
}  // namespace carrier::net
