#include "model/message_id.hpp"

#include <gtest/gtest.h>

#include <set>

namespace carrier::model {
namespace {

TEST(MessageId, TextRoundTrip) {
  MessageIdGenerator gen(42);
  auto id = gen.next();
  auto text = id.to_string();
  ASSERT_EQ(text.size(), 36u);
  EXPECT_EQ(text[14], '7');  // UUID version 7
  auto back = MessageId::parse(text);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, id);
}

TEST(MessageId, RejectsMalformedText) {
  EXPECT_FALSE(MessageId::parse("").has_value());
  EXPECT_FALSE(MessageId::parse("0190a4e5-7b1c-7d3e-8f00-0123456789zz").has_value());
  EXPECT_FALSE(MessageId::parse("0190a4e517b1c-7d3e-8f00-0123456789ab").has_value());
}

TEST(MessageId, IncreasingAndUnique) {
  MessageIdGenerator gen(7);
  std::set<MessageId> seen;
  MessageId prev = gen.next();
  for (int i = 0; i < 100000; ++i) {
    auto id = gen.next();
    EXPECT_LT(prev.hi, id.hi + 1);  // never goes back in time order
    EXPECT_TRUE(seen.insert(id).second);
    prev = id;
  }
}

}  // namespace
}  // namespace carrier::model
