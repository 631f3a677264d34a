#include "federation/codec/frame.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "federation/codec/decoder.hpp"
#include "federation/codec/test_support.hpp"

namespace carrier::federation::codec {
namespace {

using namespace testing;

RemoteNode node() {
  return RemoteNode{make_id(9), NodeProperty{{{"selectors", {"orders.>", "prices.eu"}}, {"locale", {"en_GB"}}}}};
}

// One frame of every operation, the ids distinct.
std::vector<Frame> every_operation() {
  return {
      Frame{1, NegotiateRequest{kProtocolVersion, Negotiator{10, -1, ""}}},
      Frame{2, EstablishRequest{node(), 7}},
      Frame{3, PushRequest{sample_message(), Forwarder{1, "priority", "9"}, 7}},
      Frame{4, SendbackRequest{sample_message(), 7}},
      Frame{5, StopForwardingRequest{make_id(0x50), "orders.>"}},
      Frame{6, RestartForwardingRequest{make_id(0x50), "orders.>"}},
      Frame{7, SetMaxRateRequest{1'000'000, RateUnit::bits_per_second}},
      Frame{8, SetMaxRateRequest{500, RateUnit::messages_per_second}},
      Frame{9, StringResult{"OK"}},
      Frame{10, StringResult{""}},
      Frame{11, NegotiateResult{Negotiator{10, 42, "OK"}}},
      Frame{0xffff'ffffu, EstablishResult{node()}},
  };
}

TEST(Frame, EveryOperationRoundTrips) {
  for (const Frame& frame : every_operation()) {
    std::string wire;
    ASSERT_TRUE(encode_frame(frame, wire));
    auto step = decode(wire, Limits{});
    ASSERT_TRUE(step.has_value()) << step.error().to_string();
    ASSERT_TRUE(step->frame.has_value()) << (step->rejected ? step->rejected->error.to_string() : "need more");
    EXPECT_EQ(step->consumed, wire.size());
    EXPECT_EQ(*step->frame, frame);
  }
}

TEST(Frame, HeaderIsLengthOperationRequestId) {
  std::string wire;
  ASSERT_TRUE(encode_frame(Frame{0x01020304, StringResult{"OK"}}, wire));
  EXPECT_EQ(wire, be32(4) + be32(0x8000'0000u) + be32(0x01020304) + "OK\r\n");

  wire.clear();
  ASSERT_TRUE(encode_frame(Frame{5, StopForwardingRequest{make_id(0), "a"}}, wire));
  EXPECT_EQ(wire, be32(18) + be32(5) + be32(5) + id_bytes(make_id(0)) + pstr("a"));

  wire.clear();
  ASSERT_TRUE(encode_frame(Frame{6, SetMaxRateRequest{300, RateUnit::messages_per_second}}, wire));
  EXPECT_EQ(wire, be32(8) + be32(7) + be32(6) + be32(300) + be32(1));

  wire.clear();
  ASSERT_TRUE(encode_frame(Frame{1, NegotiateRequest{}}, wire));
  EXPECT_EQ(wire, be32(13) + be32(1) + be32(1) + be32(kProtocolVersion) + be32(0) + be32(0xffff'ffffu) + pstr(""));
}

TEST(Frame, OperationNamesAreTheSeeds) {
  EXPECT_STREQ(operation_name(5), "stopForwarding");
  EXPECT_STREQ(operation_name(6), "restartForwarding");
  EXPECT_STREQ(operation_name(7), "setMaxRate");
  EXPECT_EQ(operation_name(0), nullptr);
  EXPECT_EQ(operation_name(8), nullptr);
  EXPECT_EQ(operation_name(0x8000'0003u), nullptr);
}

// Each body cut short, in a frame whose header says so, is rejected (the stream stays in step),
// never decoded as something shorter.
TEST(Frame, EveryTruncatedBodyIsRejected) {
  for (const Frame& frame : every_operation()) {
    std::string wire;
    ASSERT_TRUE(encode_frame(frame, wire));
    const std::string body = wire.substr(kFrameHeaderBytes);
    for (std::size_t n = 0; n < body.size(); ++n) {
      std::string cut = be32(static_cast<std::uint32_t>(n)) + wire.substr(4, 8) + body.substr(0, n);
      auto step = decode(cut, Limits{});
      ASSERT_TRUE(step.has_value());
      ASSERT_TRUE(step->rejected.has_value())
          << operation_name(static_cast<std::uint32_t>(frame.operation())) << " body cut to " << n;
      EXPECT_FALSE(step->rejected->unknown_operation);
      EXPECT_EQ(step->rejected->request_id, frame.request_id);
      EXPECT_EQ(step->consumed, cut.size());
    }
  }
}

TEST(Frame, BadBodiesAreRejectedWithAReason) {
  const std::pair<std::string, std::string_view> cases[] = {
      {be32(8) + be32(7) + be32(1) + be32(1) + be32(2), "unknown unit 2 at byte 16"},
      {be32(2) + be32(0x8000'0000u) + be32(1) + "OK", "does not end with CR LF"},
      {be32(5) + be32(0x8000'0000u) + be32(1) + "O\rK\r\n", "CR, LF or NUL inside"},
      {be32(5) + be32(0x8000'0000u) + be32(1) + std::string("O\0K\r\n", 5), "CR, LF or NUL inside"},
      {be32(5) + be32(0x8000'0000u) + be32(1) + "OK\r\nx", "does not end with CR LF"},
      {be32(9) + be32(7) + be32(1) + be32(1) + be32(0) + "x", "trailing bytes at byte 20"},
  };
  for (const auto& [wire, expected] : cases) {
    auto step = decode(wire, Limits{});
    ASSERT_TRUE(step.has_value());
    ASSERT_TRUE(step->rejected.has_value()) << expected;
    EXPECT_EQ(step->rejected->error.code, Errc::protocol_error);
    EXPECT_NE(step->rejected->error.detail.find(expected), std::string::npos)
        << step->rejected->error.detail << " (wanted: " << expected << ")";
  }
}

TEST(Frame, ResultStringLimit) {
  Limits small;
  small.max_string_bytes = 2;
  std::string wire;
  ASSERT_TRUE(encode_frame(Frame{1, StringResult{"ERR"}}, wire));
  auto step = decode(wire, small);
  ASSERT_TRUE(step.has_value());
  ASSERT_TRUE(step->rejected.has_value());
  EXPECT_EQ(step->rejected->error.code, Errc::limit_exceeded);
}

TEST(Frame, EncoderRefusesWhatTheWireCannotCarry) {
  std::string out = "kept";
  for (const Frame& bad : {Frame{1, StringResult{"a\r\nb"}}, Frame{1, StringResult{std::string(1, '\0')}},
                           Frame{1, StopForwardingRequest{make_id(0), std::string("a\0", 2)}},
                           Frame{1, EstablishRequest{RemoteNode{make_id(0), {{{"k", {}}, {"k", {}}}}}, 1}}}) {
    auto s = encode_frame(bad, out);
    ASSERT_FALSE(s.has_value());
    EXPECT_EQ(s.error().code, Errc::invalid_argument);
    EXPECT_EQ(out, "kept");
  }
}

}  // namespace
}  // namespace carrier::federation::codec
