#include "session/written_acks.hpp"

#include <gtest/gtest.h>

#include <map>

namespace carrier::session {
namespace {

using Acked = std::map<std::uint64_t, WrittenAcks::Tags>;

Acked done(WrittenAcks& acks) {
  Acked out;
  acks.on_write_done([&](core::ConsumerId c, WrittenAcks::Tags tags) {
    auto& list = out[c.value()];
    list.insert(list.end(), tags.begin(), tags.end());
  });
  return out;
}

TEST(WrittenAcks, AcksOnlyWhatTheFinishedWriteCarried) {
  WrittenAcks acks;
  acks.stage(core::ConsumerId(1), 10);
  acks.stage(core::ConsumerId(1), 11);
  EXPECT_TRUE(done(acks).empty()) << "nothing is acked before the write starts";
  acks.on_write_started();
  acks.stage(core::ConsumerId(1), 12);  // encoded while that write is under way: the next one
  EXPECT_EQ(done(acks), (Acked{{1, {10, 11}}}));
  EXPECT_TRUE(done(acks).empty());
  acks.on_write_started();
  EXPECT_EQ(done(acks), (Acked{{1, {12}}}));
  EXPECT_TRUE(acks.empty());
}

TEST(WrittenAcks, GroupsByConsumerInDeliveryOrder) {
  WrittenAcks acks;
  acks.stage(core::ConsumerId(1), 1);
  acks.stage(core::ConsumerId(2), 1);
  acks.stage(core::ConsumerId(1), 2);
  acks.stage(core::ConsumerId(2), 2);
  acks.stage(core::ConsumerId(1), 3);
  acks.on_write_started();
  EXPECT_EQ(done(acks), (Acked{{1, {1, 2, 3}}, {2, {1, 2}}}));
}

TEST(WrittenAcks, AWriteStartedBeforeTheLastFinishedCarriesBoth) {
  WrittenAcks acks;
  acks.stage(core::ConsumerId(1), 1);
  acks.on_write_started();
  acks.stage(core::ConsumerId(1), 2);
  acks.stage(core::ConsumerId(3), 7);
  acks.on_write_started();
  EXPECT_EQ(done(acks), (Acked{{1, {1, 2}}, {3, {7}}}));
}

TEST(WrittenAcks, ClearForgetsStagedAndWriting) {
  WrittenAcks acks;
  acks.stage(core::ConsumerId(1), 1);
  acks.on_write_started();
  acks.stage(core::ConsumerId(1), 2);
  acks.clear();
  EXPECT_TRUE(acks.empty());
  acks.on_write_started();
  EXPECT_TRUE(done(acks).empty());
  acks.stage(core::ConsumerId(1), 3);  // the cached list is not the cleared one
  acks.on_write_started();
  EXPECT_EQ(done(acks), (Acked{{1, {3}}}));
}

}  // namespace
}  // namespace carrier::session
