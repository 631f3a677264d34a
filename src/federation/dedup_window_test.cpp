#include "federation/dedup_window.hpp"

#include <gtest/gtest.h>

namespace carrier::federation {
namespace {

model::MessageId id(std::uint64_t n) { return model::MessageId{1, n}; }

TEST(DedupWindow, SecondArrivalIsADuplicate) {
  DedupWindow w(10);
  HopInfo* first = w.insert(id(1), HopInfo{4, 1, {}, {}, {7}, {}});
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first, w.find(id(1))) << "insert hands back the entry it made";
  EXPECT_EQ(w.insert(id(1), HopInfo{}), nullptr);
  EXPECT_EQ(w.duplicates(), 0u) << "the caller counts duplicates";
  w.count_duplicate();
  EXPECT_EQ(w.duplicates(), 1u);
  ASSERT_NE(w.find(id(1)), nullptr);
  EXPECT_EQ(w.find(id(1))->ttl, 4);  // the first arrival's route is kept
  EXPECT_EQ(w.find(id(1))->stack, std::vector<std::int32_t>{7});
  EXPECT_EQ(w.find(id(2)), nullptr);
}

TEST(DedupWindow, OldestForgottenFirst) {
  DedupWindow w(3);
  for (std::uint64_t n = 1; n <= 4; ++n) EXPECT_NE(nullptr, w.insert(id(n), {}));
  EXPECT_EQ(w.size(), 3u);
  EXPECT_EQ(w.find(id(1)), nullptr);
  EXPECT_NE(w.find(id(4)), nullptr);
  EXPECT_NE(nullptr, w.insert(id(1), {}));  // forgotten, so taken again
}

TEST(DedupWindow, ErasedIdIsTakenAgainAndTheBoundHolds) {
  DedupWindow w(2);
  EXPECT_NE(nullptr, w.insert(id(1), {}));
  w.erase(id(1));
  EXPECT_NE(nullptr, w.insert(id(1), {}));
  for (std::uint64_t n = 2; n < 100; ++n) w.insert(id(n), {});
  EXPECT_LE(w.size(), 2u);
}

TEST(DedupWindow, ReinsertedIdIsNotForgottenForItsEarlierPlace) {
  DedupWindow w(2);
  EXPECT_NE(nullptr, w.insert(id(1), {}));
  w.erase(id(1));
  EXPECT_NE(nullptr, w.insert(id(2), {}));
  EXPECT_NE(nullptr, w.insert(id(1), {}));  // now the newest
  EXPECT_NE(nullptr, w.insert(id(3), {}));  // forgets 2, the oldest live entry
  EXPECT_NE(w.find(id(1)), nullptr);
  EXPECT_EQ(w.find(id(2)), nullptr);
}

TEST(DedupWindow, ForgottenEntriesHandBackTheirStoreRecords) {
  DedupWindow w(2);
  std::vector<model::MessageId> forgotten;
  HopInfo stored;
  stored.record = id(100);
  EXPECT_NE(nullptr, w.insert(id(1), stored, &forgotten));
  EXPECT_NE(nullptr, w.insert(id(2), {}, &forgotten));  // no record
  EXPECT_NE(nullptr, w.insert(id(3), {}, &forgotten));
  EXPECT_NE(nullptr, w.insert(id(4), {}, &forgotten));
  EXPECT_EQ(forgotten, std::vector<model::MessageId>{id(100)});
}

}  // namespace
}  // namespace carrier::federation
