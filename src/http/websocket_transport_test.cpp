#include "http/websocket_transport.hpp"

#include <gtest/gtest.h>

#include "net/fake_transport.hpp"

namespace carrier::http {
namespace {

using codec::WsOpcode;

// The session above: records what it is handed; consumes all of it unless told to keep some.
class Recorder : public net::TransportHandler {
 public:
  void on_data(std::string& buffer) override {
    received += buffer.substr(0, buffer.size() - keep);
    buffer.erase(0, buffer.size() - keep);
    if (pause_after_data) transport->pause_reading();
  }
  void on_write_started() override { ++writes_started; }
  void on_write_done() override { ++writes_done; }
  void on_closed() override { ++closed; }
  void shutdown() override {}

  net::Transport* transport = nullptr;
  std::string received;
  std::size_t keep = 0;
  bool pause_after_data = false;
  int writes_started = 0;
  int writes_done = 0;
  int closed = 0;
};

// The server's frames, parsed back from what the lower transport wrote.
struct ServerFrame {
  WsOpcode opcode;
  std::string payload;
};

std::vector<ServerFrame> frames_in(std::string_view wire) {
  std::vector<ServerFrame> out;
  while (wire.size() >= 2) {
    const auto op = static_cast<WsOpcode>(static_cast<std::uint8_t>(wire[0]) & 0x0F);
    std::uint64_t n = static_cast<std::uint8_t>(wire[1]) & 0x7F;
    std::size_t at = 2;
    if (n == 126) {
      n = (static_cast<std::uint8_t>(wire[2]) << 8) | static_cast<std::uint8_t>(wire[3]);
      at = 4;
    } else if (n == 127) {
      n = 0;
      for (int i = 0; i < 8; ++i) n = (n << 8) | static_cast<std::uint8_t>(wire[2 + i]);
      at = 10;
    }
    out.push_back({op, std::string(wire.substr(at, n))});
    wire.remove_prefix(at + n);
  }
  return out;
}

std::string client_frame(WsOpcode op, std::string_view payload) {
  std::string f;
  codec::ws_append_masked_frame(f, op, payload, 0x01020304);
  return f;
}

class WebSocketTransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    lower_ = std::make_shared<net::FakeTransport>(io_.get_executor());
    ws_ = std::make_shared<WebSocketTransport>(lower_, "ws-test", codec::WsDecodeLimits{.max_frame_bytes = 1024});
    ws_->attach();
    upper_.transport = ws_.get();
    ws_->set_handler(&upper_);
  }
  void TearDown() override { ws_->set_handler(nullptr); }

  net::asio::io_context io_;
  std::shared_ptr<net::FakeTransport> lower_;
  std::shared_ptr<WebSocketTransport> ws_;
  Recorder upper_;
};

TEST_F(WebSocketTransportTest, PayloadsReachTheSessionAsOneStream) {
  const std::string wire = client_frame(WsOpcode::text, "CONN") + client_frame(WsOpcode::binary, "ECT\n");
  lower_->receive(wire.substr(0, 9));
  lower_->receive(wire.substr(9));
  EXPECT_EQ(upper_.received, "CONNECT\n");
  EXPECT_TRUE(lower_->unread().empty());
}

TEST_F(WebSocketTransportTest, EachOutputBatchIsOneBinaryFrameOneWriteAtATime) {
  ws_->out() += "first";
  ws_->flush();
  EXPECT_EQ(upper_.writes_started, 0);  // the writer's turn is posted, never inside flush()
  io_.poll();
  ws_->out() += "second";
  ws_->out() += "+third";
  ws_->flush();
  io_.poll();
  EXPECT_EQ(upper_.writes_started, 1);
  EXPECT_TRUE(lower_->write());  // "first" goes; the rest waited for it and is taken right after
  EXPECT_EQ(upper_.writes_done, 1);
  EXPECT_EQ(upper_.writes_started, 2);
  EXPECT_TRUE(lower_->write());
  auto frames = frames_in(lower_->written());
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].opcode, WsOpcode::binary);
  EXPECT_EQ(frames[0].payload, "first");
  EXPECT_EQ(frames[1].payload, "second+third");
  EXPECT_EQ(ws_->queued_bytes(), 0u);
}

TEST_F(WebSocketTransportTest, PingIsAnsweredWithPong) {
  lower_->receive(client_frame(WsOpcode::ping, "abc"));
  lower_->write();
  auto frames = frames_in(lower_->written());
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].opcode, WsOpcode::pong);
  EXPECT_EQ(frames[0].payload, "abc");
  EXPECT_TRUE(upper_.received.empty());
}

TEST_F(WebSocketTransportTest, BadFrameSendsItsCloseCodeAndClosesTheSession) {
  lower_->receive(std::string("\x82\x01x", 3));  // unmasked
  EXPECT_EQ(upper_.closed, 1);
  EXPECT_TRUE(ws_->is_closed());
  lower_->write();
  auto frames = frames_in(lower_->written());
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].opcode, WsOpcode::close);
  EXPECT_EQ(static_cast<std::uint8_t>(frames[0].payload[0]) << 8 | static_cast<std::uint8_t>(frames[0].payload[1]), 1002);
  lower_->write();
  EXPECT_TRUE(lower_->is_closed());
}

TEST_F(WebSocketTransportTest, CloseAfterFlushSendsDataThenCloseFrame) {
  ws_->out() += "bye";
  ws_->close_after_flush();
  io_.poll();
  while (lower_->write()) {
  }
  auto frames = frames_in(lower_->written());
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].payload, "bye");
  EXPECT_EQ(frames[1].opcode, WsOpcode::close);
  EXPECT_TRUE(lower_->is_closed());
  EXPECT_EQ(upper_.closed, 1);
}

TEST_F(WebSocketTransportTest, PauseStopsTheSocketAndResumeRedeliversWhatWasLeft) {
  upper_.keep = 3;
  upper_.pause_after_data = true;
  lower_->receive(client_frame(WsOpcode::text, "abcdef"));
  EXPECT_EQ(upper_.received, "abc");
  EXPECT_TRUE(lower_->is_paused());
  lower_->receive(client_frame(WsOpcode::text, "gh"));  // held below while paused
  EXPECT_EQ(upper_.received, "abc");
  upper_.keep = 0;
  upper_.pause_after_data = false;
  ws_->resume_reading();
  io_.poll();
  EXPECT_EQ(upper_.received, "abcdefgh");
  EXPECT_FALSE(lower_->is_paused());
}

TEST_F(WebSocketTransportTest, PeerCloseIsAnsweredAndEndsTheSession) {
  lower_->receive(client_frame(WsOpcode::close, std::string("\x03\xe8", 2)));
  EXPECT_EQ(upper_.closed, 1);
  lower_->write();
  auto frames = frames_in(lower_->written());
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].opcode, WsOpcode::close);
}

}  // namespace
}  // namespace carrier::http
