#include "session/protocol_session.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "net/fake_transport.hpp"

namespace carrier::session {
namespace {

// A session that echoes what it reads and records what its transport tells it.
class Echo : public ProtocolSession, public std::enable_shared_from_this<Echo> {
 public:
  using ProtocolSession::ProtocolSession;
  std::vector<std::string> events;
  bool pause_on_data = false;

  void on_data(std::string& buffer) override {
    events.push_back("data:" + buffer);
    if (pause_on_data) {
      pause_reading();
      return;
    }
    out() += buffer;
    buffer.clear();
    flush();
  }
  void on_write_started() override { events.push_back("write started"); }
  void on_write_done() override { events.push_back("write done"); }
  void on_closed() override { events.push_back("closed"); }
  void shutdown() override { close_after_flush(); }
};

class ProtocolSessionTest : public ::testing::Test {
 protected:
  net::asio::io_context io_;
  std::shared_ptr<net::FakeTransport> transport_ = std::make_shared<net::FakeTransport>(io_.get_executor());
};

TEST_F(ProtocolSessionTest, ReadsAndWritesThroughItsTransport) {
  auto s = std::make_shared<Echo>(transport_);
  EXPECT_EQ(transport_->handler(), s.get());
  transport_->receive("ping");
  EXPECT_EQ(transport_->queued_bytes(), 4u);
  EXPECT_EQ(transport_->writer_wakeups(), 1u);
  EXPECT_TRUE(transport_->write());
  EXPECT_EQ(transport_->take_written(), "ping");
  EXPECT_EQ(s->events, (std::vector<std::string>{"data:ping", "write started", "write done"}));
  EXPECT_EQ(s->log_prefix(), "[test c" + std::to_string(s->id()) + " 127.0.0.1:40000]");
}

TEST_F(ProtocolSessionTest, PausedInputIsOfferedAgainOnResume) {
  auto s = std::make_shared<Echo>(transport_);
  s->pause_on_data = true;
  transport_->receive("a");
  transport_->receive("b");  // not read while paused
  EXPECT_EQ(s->events, (std::vector<std::string>{"data:a"}));
  s->pause_on_data = false;
  transport_->resume_reading();
  EXPECT_EQ(s->events.size(), 1u) << "resuming is the reader's next turn, not a nested call";
  io_.poll();
  EXPECT_EQ(s->events.back(), "data:ab");
}

TEST_F(ProtocolSessionTest, CloseAfterFlushWritesFirstAndClosesOnce) {
  auto s = std::make_shared<Echo>(transport_);
  transport_->receive("bye");
  s->shutdown();
  EXPECT_TRUE(s->is_closing());
  EXPECT_FALSE(s->is_closed());
  transport_->receive("ignored");
  EXPECT_TRUE(transport_->write());
  EXPECT_FALSE(transport_->write());
  EXPECT_TRUE(s->is_closed());
  transport_->close();
  EXPECT_EQ(transport_->take_written(), "bye");
  EXPECT_EQ(s->events, (std::vector<std::string>{"data:bye", "write started", "write done", "closed"}));
}

TEST_F(ProtocolSessionTest, TheTransportForgetsASessionThatIsGone) {
  auto s = std::make_shared<Echo>(transport_);
  s.reset();
  EXPECT_EQ(transport_->handler(), nullptr);
  transport_->receive("nobody");  // no handler: nothing is called
  transport_->close();
  EXPECT_TRUE(transport_->is_closed());
}

}  // namespace
}  // namespace carrier::session
