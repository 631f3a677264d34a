#include "relay/mailbox.hpp"

#include <gtest/gtest.h>

namespace carrier::relay {
namespace {

Mailbox::Item pipe_item(std::string bytes, std::uint64_t tag) {
  return Mailbox::Item{std::move(bytes), core::ConsumerId(7), tag, true};
}

TEST(Mailbox, HandsOutInOrderAndTheNextPollAcknowledges) {
  Mailbox box;
  box.push(Mailbox::Item{"r1"});
  box.push(pipe_item("p1", 1));
  box.push(pipe_item("p2", 2));
  std::string out;
  EXPECT_EQ(box.hand_out(2, 100, 1, out), 2u);
  EXPECT_EQ(out, "r1p1");
  EXPECT_EQ(box.size(), 3u);
  auto acked = box.acknowledge();
  ASSERT_EQ(acked.size(), 2u);
  EXPECT_FALSE(acked[0].from_pipe);  // the response needs no broker ack
  EXPECT_EQ(acked[1].tag, 1u);
  EXPECT_EQ(box.size(), 1u);
}

TEST(Mailbox, UnacknowledgedGoesBackToTheFrontAfterTheTimeout) {
  Mailbox box;
  box.push(pipe_item("a", 1));
  box.push(pipe_item("b", 2));
  std::string out;
  box.hand_out(1, 100, 1, out);
  EXPECT_EQ(box.oldest_in_flight_ms(), 100);
  EXPECT_EQ(box.redeliver_older_than(100), 0u);
  EXPECT_EQ(box.redeliver_older_than(101), 1u);
  out.clear();
  box.hand_out(5, 200, 2, out);
  EXPECT_EQ(out, "ab");
}

TEST(Mailbox, ClearReturnsEverything) {
  Mailbox box;
  box.push(Mailbox::Item{"r"});
  box.push(pipe_item("a", 1));
  std::string out;
  box.hand_out(1, 0, 1, out);
  box.push(pipe_item("b", 2));
  EXPECT_EQ(box.clear().size(), 3u);
  EXPECT_EQ(box.size(), 0u);
}

// The lost-answer case: batch 2 was written as the connection broke; the peer's next poll says
// it got batch 1 only, so batch 2 is handed out again instead of being taken as received.
TEST(Mailbox, AnAckNamingAnEarlierBatchHandsTheLaterOnesOutAgain) {
  Mailbox box;
  box.push(pipe_item("a", 1));
  box.push(pipe_item("b", 2));
  box.push(pipe_item("c", 3));
  std::string out;
  box.hand_out(1, 0, 1, out);
  box.hand_out(2, 0, 2, out);
  EXPECT_EQ(out, "abc");
  auto acked = box.acknowledge(1);
  ASSERT_EQ(acked.size(), 1u);
  EXPECT_EQ(acked[0].tag, 1u);
  EXPECT_FALSE(box.has_in_flight());
  out.clear();
  box.hand_out(5, 0, 3, out);
  EXPECT_EQ(out, "bc");
  EXPECT_EQ(box.acknowledge(3).size(), 2u);
  EXPECT_EQ(box.size(), 0u);
}

}  // namespace
}  // namespace carrier::relay
