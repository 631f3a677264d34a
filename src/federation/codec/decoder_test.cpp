#include "federation/codec/decoder.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "federation/codec/test_support.hpp"

namespace carrier::federation::codec {
namespace {

using namespace testing;

std::vector<Frame> conversation() {
  BasicMessage m;
  m.selector = "orders";
  m.payload = std::string(300, 'p');
  m.stack = {1};
  return {Frame{1, NegotiateRequest{}}, Frame{1, NegotiateResult{Negotiator{5, 77, "OK"}}},
          Frame{2, PushRequest{m, Forwarder{}, 3}}, Frame{2, StringResult{"OK"}},
          Frame{3, SetMaxRateRequest{64'000, RateUnit::bits_per_second}}};
}

std::string encode_all(const std::vector<Frame>& frames) {
  std::string wire;
  for (const Frame& f : frames) EXPECT_TRUE(encode_frame(f, wire));
  return wire;
}

// A link's read loop: append what arrived, decode while frames come out.
std::vector<Frame> read_in_pieces(std::string_view stream, const std::vector<std::size_t>& piece_sizes) {
  std::vector<Frame> frames;
  std::string buffer;
  std::size_t at = 0;
  std::size_t piece = 0;
  while (at < stream.size()) {
    const std::size_t n = std::min(piece_sizes[piece++ % piece_sizes.size()], stream.size() - at);
    buffer.append(stream.substr(at, n));
    at += n;
    for (;;) {
      auto step = decode(buffer, Limits{});
      EXPECT_TRUE(step.has_value());
      if (!step || step->need_more()) {
        if (step) {
          EXPECT_GT(step->need_at_least, buffer.size());
        }
        break;
      }
      EXPECT_TRUE(step->frame.has_value());
      frames.push_back(*step->frame);
      buffer.erase(0, step->consumed);
    }
  }
  EXPECT_TRUE(buffer.empty());
  return frames;
}

TEST(Decoder, AnySplitGivesTheSameFrames) {
  const auto frames = conversation();
  const std::string wire = encode_all(frames);
  EXPECT_EQ(read_in_pieces(wire, {wire.size()}), frames);
  EXPECT_EQ(read_in_pieces(wire, {1}), frames);
  std::mt19937 rng(15);
  for (int round = 0; round < 50; ++round) {
    std::vector<std::size_t> sizes;
    for (int i = 0; i < 8; ++i) sizes.push_back(1 + rng() % 40);
    EXPECT_EQ(read_in_pieces(wire, sizes), frames);
  }
}

TEST(Decoder, NeedMoreNamesTheBytesItWaitsFor) {
  std::string wire;
  ASSERT_TRUE(encode_frame(Frame{1, StringResult{"OK"}}, wire));
  for (std::size_t n = 0; n < wire.size(); ++n) {
    auto step = decode(std::string_view(wire).substr(0, n), Limits{});
    ASSERT_TRUE(step.has_value());
    EXPECT_TRUE(step->need_more());
    EXPECT_EQ(step->consumed, 0u);
    EXPECT_EQ(step->need_at_least, n < kFrameHeaderBytes ? kFrameHeaderBytes : wire.size());
  }
}

TEST(Decoder, OversizedFrameIsRefusedFromItsHeader) {
  Limits limits;
  limits.max_frame_bytes = 64;
  // 52 body bytes make a 64-byte frame: accepted. 53: refused before any body arrives.
  auto fits = decode(be32(52) + be32(3) + be32(1), limits);
  ASSERT_TRUE(fits.has_value());
  EXPECT_EQ(fits->need_at_least, 64u);
  auto over = decode(be32(53) + be32(3) + be32(1), limits);
  ASSERT_FALSE(over.has_value());
  EXPECT_EQ(over.error().code, Errc::limit_exceeded);
  EXPECT_NE(over.error().detail.find("65 bytes is over the limit of 64"), std::string::npos) << over.error().detail;
  auto hostile = decode(be32(0xffff'ffffu) + be32(3) + be32(1), Limits{});
  ASSERT_FALSE(hostile.has_value());
  EXPECT_EQ(hostile.error().code, Errc::limit_exceeded);
}

TEST(Decoder, UnknownOperationIsSteppedOverAndNamed) {
  std::string wire = be32(3) + be32(99) + be32(0x0a0b0c0d) + "xyz";
  ASSERT_TRUE(encode_frame(Frame{2, StringResult{"OK"}}, wire));
  auto first = decode(wire, Limits{});
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(first->rejected.has_value());
  EXPECT_FALSE(first->frame.has_value());
  EXPECT_TRUE(first->rejected->unknown_operation);
  EXPECT_EQ(first->rejected->operation, 99u);
  EXPECT_EQ(first->rejected->request_id, 0x0a0b0c0du);
  EXPECT_NE(first->rejected->error.detail.find("unknown operation 99"), std::string::npos);
  EXPECT_EQ(first->consumed, 15u);
  // The link stays in step: the next frame decodes.
  auto second = decode(std::string_view(wire).substr(first->consumed), Limits{});
  ASSERT_TRUE(second.has_value());
  ASSERT_TRUE(second->frame.has_value());
  EXPECT_EQ(*second->frame, (Frame{2, StringResult{"OK"}}));
}

TEST(Decoder, MalformedBodyIsSteppedOver) {
  // A push whose BasicMessage announces a stack of 2^31 entries.
  std::string wire = be32(80) + be32(3) + be32(4) + be32(5) + be32(0) + be32(0) + be32(0x8000'0000u) +
                     std::string(64, 'a');
  ASSERT_EQ(wire.size(), 92u);
  ASSERT_TRUE(encode_frame(Frame{5, StringResult{"next"}}, wire));
  auto first = decode(wire, Limits{});
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(first->rejected.has_value());
  EXPECT_FALSE(first->rejected->unknown_operation);
  EXPECT_EQ(first->rejected->operation, 3u);
  EXPECT_EQ(first->rejected->request_id, 4u);
  EXPECT_EQ(first->rejected->error.code, Errc::limit_exceeded);
  EXPECT_NE(first->rejected->error.detail.find("stack size"), std::string::npos);
  EXPECT_NE(first->rejected->error.detail.find("at byte 24"), std::string::npos) << first->rejected->error.detail;
  auto second = decode(std::string_view(wire).substr(first->consumed), Limits{});
  ASSERT_TRUE(second.has_value() && second->frame.has_value());
  EXPECT_EQ(second->frame->request_id, 5u);
}

}  // namespace
}  // namespace carrier::federation::codec
