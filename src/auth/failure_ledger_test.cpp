#include "auth/failure_ledger.hpp"

#include <gtest/gtest.h>

#include <string>

namespace carrier::auth {
namespace {

using std::chrono::milliseconds;

const FailureLedger::TimePoint t0{std::chrono::seconds(1000)};

FailureLimits limits(std::uint32_t per_source, std::uint32_t total, std::size_t max_sources = 100) {
  return FailureLimits{per_source, total, milliseconds(60'000), max_sources};
}

TEST(FailureLedgerTest, UnknownSourceIsClean) {
  FailureLedger ledger(limits(3, 100));
  EXPECT_EQ(ledger.standing("10.0.0.1", t0), Standing::clean);
  EXPECT_EQ(ledger.sources(), 0u);
}

TEST(FailureLedgerTest, ASourceIsSuspectAfterAFailureAndBarredAfterItsBudget) {
  FailureLedger ledger(limits(3, 100));
  ledger.record_failure("10.0.0.1", t0);
  EXPECT_EQ(ledger.standing("10.0.0.1", t0), Standing::suspect);
  ledger.record_failure("10.0.0.1", t0);
  EXPECT_EQ(ledger.standing("10.0.0.1", t0), Standing::suspect);
  ledger.record_failure("10.0.0.1", t0);
  EXPECT_EQ(ledger.standing("10.0.0.1", t0), Standing::barred);
  // Others are not affected.
  EXPECT_EQ(ledger.standing("10.0.0.2", t0), Standing::clean);
  // One failure drains every window / per_source (20 s): then one more try, as a suspect.
  EXPECT_EQ(ledger.standing("10.0.0.1", t0 + milliseconds(19'000)), Standing::barred);
  EXPECT_EQ(ledger.standing("10.0.0.1", t0 + milliseconds(20'001)), Standing::suspect);
  // All of it drained: clean again, and the entry is dropped.
  EXPECT_EQ(ledger.standing("10.0.0.1", t0 + milliseconds(60'001)), Standing::clean);
  EXPECT_EQ(ledger.sources(), 0u);
}

TEST(FailureLedgerTest, ASourceWithACheckWaitingIsSuspectUntilItEnds) {
  FailureLedger ledger(limits(3, 100));
  ledger.begin_check("10.0.0.1", t0);
  EXPECT_EQ(ledger.standing("10.0.0.1", t0), Standing::suspect);
  EXPECT_EQ(ledger.standing("10.0.0.2", t0), Standing::clean);
  ledger.end_check("10.0.0.1", t0);
  EXPECT_EQ(ledger.standing("10.0.0.1", t0), Standing::clean);
  EXPECT_EQ(ledger.sources(), 0u);
  ledger.end_check("10.0.0.9", t0);  // unknown: nothing happens
  EXPECT_EQ(ledger.sources(), 0u);
}

TEST(FailureLedgerTest, TheBrokerWideBudgetBarsSuspectsButNotCleanSources) {
  FailureLedger ledger(limits(2, 3));
  ledger.record_failure("10.0.0.1", t0);
  ledger.record_failure("10.0.0.2", t0);
  EXPECT_EQ(ledger.standing("10.0.0.1", t0), Standing::suspect);
  ledger.record_failure("10.0.0.3", t0);
  EXPECT_EQ(ledger.standing("10.0.0.1", t0), Standing::barred);
  EXPECT_EQ(ledger.standing("10.0.0.3", t0), Standing::barred);
  EXPECT_EQ(ledger.standing("10.0.0.4", t0), Standing::clean);
  // The broker-wide bucket drains 3 per minute: after 20 s one more suspect may try (its own
  // bucket, 2 per minute, still holds a third of a failure).
  EXPECT_EQ(ledger.standing("10.0.0.1", t0 + milliseconds(20'001)), Standing::suspect);
}

TEST(FailureLedgerTest, TheTableOfSourcesIsBoundedAndForgetsTheLeastRecentlySeen) {
  FailureLedger ledger(limits(1, 1'000'000, 10));
  for (int i = 0; i < 100'000; ++i) ledger.record_failure("10.1." + std::to_string(i), t0);
  EXPECT_EQ(ledger.sources(), 10u);
  EXPECT_EQ(ledger.standing("10.1.99999", t0), Standing::barred);
  EXPECT_EQ(ledger.standing("10.1.0", t0), Standing::clean);  // forgotten
}

TEST(FailureLedgerTest, TheFailureDelayDoublesPerFailureIsBoundedAndDecays) {
  FailureLedger ledger(limits(10, 1000));  // 10 per source a minute: one drains every 6 s
  const auto base = milliseconds(1000);
  const auto max = milliseconds(10'000);
  EXPECT_EQ(ledger.failure_delay("10.0.0.1", t0, base, max), base);  // unknown source: the base
  ledger.record_failure("10.0.0.1", t0);
  EXPECT_EQ(ledger.failure_delay("10.0.0.1", t0, base, max), milliseconds(1000));
  ledger.record_failure("10.0.0.1", t0);
  EXPECT_EQ(ledger.failure_delay("10.0.0.1", t0, base, max), milliseconds(2000));
  ledger.record_failure("10.0.0.1", t0);
  EXPECT_EQ(ledger.failure_delay("10.0.0.1", t0, base, max), milliseconds(4000));
  ledger.record_failure("10.0.0.1", t0);
  EXPECT_EQ(ledger.failure_delay("10.0.0.1", t0, base, max), milliseconds(8000));
  for (int i = 0; i < 40; ++i) ledger.record_failure("10.0.0.1", t0);
  EXPECT_EQ(ledger.failure_delay("10.0.0.1", t0, base, max), max);  // bounded
  EXPECT_EQ(ledger.failure_delay("10.0.0.2", t0, base, max), base);  // another source is not slowed
  // 44 failures drain 10 a minute: after 4 minutes 4 remain (8 s), after 4.5 all but one.
  EXPECT_EQ(ledger.failure_delay("10.0.0.1", t0 + milliseconds(240'000), base, max), milliseconds(8000));
  EXPECT_EQ(ledger.failure_delay("10.0.0.1", t0 + milliseconds(258'000), base, max), milliseconds(1000));
}

}  // namespace
}  // namespace carrier::auth
