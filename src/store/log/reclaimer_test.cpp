#include "store/log/reclaimer.hpp"

#include <gtest/gtest.h>

namespace carrier::store::log {
namespace {

const model::MessageId kA{1, 1};
const model::MessageId kB{1, 2};
const model::MessageId kC{1, 3};

TEST(SegmentReclaimer, FullyAckedOlderSegmentGoesButNeverTheActiveOne) {
  SegmentReclaimer r;
  r.add_segment(1);
  r.on_message(1, "q", kA);
  r.add_segment(2);
  EXPECT_EQ(r.on_ack(2, "q", kA), 1u);
  EXPECT_EQ(r.deletable(2), (std::vector<std::uint64_t>{1}));
  // Segment 2 holds only an ack, but it is being written.
  r.forget(1);
  EXPECT_TRUE(r.deletable(2).empty());
  EXPECT_EQ(r.deletable(3), (std::vector<std::uint64_t>{2}));
}

// The rule the issue spells out: segment 2's ack covers a message in segment 1, which is
// still live because of another message. Deleting 2 first would resurrect kA at recovery.
TEST(SegmentReclaimer, AckSegmentWaitsForTheSegmentItsAcksCover) {
  SegmentReclaimer r;
  r.add_segment(1);
  r.on_message(1, "q", kA);
  r.on_message(1, "q", kB);
  r.add_segment(2);
  r.on_ack(2, "q", kA);
  r.add_segment(3);
  EXPECT_TRUE(r.deletable(3).empty()) << "2 refers to live segment 1";
  r.on_ack(3, "q", kB);
  EXPECT_EQ(r.deletable(3), (std::vector<std::uint64_t>{1}));
  // Only after 1 is gone may 2 follow: the caller iterates to the fixpoint.
  r.forget(1);
  EXPECT_EQ(r.deletable(3), (std::vector<std::uint64_t>{2}));
  r.forget(2);
  EXPECT_TRUE(r.deletable(3).empty());
  EXPECT_EQ(r.segment_count(), 1u);
}

TEST(SegmentReclaimer, ChainsResolveOverSeveralRounds) {
  SegmentReclaimer r;
  for (std::uint64_t s = 1; s <= 4; ++s) r.add_segment(s);
  r.on_message(1, "q", kA);
  r.on_message(2, "q", kB);
  r.on_ack(2, "q", kA);   // 2 -> 1
  r.on_ack(3, "q", kB);   // 3 -> 2
  int rounds = 0;
  std::vector<std::uint64_t> order;
  for (auto d = r.deletable(4); !d.empty(); d = r.deletable(4)) {
    ++rounds;
    for (auto id : d) {
      order.push_back(id);
      r.forget(id);
    }
  }
  EXPECT_EQ(order, (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_EQ(rounds, 3);
}

TEST(SegmentReclaimer, AckInTheSameSegmentCreatesNoDependency) {
  SegmentReclaimer r;
  r.add_segment(1);
  r.on_message(1, "q", kA);
  r.on_ack(1, "q", kA);
  r.add_segment(2);
  EXPECT_EQ(r.deletable(2), (std::vector<std::uint64_t>{1}));
}

TEST(SegmentReclaimer, DanglingAckAndDeliveredAreHarmless) {
  SegmentReclaimer r;
  r.add_segment(1);
  EXPECT_EQ(r.on_ack(1, "q", kC), 0u);
  r.apply(1, {Record::delivered("q", kC, 4)});
  r.add_segment(2);
  EXPECT_EQ(r.deletable(2), (std::vector<std::uint64_t>{1}));
}

TEST(SegmentReclaimer, QueuesAreSeparateKeys) {
  SegmentReclaimer r;
  r.add_segment(1);
  r.on_message(1, "queue:a", kA);
  r.on_message(1, "queue:b", kA);
  r.add_segment(2);
  r.on_ack(2, "queue:a", kA);
  EXPECT_EQ(r.live_in(1), 1u);
  EXPECT_TRUE(r.deletable(2).empty());
}

// The same key stored again while live: the newer copy's segment must outlive the older one,
// else deleting it (after an ack) would let the older copy come back.
TEST(SegmentReclaimer, ReAddedKeyKeepsItsNewSegmentBehindTheOld) {
  SegmentReclaimer r;
  r.add_segment(1);
  r.on_message(1, "q", kA);
  r.on_message(1, "q", kB);  // keeps segment 1 live
  r.add_segment(2);
  r.on_message(2, "q", kA);  // supersedes the copy in 1
  EXPECT_EQ(r.live_in(1), 1u);
  r.add_segment(3);
  EXPECT_EQ(r.on_ack(3, "q", kA), 2u);
  EXPECT_TRUE(r.deletable(3).empty()) << "2 depends on live 1; 3 depends on 2";
}

// The latest delivered record of a live message pins its segment, so the count survives
// reclamation; an older one, or one for an acked message, does not.
TEST(SegmentReclaimer, LatestDeliveredRecordPinsItsSegmentWhileTheMessageLives) {
  SegmentReclaimer r;
  r.add_segment(1);
  r.on_message(1, "q", kA);
  r.add_segment(2);
  r.on_delivered(2, "q", kA);
  r.add_segment(3);
  EXPECT_TRUE(r.deletable(3).empty());
  r.on_delivered(3, "q", kA);  // supersedes the one in 2
  r.add_segment(4);
  EXPECT_EQ(r.deletable(4), (std::vector<std::uint64_t>{2}));
  r.forget(2);
  r.on_ack(4, "q", kA);
  r.add_segment(5);
  EXPECT_EQ(r.deletable(5), (std::vector<std::uint64_t>{1, 3}));
}

// What a scan asks for a chunk of candidates: live here (its latest record in this segment, not
// skipped), and where its latest delivered record is.
TEST(SegmentReclaimer, ChecksManyCandidatesOfOneQueueAtOnce) {
  SegmentReclaimer r;
  r.add_segment(1);
  r.on_message(1, "q", kA);
  r.on_message(1, "q", kB);
  r.on_message(1, "q", kC);
  r.add_segment(2);
  r.on_message(2, "q", kB);  // stored again: its live copy is in 2 now
  r.on_delivered(2, "q", kC);
  r.on_ack(2, "q", kA);
  std::vector<bool> live;
  std::vector<std::uint64_t> delivered_in;
  // By ordinal: in 1, kA kB kC are records 0 1 2; in 2, kB is record 0 (then a delivered, an ack).
  const std::vector<std::uint32_t> ordinals{0, 1, 2};
  r.check_live(1, ordinals, {}, live, delivered_in);
  EXPECT_EQ(live, (std::vector<bool>{false, false, true}));
  EXPECT_EQ(delivered_in, (std::vector<std::uint64_t>{0, 0, 2}));
  r.check_live(1, ordinals, {false, false, true}, live, delivered_in);
  EXPECT_EQ(live, (std::vector<bool>{false, false, false})) << "skipped: an ack in flight";
  r.check_live(2, ordinals, {}, live, delivered_in);
  EXPECT_EQ(live, (std::vector<bool>{true, false, false})) << "only record 0 of segment 2 is a live message";
  r.check_live(3, ordinals, {}, live, delivered_in);
  EXPECT_EQ(live, (std::vector<bool>{false, false, false})) << "untracked segment";
}

}  // namespace
}  // namespace carrier::store::log
