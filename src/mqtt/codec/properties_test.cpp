#include "mqtt/codec/properties.hpp"

#include <gtest/gtest.h>

#include <string>

#include "mqtt/codec/data_types.hpp"

namespace carrier::mqtt::codec {
namespace {

using namespace std::string_literals;

constexpr PropertyContext kContexts[] = {
    PropertyContext::connect,   PropertyContext::connack,     PropertyContext::publish,
    PropertyContext::will,      PropertyContext::publish_response, PropertyContext::subscribe,
    PropertyContext::suback,    PropertyContext::unsubscribe, PropertyContext::unsuback,
    PropertyContext::disconnect, PropertyContext::auth};

// Every property that `context` allows, with a distinctive value.
Properties all_allowed(PropertyContext c) {
  Properties p;
  auto on = [c](PropertyId id) { return is_allowed(id, c); };
  using I = PropertyId;
  if (on(I::payload_format_indicator)) p.payload_format_indicator = 1;
  if (on(I::message_expiry_interval)) p.message_expiry_interval = 3600;
  if (on(I::content_type)) p.content_type = "application/json";
  if (on(I::response_topic)) p.response_topic = "replies/1";
  if (on(I::correlation_data)) p.correlation_data = "\x00\x01\xFF"s;
  if (on(I::subscription_identifier)) p.subscription_identifiers = {268'435'455};
  if (on(I::session_expiry_interval)) p.session_expiry_interval = 0xFFFFFFFF;
  if (on(I::assigned_client_identifier)) p.assigned_client_identifier = "auto-1";
  if (on(I::server_keep_alive)) p.server_keep_alive = 30;
  if (on(I::authentication_method)) p.authentication_method = "SCRAM-SHA-1";
  if (on(I::authentication_data)) p.authentication_data = "\x01\x02"s;
  if (on(I::request_problem_information)) p.request_problem_information = 0;
  if (on(I::will_delay_interval)) p.will_delay_interval = 10;
  if (on(I::request_response_information)) p.request_response_information = 1;
  if (on(I::response_information)) p.response_information = "resp/";
  if (on(I::server_reference)) p.server_reference = "other:1883";
  if (on(I::reason_string)) p.reason_string = "because";
  if (on(I::receive_maximum)) p.receive_maximum = 10;
  if (on(I::topic_alias_maximum)) p.topic_alias_maximum = 5;
  if (on(I::topic_alias)) p.topic_alias = 3;
  if (on(I::maximum_qos)) p.maximum_qos = 1;
  if (on(I::retain_available)) p.retain_available = 0;
  if (on(I::maximum_packet_size)) p.maximum_packet_size = 1024;
  if (on(I::wildcard_subscription_available)) p.wildcard_subscription_available = 1;
  if (on(I::subscription_identifier_available)) p.subscription_identifier_available = 1;
  if (on(I::shared_subscription_available)) p.shared_subscription_available = 0;
  p.user_properties = {{"k", "v"}, {"k", "v2"}, {"", ""}, {"caf\xC3\xA9", "\xE2\x82\xAC"}};
  return p;
}

Reader reader(const std::string& bytes) { return Reader(bytes, 0); }

TEST(Properties, EveryContextRoundTrips) {
  for (auto c : kContexts) {
    const Properties p = all_allowed(c);
    std::string bytes;
    encode_properties(p, c, bytes);
    EXPECT_EQ(bytes.size(), encoded_properties_size(p));
    Reader in = reader(bytes);
    Properties back;
    ASSERT_TRUE(decode_properties(in, c, back)) << in.error()->to_string();
    EXPECT_TRUE(in.at_end());
    EXPECT_EQ(back, p) << static_cast<int>(c);
  }
}

TEST(Properties, EmptyBlock) {
  std::string bytes = "\x00"s;
  Reader in = reader(bytes);
  Properties p;
  ASSERT_TRUE(decode_properties(in, PropertyContext::publish, p));
  EXPECT_TRUE(p.empty());
  std::string out;
  encode_properties(Properties{}, PropertyContext::publish, out);
  EXPECT_EQ(out, "\x00"s);
}

// Every property outside its contexts is a Malformed Packet (MQTT 5 2.2.2.2: "an Identifier
// which is not valid for its packet type").
TEST(Properties, NotAllowedInContextIsMalformed) {
  const std::uint8_t ids[] = {0x01, 0x02, 0x03, 0x08, 0x09, 0x0B, 0x11, 0x12, 0x13, 0x15, 0x16, 0x17, 0x18, 0x19,
                              0x1A, 0x1C, 0x1F, 0x21, 0x22, 0x23, 0x24, 0x25, 0x27, 0x28, 0x29, 0x2A};
  int checked = 0;
  for (auto c : kContexts) {
    for (auto raw : ids) {
      const auto id = static_cast<PropertyId>(raw);
      if (is_allowed(id, c)) continue;
      // Craft a block holding only this property, with a one-byte-or-more value of its type.
      // std::string literals: assigning "\x01" makes g++ 12 at -O3 report a false -Wrestrict
      // (GCC bug 105329).
      std::string value;
      switch (raw) {
        case 0x01: case 0x17: case 0x19: case 0x24: case 0x25: case 0x28: case 0x29: case 0x2A: value = "\x01"s; break;
        case 0x13: case 0x21: case 0x22: case 0x23: value = "\x00\x05"s; break;
        case 0x02: case 0x11: case 0x18: case 0x27: value = "\x00\x00\x00\x05"s; break;
        case 0x0B: value = "\x05"; break;
        default: value = "\x00\x01x"s; break;
      }
      std::string block(1, static_cast<char>(raw));
      block += value;
      std::string bytes;
      put_variable_int(bytes, static_cast<std::uint32_t>(block.size()));
      bytes += block;
      Reader in = reader(bytes);
      Properties back;
      EXPECT_FALSE(decode_properties(in, c, back)) << to_string(id);
      ASSERT_TRUE(in.error());
      EXPECT_EQ(in.error()->reason, ReasonCode::malformed_packet) << to_string(id);
      EXPECT_EQ(in.error()->offset, 1u);
      ++checked;
    }
  }
  EXPECT_GT(checked, 200);
}

TEST(Properties, ResponseTopicIsATopicName) {
  for (const std::string_view topic : {"r/+", "r/#", "+", ""}) {
    std::string block = "\x08"s;
    put_string(block, topic);
    std::string bytes;
    put_variable_int(bytes, static_cast<std::uint32_t>(block.size()));
    bytes += block;
    for (auto c : {PropertyContext::publish, PropertyContext::will}) {
      Reader in = reader(bytes);
      Properties p;
      EXPECT_FALSE(decode_properties(in, c, p)) << topic;
      ASSERT_TRUE(in.error()) << topic;
      EXPECT_EQ(in.error()->reason, ReasonCode::protocol_error) << topic;
    }
  }
  std::string bytes = "\x06\x08\x00\x03r/1"s;
  Reader in = reader(bytes);
  Properties p;
  ASSERT_TRUE(decode_properties(in, PropertyContext::publish, p));
  EXPECT_EQ(p.response_topic, "r/1");
}

TEST(Properties, RepeatedSingleValuedPropertyIsAProtocolError) {
  std::string bytes = "\x04\x01\x01\x01\x00"s;  // payload format indicator twice
  Reader in = reader(bytes);
  Properties p;
  EXPECT_FALSE(decode_properties(in, PropertyContext::publish, p));
  EXPECT_EQ(in.error()->reason, ReasonCode::protocol_error);
  EXPECT_EQ(in.error()->offset, 3u);
}

TEST(Properties, SubscriptionIdentifiersRepeatInPublishOnly) {
  std::string bytes = "\x04\x0B\x01\x0B\x02"s;
  {
    Reader in = reader(bytes);
    Properties p;
    ASSERT_TRUE(decode_properties(in, PropertyContext::publish, p));
    EXPECT_EQ(p.subscription_identifiers, (std::vector<std::uint32_t>{1, 2}));
  }
  {
    Reader in = reader(bytes);
    Properties p;
    EXPECT_FALSE(decode_properties(in, PropertyContext::subscribe, p));
    EXPECT_EQ(in.error()->reason, ReasonCode::protocol_error);
  }
}

TEST(Properties, ValueRangesAreChecked) {
  struct Case {
    std::string bytes;
    PropertyContext context;
  } cases[] = {
      {"\x02\x01\x02"s, PropertyContext::publish},          // payload format indicator 2
      {"\x03\x21\x00\x00"s, PropertyContext::connect},      // receive maximum 0
      {"\x05\x27\x00\x00\x00\x00"s, PropertyContext::connect},  // maximum packet size 0
      {"\x03\x23\x00\x00"s, PropertyContext::publish},      // topic alias 0
      {"\x02\x0B\x00"s, PropertyContext::subscribe},        // subscription identifier 0
      {"\x02\x17\x02"s, PropertyContext::connect},          // request problem information 2
      {"\x02\x24\x02"s, PropertyContext::connack},          // maximum qos 2
  };
  for (const auto& c : cases) {
    Reader in = reader(c.bytes);
    Properties p;
    EXPECT_FALSE(decode_properties(in, c.context, p));
    ASSERT_TRUE(in.error());
    EXPECT_EQ(in.error()->reason, ReasonCode::protocol_error) << in.error()->detail;
  }
}

TEST(Properties, MalformedBlocks) {
  const std::string cases[] = {
      "\x02\x7F\x00"s,            // unknown identifier
      "\x05\x02\x00\x00"s,        // length past the end
      "\x02\x02\x00"s,            // four-byte integer cut short
      "\x04\x03\x00\x05x"s,       // string longer than the block
      "\x04\x03\x00\x01\x00"s,    // string holding U+0000
      "\x05\x26\x00\x01k\x00"s,   // user property without a value
      "\x02\x0B\x80"s,            // subscription identifier cut short
      "\xFF\xFF\xFF\xFF\x7F"s,    // property length too long
  };
  for (const auto& bytes : cases) {
    Reader in = reader(bytes);
    Properties p;
    EXPECT_FALSE(decode_properties(in, PropertyContext::publish, p));
    ASSERT_TRUE(in.error());
    EXPECT_EQ(in.error()->reason, ReasonCode::malformed_packet) << in.error()->detail;
  }
}

TEST(Properties, UserPropertiesKeepOrderAndDuplicates) {
  Properties p;
  p.user_properties = {{"b", "1"}, {"a", "2"}, {"b", "3"}};
  std::string bytes;
  encode_properties(p, PropertyContext::disconnect, bytes);
  Reader in = reader(bytes);
  Properties back;
  ASSERT_TRUE(decode_properties(in, PropertyContext::disconnect, back));
  EXPECT_EQ(back.user_properties, p.user_properties);
}

}  // namespace
}  // namespace carrier::mqtt::codec
