#include "stomp/codec/encoder.hpp"

#include <gtest/gtest.h>

#include <string>

#include "stomp/codec/decoder.hpp"

namespace carrier::stomp::codec {
namespace {

using namespace std::string_literals;

std::string encoded(Command c, const Headers& h, std::string_view body, Version v) {
  std::string out;
  encode(c, h, body, v, out);
  return out;
}

TEST(Encoder, WritesCommandHeadersBlankLineBodyAndNul) {
  EXPECT_EQ(encoded(Command::subscribe, {{"id", "0"}, {"destination", "/queue/a"}}, "",
                    Version::v1_2),
            "SUBSCRIBE\nid:0\ndestination:/queue/a\n\n\0"s);
  EXPECT_EQ(encoded(Command::disconnect, {}, "", Version::v1_0), "DISCONNECT\n\n\0"s);
}

TEST(Encoder, SpellsEveryCommand) {
  const std::pair<Command, const char*> spellings[] = {
      {Command::connect, "CONNECT"},     {Command::stomp, "STOMP"},
      {Command::send, "SEND"},           {Command::subscribe, "SUBSCRIBE"},
      {Command::unsubscribe, "UNSUBSCRIBE"}, {Command::ack, "ACK"},
      {Command::nack, "NACK"},           {Command::begin, "BEGIN"},
      {Command::commit, "COMMIT"},       {Command::abort, "ABORT"},
      {Command::disconnect, "DISCONNECT"}, {Command::connected, "CONNECTED"},
      {Command::message, "MESSAGE"},     {Command::receipt, "RECEIPT"},
      {Command::error, "ERROR"},
  };
  for (auto [command, spelling] : spellings) {
    EXPECT_EQ(to_string(command), spelling);
    EXPECT_EQ(parse_command(spelling), command);
    EXPECT_EQ(encoded(command, {}, "", Version::v1_2), std::string(spelling) + "\n\n\0"s);
  }
  EXPECT_EQ(parse_command(""), std::nullopt);
  EXPECT_EQ(parse_command("SEN"), std::nullopt);
  EXPECT_EQ(parse_command("SENDS"), std::nullopt);
  EXPECT_EQ(parse_command("connect"), std::nullopt);
}

TEST(Encoder, AppendsToExistingOutput) {
  std::string out = "prefix";
  encode(Command::receipt, {{"receipt-id", "1"}}, "", Version::v1_2, out);
  EXPECT_EQ(out, "prefixRECEIPT\nreceipt-id:1\n\n\0"s);
}

TEST(Encoder, AddsContentLengthForANonEmptyBody) {
  EXPECT_EQ(encoded(Command::message, {{"destination", "/queue/a"}}, "hi\0x"s, Version::v1_2),
            "MESSAGE\ndestination:/queue/a\ncontent-length:4\n\nhi\0x\0"s);
  // Not for an empty body, and not when the caller gave one.
  EXPECT_EQ(encoded(Command::message, {}, "", Version::v1_2), "MESSAGE\n\n\0"s);
  EXPECT_EQ(encoded(Command::message, {{"content-length", "2"}, {"x", "y"}}, "hi", Version::v1_0),
            "MESSAGE\ncontent-length:2\nx:y\n\nhi\0"s);
}

TEST(Encoder, EscapesHeadersPerVersion) {
  const Headers h = {{"a:b", "c\nd\\e\rf"}};
  EXPECT_EQ(encoded(Command::message, h, "", Version::v1_2),
            "MESSAGE\na\\cb:c\\nd\\\\e\\rf\n\n\0"s);
  EXPECT_EQ(encoded(Command::message, h, "", Version::v1_1),
            "MESSAGE\na\\cb:c\\nd\\\\e\rf\n\n\0"s);
  // 1.0 has no escaping: the caller must not give it what it cannot carry.
  EXPECT_EQ(encoded(Command::message, {{"k", "a\\b:c"}}, "", Version::v1_0),
            "MESSAGE\nk:a\\b:c\n\n\0"s);
}

TEST(Encoder, DoesNotEscapeConnectStompOrConnected) {
  for (Command c : {Command::connect, Command::stomp, Command::connected}) {
    for (Version v : {Version::v1_0, Version::v1_1, Version::v1_2}) {
      EXPECT_EQ(encoded(c, {{"passcode", "a\\b:c"}}, "", v),
                std::string(to_string(c)) + "\npasscode:a\\b:c\n\n\0"s);
    }
  }
}

TEST(Encoder, RoundTripsThroughTheDecoderInEveryVersion) {
  // Values each version can carry: 1.0 no EOLs or colons in names; 1.1 no trailing CR.
  struct Case {
    Version version;
    Headers headers;
  };
  const Case cases[] = {
      {Version::v1_0, {{"destination", "/queue/a"}, {"k", "v:with:colons\\"}, {"", ""}}},
      {Version::v1_1, {{"a:b", "c\nd\\e"}, {"mid", "car\rriage"}, {"dup", "1"}, {"dup", "2"}}},
      {Version::v1_2, {{"a:b", "c\nd\\e\r"}, {"\r\n", "\\\\"}, {"x", ""}}},
  };
  for (const auto& c : cases) {
    for (Command command : {Command::send, Command::message, Command::error, Command::ack}) {
      for (const std::string& body : {""s, "plain"s, "\0\0"s, std::string(5000, '\xab')}) {
        std::string wire;
        encode(command, c.headers, body, c.version, wire);
        auto step = decode(wire, c.version, {});
        ASSERT_TRUE(step.has_value()) << step.error().to_string();
        ASSERT_TRUE(step->frame);
        EXPECT_EQ(step->consumed, wire.size());
        Frame expected{command, c.headers, body};
        if (!body.empty()) expected.headers.emplace_back("content-length", std::to_string(body.size()));
        EXPECT_EQ(*step->frame, expected);
        // Encoding what was decoded gives the same bytes: the content-length is not added twice.
        std::string again;
        encode(*step->frame, c.version, again);
        EXPECT_EQ(again, wire);
      }
    }
  }
}

TEST(FrameWriter, MatchesEncodeForTheSameFrame) {
  for (auto version : {Version::v1_0, Version::v1_1, Version::v1_2}) {
    std::string direct;
    FrameWriter w(direct, Command::message, version);
    w.header("destination", "/queue/", "a:b");
    w.header("delivery-count", std::int64_t{3});
    w.header("x", "line\nbreak");
    w.finish(std::string_view("bo\0dy", 5));
    std::string via_encode;
    encode(Command::message, {{"destination", "/queue/a:b"}, {"delivery-count", "3"}, {"x", "line\nbreak"}},
           std::string_view("bo\0dy", 5), version, via_encode);
    EXPECT_EQ(direct, via_encode);
  }
}

}  // namespace
}  // namespace carrier::stomp::codec
