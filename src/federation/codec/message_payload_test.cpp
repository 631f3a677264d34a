#include "federation/codec/message_payload.hpp"

#include <gtest/gtest.h>

#include <memory>

#include "federation/codec/test_support.hpp"
#include "store/message_codec.hpp"

namespace carrier::federation::codec {
namespace {

using namespace testing;

model::Message full_message() {
  model::Message m;
  m.id = model::MessageId{0x0102030405060708ULL, 0x090a0b0c0d0e0f10ULL};
  m.destination = model::Destination{model::DestinationKind::topic, "prices.eu"};
  m.priority = 9;
  m.timestamp_ms = 1'700'000'000'000;
  m.expires_ms = 1'700'000'060'000;
  m.persistent = true;
  m.correlation_id = "c-1";
  m.reply_to = "/temp-queue/r";
  m.type = "quote";
  m.content_type = "text/plain";
  m.properties = {{"b", "2"}, {"a", "1"}};
  m.body = std::make_shared<const std::string>(std::string("bo\0dy", 5));
  m.deliver_at_ms = 1'700'000'001'000;
  m.retain = true;
  return m;
}

// Every field the store's encoding carries, compared through that encoding.
void expect_same_message(const model::Message& a, const model::Message& b) {
  EXPECT_EQ(store::encode_message(a), store::encode_message(b));
}

TEST(MessagePayload, IdsAreBigEndian) {
  const model::MessageId id{0x0102030405060708ULL, 0x090a0b0c0d0e0f10ULL};
  EXPECT_EQ(to_id128(id), make_id(1));
  EXPECT_EQ(to_message_id(to_id128(id)), id);
}

TEST(MessagePayload, EverythingCrossesAHop) {
  BasicMessage envelope;
  envelope.ttl = 4;
  envelope.origin = make_id(0x70);
  envelope.stack = {3};
  auto wrapped = wrap_message(full_message(), envelope);
  ASSERT_TRUE(wrapped.has_value()) << wrapped.error().to_string();
  EXPECT_EQ(wrapped->selector, "prices.eu");
  EXPECT_EQ(wrapped->message_id, make_id(1));
  EXPECT_EQ(wrapped->ttl, 4);
  EXPECT_EQ(wrapped->origin, make_id(0x70));
  EXPECT_EQ(wrapped->stack, std::vector<std::int32_t>{3});
  // The payload is the store's versioned encoding, unchanged.
  EXPECT_EQ(wrapped->payload, store::encode_message(full_message()));

  // Through the wire and back.
  std::string wire;
  ASSERT_TRUE(encode_basic_message(*wrapped, wire));
  auto decoded = decode_basic_message(wire, Limits{});
  ASSERT_TRUE(decoded.has_value());
  auto back = unwrap_message(*decoded);
  ASSERT_TRUE(back.has_value()) << back.error().to_string();
  expect_same_message(*back, full_message());
  EXPECT_EQ(back->reply_to, "/temp-queue/r");
  EXPECT_TRUE(back->retain);
  EXPECT_EQ(back->deliver_at_ms, 1'700'000'001'000);
  ASSERT_NE(back->body, nullptr);
  EXPECT_EQ(*back->body, std::string("bo\0dy", 5));
}

TEST(MessagePayload, NullBodyStaysNull) {
  model::Message m;
  m.destination.name = "q";
  auto back = unwrap_message(*wrap_message(m, BasicMessage{}));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->body, nullptr);
}

TEST(MessagePayload, Refusals) {
  const BasicMessage good = *wrap_message(full_message(), BasicMessage{});

  BasicMessage other_selector = good;
  other_selector.selector = "prices.us";
  auto selector = unwrap_message(other_selector);
  ASSERT_FALSE(selector.has_value());
  EXPECT_EQ(selector.error().code, Errc::protocol_error);
  EXPECT_NE(selector.error().detail.find("not the payload's destination"), std::string::npos);

  BasicMessage other_id = good;
  other_id.message_id = make_id(2);
  EXPECT_FALSE(unwrap_message(other_id).has_value());

  BasicMessage future = good;
  future.payload[0] = 99;  // a format version this build does not know
  auto version = unwrap_message(future);
  ASSERT_FALSE(version.has_value());
  EXPECT_EQ(version.error().code, Errc::protocol_error);
  EXPECT_NE(version.error().detail.find("version 99"), std::string::npos) << version.error().detail;

  BasicMessage cut = good;
  cut.payload.resize(cut.payload.size() - 1);
  EXPECT_FALSE(unwrap_message(cut).has_value());

  model::Message nul = full_message();
  nul.destination.name = std::string("a\0b", 3);
  auto wrapped = wrap_message(nul, BasicMessage{});
  ASSERT_FALSE(wrapped.has_value());
  EXPECT_EQ(wrapped.error().code, Errc::invalid_argument);
}

}  // namespace
}  // namespace carrier::federation::codec
