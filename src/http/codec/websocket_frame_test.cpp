#include "http/codec/websocket_frame.hpp"

#include <gtest/gtest.h>

namespace carrier::http::codec {
namespace {

constexpr std::uint32_t kMask = 0x37fa213d;

std::string masked(WsOpcode op, std::string_view payload, bool fin = true) {
  std::string f;
  ws_append_masked_frame(f, op, payload, kMask);
  if (!fin) f[0] = static_cast<char>(f[0] & 0x7F);
  return f;
}

TEST(WsFrameDecoder, DataFramesBecomeOneByteStreamInAnySplit) {
  const std::string wire = masked(WsOpcode::text, "SEND\n") + masked(WsOpcode::binary, std::string(70000, 'x'));
  for (std::size_t step : {1u, 3u, 7u, 1000u, 200000u}) {
    WsFrameDecoder d({});
    std::string data;
    std::string pending;
    for (std::size_t i = 0; i < wire.size(); i += step) {
      pending.append(wire.substr(i, step));
      auto r = d.decode(pending, data);
      ASSERT_EQ(r.status, WsDecoded::Status::need_more);
      pending.erase(0, r.consumed);
    }
    EXPECT_EQ(data, "SEND\n" + std::string(70000, 'x')) << step;
    EXPECT_TRUE(pending.empty());
  }
}

TEST(WsFrameDecoder, FragmentsWithAPingBetween) {
  WsFrameDecoder d({});
  std::string data;
  const std::string wire = masked(WsOpcode::binary, "ab", false) + masked(WsOpcode::ping, "hi") +
                           masked(WsOpcode::continuation, "cd");
  auto r = d.decode(wire, data);
  ASSERT_EQ(r.status, WsDecoded::Status::control);
  EXPECT_EQ(r.opcode, WsOpcode::ping);
  EXPECT_EQ(r.payload, "hi");
  auto r2 = d.decode(std::string_view(wire).substr(r.consumed), data);
  EXPECT_EQ(r2.status, WsDecoded::Status::need_more);
  EXPECT_EQ(data, "abcd");
}

TEST(WsFrameDecoder, UnmaskedFrameIsAProtocolError) {
  WsFrameDecoder d({});
  std::string data;
  std::string f;
  ws_append_frame(f, WsOpcode::text, "x");
  auto r = d.decode(f, data);
  EXPECT_EQ(r.status, WsDecoded::Status::error);
  EXPECT_EQ(r.close, WsClose::protocol_error);
  EXPECT_TRUE(d.failed());
}

TEST(WsFrameDecoder, HugeLengthIsTooBig) {
  WsFrameDecoder d({.max_frame_bytes = 1024});
  std::string data;
  std::string f = "\x82\xFF";
  f += std::string("\x80\0\0\0\0\0\0\0", 8);  // 2^63
  auto r = d.decode(f, data);
  EXPECT_EQ(r.status, WsDecoded::Status::error);
  EXPECT_EQ(r.close, WsClose::too_big);
}

TEST(WsFrameDecoder, RefusesWhatRfc6455Forbids) {
  struct Case {
    std::string wire;
    WsClose close;
  };
  std::string long_ping = masked(WsOpcode::ping, std::string(126, 'p'));
  std::string rsv = masked(WsOpcode::binary, "x");
  rsv[0] = static_cast<char>(rsv[0] | 0x40);
  const Case cases[] = {
      {masked(WsOpcode::continuation, "x"), WsClose::protocol_error},
      {masked(WsOpcode::binary, "x", false) + masked(WsOpcode::binary, "y"), WsClose::protocol_error},
      {masked(WsOpcode::ping, "x", false), WsClose::protocol_error},
      {long_ping, WsClose::protocol_error},
      {rsv, WsClose::protocol_error},
      {masked(static_cast<WsOpcode>(3), "x"), WsClose::protocol_error},
  };
  for (const auto& c : cases) {
    WsFrameDecoder d({});
    std::string data;
    auto r = d.decode(c.wire, data);
    EXPECT_EQ(r.status, WsDecoded::Status::error) << r.reason;
    EXPECT_EQ(r.close, c.close);
  }
}

TEST(WsFrameDecoder, BinaryOnlyRefusesText) {
  WsFrameDecoder d({.binary_only = true});
  std::string data;
  auto r = d.decode(masked(WsOpcode::text, "x"), data);
  EXPECT_EQ(r.status, WsDecoded::Status::error);
  EXPECT_EQ(r.close, WsClose::unsupported_data);
}

TEST(WsFrameDecoder, ClientSideReadsUnmaskedServerFrames) {
  WsFrameDecoder d({.client_frames = false});
  std::string wire;
  ws_append_frame(wire, WsOpcode::binary, "MESSAGE\n");
  ws_append_frame(wire, WsOpcode::ping, "p");
  std::string data;
  auto r = d.decode(wire, data);
  EXPECT_EQ(r.status, WsDecoded::Status::control);
  EXPECT_EQ(data, "MESSAGE\n");
  WsFrameDecoder strict({.client_frames = false});
  std::string ignored;
  EXPECT_EQ(strict.decode(masked(WsOpcode::binary, "x"), ignored).status, WsDecoded::Status::error);
}

TEST(WsFrameEncoder, HeaderLengthForms) {
  for (std::size_t n : {0u, 125u, 126u, 65535u, 65536u}) {
    std::string f;
    ws_append_frame(f, WsOpcode::binary, std::string(n, 'z'));
    const std::size_t header = n < 126 ? 2 : n <= 65535 ? 4 : 10;
    EXPECT_EQ(f.size(), header + n);
    EXPECT_EQ(static_cast<std::uint8_t>(f[0]), 0x82);
  }
  std::string c;
  ws_append_close(c, WsClose::too_big, std::string(300, 'r'));
  EXPECT_EQ(c.size(), 2u + 125u);
  EXPECT_EQ(static_cast<std::uint8_t>(c[2]), 1009 >> 8);
  EXPECT_EQ(static_cast<std::uint8_t>(c[3]), 1009 & 0xFF);
}

}  // namespace
}  // namespace carrier::http::codec
