#include "store/log/acks_in_flight.hpp"

#include <gtest/gtest.h>

namespace carrier::store::log {
namespace {

model::MessageId ack_id(std::uint64_t n) { return model::MessageId{7, n}; }

std::vector<bool> hidden_of(const AcksInFlight& a, std::string_view queue, std::vector<model::MessageId> ids) {
  std::vector<bool> hidden;
  a.hides(queue, ids, hidden);
  return hidden;
}

TEST(AcksInFlight, HidesOnlyTheAckedIdsOfTheirQueue) {
  AcksInFlight a;
  a.add({Record::acked("queue:a", ack_id(1)), Record::acked("queue:b", ack_id(2)), Record::acked("queue:a", ack_id(3))});
  EXPECT_EQ(a.size(), 3u);
  EXPECT_EQ(hidden_of(a, "queue:a", {ack_id(1), ack_id(2), ack_id(3)}), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(hidden_of(a, "queue:b", {ack_id(1), ack_id(2)}), (std::vector<bool>{false, true}));
  EXPECT_EQ(hidden_of(a, "queue:c", {ack_id(1)}), std::vector<bool>{false});
  // A name that is a prefix of another is another queue.
  EXPECT_EQ(hidden_of(a, "queue:", {ack_id(1)}), std::vector<bool>{false});
}

TEST(AcksInFlight, CountsTheSameAckQueuedTwiceUntilBothAreApplied) {
  AcksInFlight a;
  const Batch once{Record::acked("queue:a", ack_id(1))};
  a.add(once);
  a.add(once);
  EXPECT_EQ(a.size(), 1u);
  a.remove(once);
  EXPECT_EQ(hidden_of(a, "queue:a", {ack_id(1)}), std::vector<bool>{true}) << "one of the two is still in flight";
  a.remove(once);
  EXPECT_EQ(hidden_of(a, "queue:a", {ack_id(1)}), std::vector<bool>{false});
  EXPECT_EQ(a.size(), 0u);
  a.remove(once);  // applied again (a failed group's batch): harmless
  EXPECT_EQ(a.size(), 0u);
}

TEST(AcksInFlight, BatchesWithoutAcksAndOtherRecordsAreIgnored) {
  AcksInFlight a;
  a.add({Record::delivered("queue:a", ack_id(1), 2)});
  EXPECT_EQ(a.size(), 0u);
  a.add({Record::delivered("queue:a", ack_id(1), 2), Record::acked("queue:a", ack_id(2))});
  EXPECT_EQ(hidden_of(a, "queue:a", {ack_id(1), ack_id(2)}), (std::vector<bool>{false, true}));
  a.remove({Record::delivered("queue:a", ack_id(1), 2), Record::acked("queue:a", ack_id(2))});
  EXPECT_EQ(a.size(), 0u);
}

}  // namespace
}  // namespace carrier::store::log
