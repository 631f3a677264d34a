#include "mqtt/codec/encoder.hpp"

#include <gtest/gtest.h>

#include <string>

namespace carrier::mqtt::codec {
namespace {

using namespace std::string_literals;

std::string encoded(const Packet& p, Version v) {
  std::string out;
  encode(p, v, out);
  return out;
}

TEST(Encoder, ControlPackets) {
  EXPECT_EQ(encoded(Pingreq{}, Version::v3_1_1), "\xc0\x00"s);
  EXPECT_EQ(encoded(Pingresp{}, Version::v5), "\xd0\x00"s);
  EXPECT_EQ(encoded(Disconnect{}, Version::v5), "\xe0\x00"s);
  EXPECT_EQ(encoded(Disconnect{.reason = ReasonCode::session_taken_over}, Version::v5), "\xe0\x01\x8e"s);
  Disconnect with_reason{.reason = ReasonCode::keep_alive_timeout};
  with_reason.properties.reason_string = "ka";
  EXPECT_EQ(encoded(with_reason, Version::v5), "\xe0\x07\x8d\x05\x1f\x00\x02ka"s);
  EXPECT_EQ(encoded(Auth{.reason = ReasonCode::success}, Version::v5), "\xf0\x00"s);
}

TEST(Encoder, Connack) {
  EXPECT_EQ(encoded(Connack{.session_present = true}, Version::v3_1_1), "\x20\x02\x01\x00"s);
  EXPECT_EQ(encoded(Connack{.reason = static_cast<ReasonCode>(ConnectReturnCode::identifier_rejected)}, Version::v3_1_1),
            "\x20\x02\x00\x02"s);
  EXPECT_EQ(encoded(Connack{}, Version::v5), "\x20\x03\x00\x00\x00"s);
  Connack c{.reason = ReasonCode::bad_authentication_method};
  c.properties.receive_maximum = 10;
  EXPECT_EQ(encoded(c, Version::v5), "\x20\x06\x00\x8c\x03\x21\x00\x0a"s);
}

TEST(Encoder, PublishResponsesOmitSuccessInMqtt5) {
  EXPECT_EQ(encoded(Puback{.packet_id = 0x1234}, Version::v5), "\x40\x02\x12\x34"s);
  EXPECT_EQ(encoded(Pubrec{.packet_id = 1, .reason = ReasonCode::no_matching_subscribers}, Version::v5),
            "\x50\x03\x00\x01\x10"s);
  EXPECT_EQ(encoded(Pubrel{.packet_id = 1}, Version::v3_1_1), "\x62\x02\x00\x01"s);
  EXPECT_EQ(encoded(Pubcomp{.packet_id = 1, .reason = ReasonCode::packet_identifier_not_found}, Version::v3_1_1),
            "\x70\x02\x00\x01"s);
}

TEST(Encoder, Publish) {
  Publish p{.qos = 1, .dup = true, .retain = true, .topic = "a/b", .packet_id = 10, .properties = {}, .payload = "hi"};
  EXPECT_EQ(encoded(p, Version::v3_1_1), "\x3b\x09\x00\x03\x61/b\x00\x0ahi"s);
  EXPECT_EQ(encoded(p, Version::v5), "\x3b\x0a\x00\x03\x61/b\x00\x0a\x00hi"s);
  Publish q0{.topic = "t", .payload = std::string(200, 'x')};
  const auto bytes = encoded(q0, Version::v3_1_1);
  EXPECT_EQ(bytes.substr(0, 3), "\x30\xcb\x01"s);  // 203 = 0x4b | 0x80, 0x01
  EXPECT_EQ(bytes.size(), 206u);
}

TEST(Encoder, SubscribeOptions) {
  Subscribe s{.packet_id = 2, .properties = {}, .topics = {{"a", 2, true, true, 2}}};
  EXPECT_EQ(encoded(s, Version::v5), "\x82\x07\x00\x02\x00\x00\x01\x61\x2e"s);
  // Before MQTT 5 only the QoS is written.
  EXPECT_EQ(encoded(s, Version::v3_1_1), "\x82\x06\x00\x02\x00\x01\x61\x02"s);
  Suback a{.packet_id = 2, .properties = {}, .reasons = {ReasonCode::granted_qos_1, ReasonCode::unspecified_error}};
  EXPECT_EQ(encoded(a, Version::v3_1_1), "\x90\x04\x00\x02\x01\x80"s);
  EXPECT_EQ(encoded(a, Version::v5), "\x90\x05\x00\x02\x00\x01\x80"s);
}

TEST(Encoder, Connect) {
  Connect c;
  c.version = Version::v3_1_1;
  c.client_id = "c1";
  c.keep_alive = 30;
  EXPECT_EQ(encoded(c, Version::v3_1_1), "\x10\x0e\x00\x04MQTT\x04\x02\x00\x1e\x00\x02\x63\x31"s);
  c.version = Version::v3_1;
  EXPECT_EQ(encoded(c, Version::v3_1_1), "\x10\x10\x00\x06MQIsdp\x03\x02\x00\x1e\x00\x02\x63\x31"s);
}

}  // namespace
}  // namespace carrier::mqtt::codec
