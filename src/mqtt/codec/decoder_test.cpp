#include "mqtt/codec/decoder.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "mqtt/codec/encoder.hpp"
#include "mqtt/codec/fixed_header.hpp"
#include "mqtt/codec/test_packets.hpp"

namespace carrier::mqtt::codec {
namespace {

using namespace std::string_literals;

constexpr Version kVersions[] = {Version::v3_1, Version::v3_1_1, Version::v5};
const DecoderLimits kLimits{};

std::string wire(const Packet& p, Version v) {
  std::string out;
  encode(p, v, out);
  return out;
}

// Decodes a whole packet that must be valid.
Packet decode_ok(std::string_view bytes, Version v) {
  auto r = decode(bytes, v, kLimits);
  EXPECT_FALSE(r.error) << r.error->to_string();
  EXPECT_TRUE(r.packet);
  EXPECT_EQ(r.consumed, bytes.size());
  return r.packet ? *r.packet : Packet{Pingreq{}};
}

DecodeError decode_error(std::string_view bytes, Version v, DecoderLimits limits = kLimits) {
  auto r = decode(bytes, v, limits);
  EXPECT_TRUE(r.error) << "decoded, expected an error";
  EXPECT_FALSE(r.packet);
  return r.error ? *r.error : DecodeError{};
}

// --- known bytes ---------------------------------------------------------------------------

TEST(Decoder, Connect311FromTheWire) {
  // mosquitto_pub -V mqttv311 -i c1 -k 30 -u u -P p --will-topic w --will-payload x
  const std::string bytes =
      "\x10\x1a\x00\x04MQTT\x04\xc6\x00\x1e\x00\x02"
      "c1\x00\x01w\x00\x01x\x00\x01u\x00\x01p"s;
  auto p = std::get<Connect>(decode_ok(bytes, Version::v3_1_1));
  EXPECT_EQ(p.version, Version::v3_1_1);
  EXPECT_TRUE(p.clean_start);
  EXPECT_EQ(p.keep_alive, 30);
  EXPECT_EQ(p.client_id, "c1");
  ASSERT_TRUE(p.will);
  EXPECT_EQ(p.will->topic, "w");
  EXPECT_EQ(p.will->payload, "x");
  EXPECT_EQ(p.will->qos, 0);
  EXPECT_EQ(p.username, "u");
  EXPECT_EQ(p.password, "p");
}

TEST(Decoder, Connect31UsesMQIsdp) {
  const std::string bytes = "\x10\x0f\x00\x06MQIsdp\x03\x02\x00\x3c\x00\x01z"s;
  auto p = std::get<Connect>(decode_ok(bytes, Version::v3_1_1));
  EXPECT_EQ(p.version, Version::v3_1);
  EXPECT_EQ(p.client_id, "z");
  EXPECT_EQ(wire(p, Version::v3_1), bytes);
}

TEST(Decoder, Connect5WithProperties) {
  // CONNECT v5, clean start, keep alive 10, session expiry 60, receive maximum 5, id "a"
  const std::string bytes = "\x10\x16\x00\x04MQTT\x05\x02\x00\x0a\x08\x11\x00\x00\x00\x3c\x21\x00\x05\x00\x01" "a"s;
  auto p = std::get<Connect>(decode_ok(bytes, Version::v3_1_1));
  EXPECT_EQ(p.version, Version::v5);
  EXPECT_EQ(p.properties.session_expiry_interval, 60u);
  EXPECT_EQ(p.properties.receive_maximum, 5);
  EXPECT_EQ(p.client_id, "a");
  EXPECT_EQ(wire(p, Version::v5), bytes);
}

TEST(Decoder, PublishQos1) {
  const std::string bytes = "\x32\x0a\x00\x03\x61\x2f\x62\x00\x05hi\x00"s;
  // Remaining length 10: topic (2+3) + packet id (2) + payload 3? -> "hi\0" is 3 bytes.
  auto p = std::get<Publish>(decode_ok(bytes, Version::v3_1_1));
  EXPECT_EQ(p.qos, 1);
  EXPECT_EQ(p.topic, "a/b");
  EXPECT_EQ(p.packet_id, 5);
  EXPECT_EQ(p.payload, "hi\0"s);
}

TEST(Decoder, AckShapesInMqtt5) {
  // PUBACK with only a packet id: success, no properties.
  auto a = std::get<Puback>(decode_ok("\x40\x02\x00\x01"s, Version::v5));
  EXPECT_EQ(a.reason, ReasonCode::success);
  // With a reason code and no property length.
  auto b = std::get<Puback>(decode_ok("\x40\x03\x00\x01\x10"s, Version::v5));
  EXPECT_EQ(b.reason, ReasonCode::no_matching_subscribers);
  // With an empty property block.
  auto c = std::get<Pubrel>(decode_ok("\x62\x04\x00\x01\x92\x00"s, Version::v5));
  EXPECT_EQ(c.reason, ReasonCode::packet_identifier_not_found);
  // DISCONNECT with nothing after the fixed header.
  auto d = std::get<Disconnect>(decode_ok("\xe0\x00"s, Version::v5));
  EXPECT_EQ(d.reason, ReasonCode::normal_disconnection);
  auto e = std::get<Disconnect>(decode_ok("\xe0\x01\x04"s, Version::v5));
  EXPECT_EQ(e.reason, ReasonCode::disconnect_with_will_message);
}

// --- round trips -----------------------------------------------------------------------------

TEST(Decoder, EveryPacketRoundTripsInEveryVersion) {
  for (auto v : kVersions) {
    for (const auto& p : testing::sample_packets(v)) {
      const std::string bytes = wire(p, v);
      auto r = decode(bytes, v, kLimits);
      ASSERT_FALSE(r.error) << to_string(v) << " " << to_string(type_of(p)) << ": " << r.error->to_string();
      ASSERT_TRUE(r.packet);
      EXPECT_EQ(r.consumed, bytes.size());
      EXPECT_EQ(*r.packet, p) << to_string(v) << " " << to_string(type_of(p));
      EXPECT_EQ(wire(*r.packet, v), bytes);
    }
  }
}

TEST(Decoder, PropertiesAreDroppedBeforeMqtt5) {
  Puback p{.packet_id = 3, .reason = ReasonCode::quota_exceeded};
  p.properties.reason_string = "x";
  EXPECT_EQ(wire(p, Version::v3_1_1), "\x40\x02\x00\x03"s);
  EXPECT_EQ(wire(Disconnect{.reason = ReasonCode::server_shutting_down}, Version::v3_1_1), "\xe0\x00"s);
  Unsuback u{.packet_id = 1, .reasons = {ReasonCode::success}};
  EXPECT_EQ(wire(u, Version::v3_1_1), "\xb0\x02\x00\x01"s);
}

// --- incremental feeding --------------------------------------------------------------------

// Feeds `stream` in pieces ending at `ends`, decoding as a session's reader does.
std::vector<Packet> read_stream(const std::string& stream, const std::vector<std::size_t>& ends, Version v) {
  std::vector<Packet> out;
  std::string buffer;
  std::size_t from = 0;
  std::size_t need = 0;
  for (std::size_t end : ends) {
    buffer.append(stream, from, end - from);
    from = end;
    while (buffer.size() >= need) {
      auto r = decode(buffer, v, kLimits);
      EXPECT_FALSE(r.error) << r.error->to_string();
      if (r.error) return out;
      if (!r.packet) {
        EXPECT_GT(r.need_at_least, buffer.size());
        need = r.need_at_least;
        break;
      }
      need = 0;
      buffer.erase(0, r.consumed);
      out.push_back(std::move(*r.packet));
    }
  }
  EXPECT_TRUE(buffer.empty());
  return out;
}

TEST(Decoder, ByteAtATimeAndRandomSplits) {
  std::mt19937 rng(12345);
  for (auto v : kVersions) {
    const auto packets = testing::sample_packets(v);
    std::string stream;
    for (const auto& p : packets) encode(p, v, stream);

    std::vector<std::size_t> bytes;
    for (std::size_t i = 1; i <= stream.size(); ++i) bytes.push_back(i);
    EXPECT_EQ(read_stream(stream, bytes, v), packets) << "byte at a time, " << to_string(v);

    for (int round = 0; round < 200; ++round) {
      std::vector<std::size_t> ends;
      std::size_t at = 0;
      while (at < stream.size()) {
        at = std::min(stream.size(), at + 1 + rng() % 64);
        ends.push_back(at);
      }
      EXPECT_EQ(read_stream(stream, ends, v), packets) << "round " << round << ", " << to_string(v);
    }
  }
}

TEST(Decoder, NeedMoreCountsTheWholePacket) {
  Publish p;
  p.topic = "t";
  p.payload = std::string(1000, 'x');
  const std::string bytes = wire(p, Version::v3_1_1);
  auto r = decode(std::string_view(bytes).substr(0, 1), Version::v3_1_1, kLimits);
  EXPECT_TRUE(r.need_more());
  EXPECT_EQ(r.need_at_least, 2u);
  r = decode(std::string_view(bytes).substr(0, 3), Version::v3_1_1, kLimits);
  EXPECT_TRUE(r.need_more());
  EXPECT_EQ(r.need_at_least, bytes.size());
  r = decode("", Version::v3_1_1, kLimits);
  EXPECT_TRUE(r.need_more());
  EXPECT_EQ(r.need_at_least, 1u);
}

TEST(Decoder, LeavesTheNextPacketAlone) {
  const std::string bytes = "\xc0\x00\xd0\x00"s;
  auto r = decode(bytes, Version::v3_1_1, kLimits);
  ASSERT_TRUE(r.packet);
  EXPECT_TRUE(std::holds_alternative<Pingreq>(*r.packet));
  EXPECT_EQ(r.consumed, 2u);
}

// --- malformed and forbidden packets ----------------------------------------------------------

struct BadCase {
  const char* what;
  std::string bytes;
  Version version;
  ReasonCode reason;
  std::size_t offset;
};

TEST(Decoder, BadPacketsNameTheirReasonAndOffset) {
  const BadCase cases[] = {
      {"reserved type 0", "\x00\x00"s, Version::v5, ReasonCode::malformed_packet, 0},
      {"AUTH before MQTT 5", "\xf0\x00"s, Version::v3_1_1, ReasonCode::malformed_packet, 0},
      {"remaining length 5 bytes", "\xc0\xff\xff\xff\xff\x01"s, Version::v3_1_1, ReasonCode::malformed_packet, 1},
      {"remaining length not minimal", "\xc0\x80\x00"s, Version::v3_1_1, ReasonCode::malformed_packet, 1},
      {"PINGREQ flags", "\xc1\x00"s, Version::v3_1_1, ReasonCode::malformed_packet, 0},
      {"SUBSCRIBE flags 0", "\x80\x06\x00\x01\x00\x01\x61\x00"s, Version::v3_1_1, ReasonCode::malformed_packet, 0},
      {"PUBREL flags 0", "\x60\x02\x00\x01"s, Version::v3_1_1, ReasonCode::malformed_packet, 0},
      {"PINGREQ with a body", "\xc0\x01\x00"s, Version::v3_1_1, ReasonCode::malformed_packet, 2},
      {"PUBLISH QoS 3", "\x36\x05\x00\x01t\x00\x01"s, Version::v3_1_1, ReasonCode::malformed_packet, 0},
      {"PUBLISH QoS 0 with DUP", "\x38\x03\x00\x01t"s, Version::v3_1_1, ReasonCode::malformed_packet, 0},
      {"PUBLISH wildcard +", "\x30\x05\x00\x03\x61/+"s, Version::v3_1_1, ReasonCode::topic_name_invalid, 2},
      {"PUBLISH wildcard #", "\x30\x03\x00\x01#"s, Version::v5, ReasonCode::topic_name_invalid, 2},
      {"PUBLISH empty topic 3.1.1", "\x30\x02\x00\x00"s, Version::v3_1_1, ReasonCode::topic_name_invalid, 2},
      {"PUBLISH empty topic, no alias", "\x30\x03\x00\x00\x00"s, Version::v5, ReasonCode::protocol_error, 2},
      {"PUBLISH packet id 0", "\x32\x05\x00\x01t\x00\x00"s, Version::v3_1_1, ReasonCode::protocol_error, 5},
      {"PUBLISH topic not UTF-8", "\x30\x04\x00\x02\xc3\x28"s, Version::v3_1_1, ReasonCode::malformed_packet, 2},
      {"PUBLISH topic with U+0000", "\x30\x04\x00\x02\x61\x00"s, Version::v3_1_1, ReasonCode::malformed_packet, 2},
      {"PUBLISH topic with a surrogate", "\x30\x05\x00\x03\xed\xa0\x80"s, Version::v5, ReasonCode::malformed_packet, 2},
      {"PUBLISH topic past the packet", "\x30\x03\x00\x05t"s, Version::v3_1_1, ReasonCode::malformed_packet, 4},
      {"PUBLISH bad property", "\x30\x06\x00\x01t\x02\x7f\x00"s, Version::v5, ReasonCode::malformed_packet, 6},
      {"PUBLISH property not allowed", "\x30\x06\x00\x01t\x02\x17\x01"s, Version::v5, ReasonCode::malformed_packet, 6},
      {"SUBSCRIBE property not allowed", "\x82\x09\x00\x01\x02\x01\x01\x00\x01\x61\x00"s, Version::v5,
       ReasonCode::malformed_packet, 5},
      {"PUBLISH response topic with +", "\x30\x0a\x00\x01t\x06\x08\x00\x03r/+"s, Version::v5,
       ReasonCode::protocol_error, 6},
      {"PUBREL with DUP in 3.1.1", "\x6a\x02\x00\x01"s, Version::v3_1_1, ReasonCode::malformed_packet, 0},
      {"CONNECT with flags", "\x11\x0d\x00\x04MQTT\x04\x02\x00\x3c\x00\x01\x61"s, Version::v3_1_1,
       ReasonCode::malformed_packet, 0},
      {"PUBACK too long in 3.1.1", "\x40\x03\x00\x01\x00"s, Version::v3_1_1, ReasonCode::malformed_packet, 4},
      {"PUBACK bad reason", "\x40\x03\x00\x01\x05"s, Version::v5, ReasonCode::protocol_error, 4},
      {"PUBCOMP too short", "\x70\x01\x00"s, Version::v3_1_1, ReasonCode::malformed_packet, 2},
      {"SUBSCRIBE no topics", "\x82\x02\x00\x01"s, Version::v3_1_1, ReasonCode::protocol_error, 4},
      {"SUBSCRIBE QoS 3", "\x82\x06\x00\x01\x00\x01\x61\x03"s, Version::v3_1_1, ReasonCode::malformed_packet, 7},
      {"SUBSCRIBE reserved bits 3.1.1", "\x82\x06\x00\x01\x00\x01\x61\x04"s, Version::v3_1_1,
       ReasonCode::malformed_packet, 7},
      {"SUBSCRIBE reserved bits 5", "\x82\x07\x00\x01\x00\x00\x01\x61\x40"s, Version::v5, ReasonCode::malformed_packet,
       8},
      {"SUBSCRIBE retain handling 3", "\x82\x07\x00\x01\x00\x00\x01\x61\x30"s, Version::v5, ReasonCode::protocol_error,
       8},
      {"SUBSCRIBE bad filter", "\x82\x07\x00\x01\x00\x02\x61\x23\x00"s, Version::v3_1_1, ReasonCode::malformed_packet,
       4},
      {"SUBSCRIBE bad shared filter", "\x82\x0d\x00\x01\x00\x08$share/g\x00"s, Version::v3_1_1,
       ReasonCode::malformed_packet, 4},
      {"SUBSCRIBE shared no-local", "\x82\x10\x00\x01\x00\x00\x0a$share/g/a\x04"s, Version::v5,
       ReasonCode::protocol_error, 17},
      {"SUBSCRIBE filter cut short", "\x82\x05\x00\x01\x00\x05\x61"s, Version::v3_1_1, ReasonCode::malformed_packet, 6},
      {"UNSUBSCRIBE no topics", "\xa2\x02\x00\x01"s, Version::v3_1_1, ReasonCode::protocol_error, 4},
      {"DISCONNECT with a body in 3.1.1", "\xe0\x01\x00"s, Version::v3_1_1, ReasonCode::malformed_packet, 2},
      {"DISCONNECT bad reason", "\xe0\x01\x01"s, Version::v5, ReasonCode::protocol_error, 2},
      {"AUTH bad reason", "\xf0\x01\x01"s, Version::v5, ReasonCode::protocol_error, 2},
      {"CONNACK bad code 3.1.1", "\x20\x02\x00\x06"s, Version::v3_1_1, ReasonCode::protocol_error, 3},
      {"CONNACK reserved flags", "\x20\x02\x02\x00"s, Version::v3_1_1, ReasonCode::malformed_packet, 2},
      {"SUBACK bad code", "\x90\x03\x00\x01\x03"s, Version::v3_1_1, ReasonCode::protocol_error, 4},
  };
  for (const auto& c : cases) {
    auto e = decode_error(c.bytes, c.version);
    EXPECT_EQ(e.reason, c.reason) << c.what << ": " << e.to_string();
    EXPECT_EQ(e.offset, c.offset) << c.what << ": " << e.to_string();
    EXPECT_FALSE(e.detail.empty()) << c.what;
  }
}

std::string connect_bytes(std::string_view name, std::uint8_t level, std::uint8_t flags, std::string tail) {
  std::string body;
  put_string(body, name);
  body.push_back(static_cast<char>(level));
  body.push_back(static_cast<char>(flags));
  body += "\x00\x3c"s;
  body += tail;
  std::string out;
  put_fixed_header(out, PacketType::connect, 0, static_cast<std::uint32_t>(body.size()));
  return out + body;
}

TEST(Decoder, BadConnects) {
  struct Case {
    const char* what;
    std::string bytes;
    ReasonCode reason;
    std::optional<Version> declared;
  } cases[] = {
      {"protocol name", connect_bytes("MQTX", 4, 0x02, "\x00\x01\x61"s), ReasonCode::protocol_error, std::nullopt},
      {"level 6", connect_bytes("MQTT", 6, 0x02, "\x00\x01\x61"s), ReasonCode::unsupported_protocol_version,
       std::nullopt},
      {"MQIsdp level 4", connect_bytes("MQIsdp", 4, 0x02, "\x00\x01\x61"s), ReasonCode::unsupported_protocol_version,
       std::nullopt},
      {"reserved flag", connect_bytes("MQTT", 4, 0x03, "\x00\x01\x61"s), ReasonCode::malformed_packet,
       Version::v3_1_1},
      {"will QoS without will", connect_bytes("MQTT", 4, 0x0A, "\x00\x01\x61"s), ReasonCode::malformed_packet,
       Version::v3_1_1},
      {"will retain without will", connect_bytes("MQTT", 5, 0x22, "\x00\x00\x01\x61"s), ReasonCode::malformed_packet,
       Version::v5},
      {"will QoS 3", connect_bytes("MQTT", 4, 0x1E, "\x00\x01\x61\x00\x01w\x00\x00"s), ReasonCode::malformed_packet,
       Version::v3_1_1},
      {"password without user name", connect_bytes("MQTT", 4, 0x42, "\x00\x01\x61\x00\x01p"s),
       ReasonCode::malformed_packet, Version::v3_1_1},
      {"will topic with wildcard", connect_bytes("MQTT", 4, 0x06, "\x00\x01\x61\x00\x01#\x00\x00"s),
       ReasonCode::topic_name_invalid, Version::v3_1_1},
      {"client id not UTF-8", connect_bytes("MQTT", 4, 0x02, "\x00\x01\xff"s), ReasonCode::malformed_packet,
       Version::v3_1_1},
      {"trailing bytes", connect_bytes("MQTT", 4, 0x02, "\x00\x01\x61zz"s), ReasonCode::malformed_packet,
       Version::v3_1_1},
      {"missing client id", connect_bytes("MQTT", 4, 0x02, ""), ReasonCode::malformed_packet, Version::v3_1_1},
      {"v5 property not allowed", connect_bytes("MQTT", 5, 0x02, "\x03\x23\x00\x01\x00\x01\x61"s),
       ReasonCode::malformed_packet, Version::v5},
      {"v5 will property not allowed", connect_bytes("MQTT", 5, 0x06, "\x00\x00\x01\x61\x02\x11\x00"s),
       ReasonCode::malformed_packet, Version::v5},
      {"v5 will response topic with #", connect_bytes("MQTT", 5, 0x06, "\x00\x00\x01\x61\x04\x08\x00\x01#\x00\x01w\x00\x00"s),
       ReasonCode::protocol_error, Version::v5},
      {"3.1 will QoS 3", connect_bytes("MQIsdp", 3, 0x1E, "\x00\x01\x61\x00\x01w\x00\x00"s),
       ReasonCode::malformed_packet, Version::v3_1},
      {"3.1 password without user name", connect_bytes("MQIsdp", 3, 0x42, "\x00\x01\x61\x00\x01p"s),
       ReasonCode::malformed_packet, Version::v3_1},
  };
  for (const auto& c : cases) {
    auto r = decode(c.bytes, Version::v3_1_1, kLimits);
    ASSERT_TRUE(r.error) << c.what;
    EXPECT_EQ(r.error->reason, c.reason) << c.what << ": " << r.error->to_string();
    EXPECT_EQ(r.connect_version, c.declared) << c.what;
  }
  // MQTT 5 allows a password without a user name.
  auto p = std::get<Connect>(decode_ok(connect_bytes("MQTT", 5, 0x42, "\x00\x00\x01\x61\x00\x01p"s), Version::v5));
  EXPECT_FALSE(p.username);
  EXPECT_EQ(p.password, "p");
}

// MQTT 3.1 sets DUP on resent PUBREL, SUBSCRIBE and UNSUBSCRIBE, leaves the fixed-header flags
// of the other packets "not used", and checks no reserved CONNECT flag; 3.1.1 forbids all that.
TEST(Decoder, Mqtt31FlagsAreNotChecked) {
  const std::string pubrel_dup = "\x6a\x02\x00\x07"s;
  EXPECT_EQ(std::get<Pubrel>(decode_ok(pubrel_dup, Version::v3_1)).packet_id, 7);
  EXPECT_EQ(decode_error(pubrel_dup, Version::v3_1_1).reason, ReasonCode::malformed_packet);
  EXPECT_EQ(decode_error(pubrel_dup, Version::v5).reason, ReasonCode::malformed_packet);
  EXPECT_EQ(std::get<Pubrel>(decode_ok("\x60\x02\x00\x07"s, Version::v3_1)).packet_id, 7);
  const std::string subscribe_dup = "\x8a\x06\x00\x01\x00\x01\x61\x01"s;
  EXPECT_EQ(std::get<Subscribe>(decode_ok(subscribe_dup, Version::v3_1)).topics.at(0).qos, 1);
  EXPECT_EQ(decode_error(subscribe_dup, Version::v3_1_1).reason, ReasonCode::malformed_packet);
  const std::string unsubscribe_dup = "\xaa\x05\x00\x01\x00\x01\x61"s;
  EXPECT_EQ(std::get<Unsubscribe>(decode_ok(unsubscribe_dup, Version::v3_1)).filters.at(0), "a");
  EXPECT_TRUE(std::holds_alternative<Pingreq>(decode_ok("\xc2\x00"s, Version::v3_1)));
  // PUBLISH keeps its rules.
  EXPECT_EQ(decode_error("\x38\x03\x00\x01t"s, Version::v3_1).reason, ReasonCode::malformed_packet);

  // CONNECT: fixed-header flags, the reserved bit, will QoS and retain without a will.
  std::string c31 = connect_bytes("MQIsdp", 3, 0x2B, "\x00\x01\x61"s);
  c31[0] = '\x12';
  auto c = std::get<Connect>(decode_ok(c31, Version::v3_1_1));
  EXPECT_EQ(c.version, Version::v3_1);
  EXPECT_TRUE(c.clean_start);
  EXPECT_FALSE(c.will);
  std::string c311 = connect_bytes("MQTT", 4, 0x02, "\x00\x01\x61"s);
  c311[0] = '\x12';
  EXPECT_EQ(decode_error(c311, Version::v3_1_1).reason, ReasonCode::malformed_packet);
  EXPECT_EQ(decode_error(connect_bytes("MQTT", 4, 0x03, "\x00\x01\x61"s), Version::v3_1_1).reason,
            ReasonCode::malformed_packet);

  // User name and password flags with the fields missing: taken without them in 3.1 only.
  auto bare = std::get<Connect>(decode_ok(connect_bytes("MQIsdp", 3, 0xC2, "\x00\x01\x61"s), Version::v3_1_1));
  EXPECT_FALSE(bare.username);
  EXPECT_FALSE(bare.password);
  auto user_only = std::get<Connect>(decode_ok(connect_bytes("MQIsdp", 3, 0xC2, "\x00\x01\x61\x00\x01u"s), Version::v3_1_1));
  EXPECT_EQ(user_only.username, "u");
  EXPECT_FALSE(user_only.password);
  EXPECT_EQ(decode_error(connect_bytes("MQTT", 4, 0xC2, "\x00\x01\x61"s), Version::v3_1_1).reason,
            ReasonCode::malformed_packet);
}

TEST(Decoder, PacketTooLargeBeforeItArrives) {
  Publish p;
  p.topic = "t";
  p.payload = std::string(500, 'x');
  const std::string bytes = wire(p, Version::v5);
  DecoderLimits small{.max_packet_size = 100};
  auto r = decode(std::string_view(bytes).substr(0, 3), Version::v5, small);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->reason, ReasonCode::packet_too_large);
  // Exactly at the limit is fine.
  DecoderLimits exact{.max_packet_size = bytes.size()};
  EXPECT_TRUE(decode(bytes, Version::v5, exact).packet);
  DecoderLimits one_less{.max_packet_size = bytes.size() - 1};
  EXPECT_EQ(decode(bytes, Version::v5, one_less).error->reason, ReasonCode::packet_too_large);
}

TEST(Decoder, ErrorOffsetsCountFromTheInputStart) {
  // A bad topic in a packet with a 2-byte remaining length: the topic sits at offset 3.
  std::string bytes = "\x30\x80\x01\x00\x03\x61/#"s;
  bytes.resize(3 + 128, 'x');
  auto e = decode_error(bytes, Version::v3_1_1);
  EXPECT_EQ(e.reason, ReasonCode::topic_name_invalid);
  EXPECT_EQ(e.offset, 3u);
}

}  // namespace
}  // namespace carrier::mqtt::codec
