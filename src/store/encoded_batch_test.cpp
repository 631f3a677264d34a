#include "store/encoded_batch.hpp"

#include <gtest/gtest.h>

#include "store/test_support.hpp"

namespace carrier::store {
namespace {

using testing::make_message;

std::vector<std::string> upserted(const GroupChanges& c) {
  std::vector<std::string> out;
  for (const auto& u : c.upserts) {
    out.push_back(*u.key.queue + "/" + u.message->correlation_id + "#" + std::to_string(u.delivery_count));
  }
  return out;
}

std::vector<std::string> keys(const std::vector<GroupChanges::Key>& ks) {
  std::vector<std::string> out;
  for (const auto& k : ks) out.push_back(*k.queue + "/" + std::to_string(k.id.lo & 0xff));
  return out;
}

TEST(EncodedBatch, OneMessageInSeveralQueuesIsEncodedOnce) {
  auto m = make_message(1);
  auto encoded = EncodedBatch::encode({Record::added("queue:a", m), Record::added("queue:b", m),
                                       Record::acked("queue:c", m->id), Record::added("queue:d", make_message(2))});
  ASSERT_TRUE(encoded.valid);
  EXPECT_EQ(encoded.blobs.size(), 2u);
  EXPECT_EQ(encoded.blob_of, (std::vector<std::uint32_t>{0, 0, EncodedBatch::kNoBlob, 1}));
}

TEST(EncodedBatch, AMessageRecordMustCarryItsOwnId) {
  Record r = Record::added("queue:a", make_message(1));
  r.message_id = make_message(2)->id;
  auto encoded = EncodedBatch::encode({r});
  ASSERT_FALSE(encoded.valid);
  EXPECT_EQ(encoded.valid.error().code, Errc::invalid_argument);
}

TEST(GroupChanges, AMessageStoredAndAckedInOneGroupIsOnlyADelete) {
  auto a = make_message(1);
  auto b = make_message(2);
  auto first = EncodedBatch::encode({Record::added("queue:q", a), Record::added("queue:q", b)});
  auto second = EncodedBatch::encode({Record::delivered("queue:q", a->id, 1), Record::acked("queue:q", a->id)});
  auto changes = GroupChanges::fold({&first, &second});
  EXPECT_EQ(upserted(changes), (std::vector<std::string>{"queue:q/corr-2#0"}));
  EXPECT_EQ(keys(changes.removals), (std::vector<std::string>{"queue:q/1"}));
  EXPECT_TRUE(changes.counts.empty());
}

TEST(GroupChanges, DeliveredAfterStoredSetsTheNewRowsCount) {
  auto a = make_message(1);
  auto first = EncodedBatch::encode({Record::added("queue:q", a)});
  auto second = EncodedBatch::encode({Record::delivered("queue:q", a->id, 3)});
  auto changes = GroupChanges::fold({&first, &second});
  EXPECT_EQ(upserted(changes), (std::vector<std::string>{"queue:q/corr-1#3"}));
  EXPECT_TRUE(changes.removals.empty());
}

TEST(GroupChanges, StoredAgainAfterAnAckIsAnUpsertAtItsNewPlace) {
  auto a = make_message(1);
  auto b = make_message(2);
  auto batch = EncodedBatch::encode({Record::added("queue:q", a), Record::added("queue:q", b),
                                     Record::acked("queue:q", a->id), Record::added("queue:q", a)});
  auto changes = GroupChanges::fold({&batch});
  EXPECT_EQ(upserted(changes), (std::vector<std::string>{"queue:q/corr-2#0", "queue:q/corr-1#0"}));
  EXPECT_TRUE(changes.removals.empty());
}

TEST(GroupChanges, KeysAreQueueAndIdAndHintsForOldRowsStayUpdates) {
  auto a = make_message(1);
  auto batch = EncodedBatch::encode({Record::added("queue:x", a), Record::acked("queue:y", a->id),
                                     Record::delivered("queue:z", a->id, 5), Record::acked("queue:w", a->id),
                                     Record::delivered("queue:w", a->id, 6)});
  auto changes = GroupChanges::fold({&batch});
  EXPECT_EQ(upserted(changes), (std::vector<std::string>{"queue:x/corr-1#0"}));
  EXPECT_EQ(keys(changes.removals), (std::vector<std::string>{"queue:y/1", "queue:w/1"}));
  ASSERT_EQ(changes.counts.size(), 1u);
  EXPECT_EQ(*changes.counts[0].first.queue, "queue:z");
  EXPECT_EQ(changes.counts[0].second, 5u);
}

}  // namespace
}  // namespace carrier::store
