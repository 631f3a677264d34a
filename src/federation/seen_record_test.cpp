#include "federation/seen_record.hpp"

#include <gtest/gtest.h>

namespace carrier::federation {
namespace {

HopInfo sample() {
  HopInfo info;
  info.ttl = 3;
  info.hops = 2;
  info.origin.bytes[0] = 0xab;
  info.previous.bytes[15] = 0x01;
  info.stack = {4, 17};
  info.record = model::MessageId{9, 99};
  return info;
}

TEST(SeenRecord, RoundTrips) {
  const model::MessageId message{7, 8};
  auto m = encode_seen(message, sample(), 1234);
  EXPECT_EQ(m->destination.name, kSeenQueue);
  EXPECT_TRUE(m->persistent);
  EXPECT_EQ(m->id, (model::MessageId{9, 99}));
  auto r = decode_seen(*m);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->message, message);
  EXPECT_EQ(r->info.ttl, 3);
  EXPECT_EQ(r->info.hops, 2);
  EXPECT_EQ(r->info.origin, sample().origin);
  EXPECT_EQ(r->info.previous, sample().previous);
  EXPECT_EQ(r->info.stack, (std::vector<std::int32_t>{4, 17}));
  EXPECT_EQ(r->info.record, (model::MessageId{9, 99}));
}

TEST(SeenRecord, AnEmptyStackRoundTrips) {
  auto info = sample();
  info.stack.clear();
  auto r = decode_seen(*encode_seen(model::MessageId{1, 2}, info, 0));
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->info.stack.empty());
}

TEST(SeenRecord, RefusesWhatIsNotOne) {
  auto good = encode_seen(model::MessageId{1, 2}, sample(), 0);
  auto with = [&](std::string_view key, std::string value) {
    model::Message m = *good;
    for (auto& [k, v] : m.properties) {
      if (k == key) v = value;
    }
    return decode_seen(m);
  };
  EXPECT_FALSE(with("format", "2"));
  EXPECT_FALSE(with("message-id", "nonsense"));
  EXPECT_FALSE(with("ttl", "9999999999999"));
  EXPECT_FALSE(with("hops", "-x"));
  EXPECT_FALSE(with("origin", "abc"));
  EXPECT_FALSE(with("stack", "1,,2"));
  EXPECT_FALSE(with("stack", "1,"));
  model::Message missing = *good;
  missing.properties.pop_back();
  EXPECT_FALSE(decode_seen(missing));
}

}  // namespace
}  // namespace carrier::federation
