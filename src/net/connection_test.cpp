#include "net/connection.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

namespace carrier::net {
namespace {

// A handler attached to its transport for its lifetime, as sessions are.
class AttachedHandler : public TransportHandler {
 public:
  explicit AttachedHandler(std::shared_ptr<Transport> transport) : transport_(std::move(transport)) {
    transport_->set_handler(this);
  }
  ~AttachedHandler() override {
    if (transport_->handler() == this) transport_->set_handler(nullptr);
  }
  void shutdown() override { transport_->close_after_flush(); }

 protected:
  std::shared_ptr<Transport> transport_;
};

// Echoes what it reads; counts closes.
class EchoHandler : public AttachedHandler {
 public:
  using AttachedHandler::AttachedHandler;
  void on_data(std::string& buffer) override {
    transport_->out() += buffer;
    buffer.clear();
    transport_->flush();
  }
  void on_closed() override { ++closes; }
  int closes = 0;
};

// Takes four bytes, then pauses reading and leaves the rest, as a session does with what a
// client pipelined behind a CONNECT it is still authenticating; takes everything once resumed.
class PausingHandler : public AttachedHandler {
 public:
  using AttachedHandler::AttachedHandler;
  void on_data(std::string& buffer) override {
    if (!paused_once_) {
      paused_once_ = true;
      taken += buffer.substr(0, 4);
      buffer.erase(0, 4);
      transport_->pause_reading();
      return;
    }
    taken += buffer;
    buffer.clear();
  }
  void on_closed() override {}
  std::string taken;

 private:
  bool paused_once_ = false;
};

class ConnectionTest : public ::testing::Test {
 protected:
  ConnectionTest() : acceptor_(io_, tcp::endpoint(asio::ip::address_v4::loopback(), 0)), client_(io_) {
    client_.connect(acceptor_.local_endpoint());
    tcp::socket server(io_);
    acceptor_.accept(server);
    connection_ = std::make_shared<Connection>(std::move(server), model::ShardId(0), "test");
  }

  std::string read_some() {  // blocking: call once bytes are there
    std::string got(64, '\0');
    const std::size_t n = client_.read_some(asio::buffer(got));
    got.resize(n);
    return got;
  }

  asio::io_context io_;
  tcp::acceptor acceptor_;
  tcp::socket client_;
  std::shared_ptr<Connection> connection_;
};

TEST_F(ConnectionTest, CarriesBytesBothWaysAndReleasesItsSessionOnceItsLoopsEnd) {
  auto handler = std::make_shared<EchoHandler>(connection_);
  std::weak_ptr<EchoHandler> watch = handler;
  std::weak_ptr<Connection> watch_connection = connection_;
  connection_->start(std::move(handler));
  EXPECT_EQ(Connection::on_this_shard().count(connection_.get()), 1u);
  connection_.reset();  // the loops hold it now

  asio::write(client_, asio::buffer(std::string("ping")));
  while (client_.available() < 4 && io_.run_one_for(std::chrono::seconds(5)) != 0) {
  }
  EXPECT_EQ(read_some(), "ping");

  client_.close();  // EOF: the connection closes, its loops end, and both objects go
  while (!watch.expired() && io_.run_one_for(std::chrono::seconds(5)) != 0) {
  }
  EXPECT_TRUE(watch.expired()) << "the session outlived its connection's loops";
  EXPECT_TRUE(watch_connection.expired());
  EXPECT_TRUE(Connection::on_this_shard().empty());
}

TEST_F(ConnectionTest, ShutdownSaysGoodbyeThroughTheSessionThenCloses) {
  auto handler = std::make_shared<EchoHandler>(connection_);
  auto* raw = handler.get();
  std::weak_ptr<EchoHandler> watch = handler;
  connection_->start(std::move(handler));
  for (auto* t : Transport::on_this_shard()) t->shutdown();
  EXPECT_TRUE(connection_->is_closing());
  while (!connection_->is_closed() && io_.run_one_for(std::chrono::seconds(5)) != 0) {
  }
  EXPECT_EQ(raw->closes, 1);
  io_.poll();
  EXPECT_TRUE(watch.expired());
  EXPECT_EQ(connection_->handler(), nullptr);
}

TEST_F(ConnectionTest, AnIdleConnectionHoldsNoReadBufferAfterInputThatWaitedOutAPause) {
  auto handler = std::make_shared<PausingHandler>(connection_);
  auto* raw = handler.get();
  connection_->start(std::move(handler));
  asio::write(client_, asio::buffer(std::string("CONNSUBSCRIBE")));
  while (raw->taken.empty() && io_.run_one_for(std::chrono::seconds(5)) != 0) {
  }
  ASSERT_EQ(raw->taken, "CONN");
  ASSERT_TRUE(connection_->is_paused());

  connection_->resume_reading();
  while (raw->taken.size() < 13 && io_.run_one_for(std::chrono::seconds(5)) != 0) {
  }
  io_.poll();  // the reader goes back to waiting for the next bytes
  EXPECT_EQ(raw->taken, "CONNSUBSCRIBE");
  // Waiting with a read chunk allocated would cost every such idle client 64 KiB.
  EXPECT_LT(connection_->read_buffer_capacity(), 1024u);

  asio::write(client_, asio::buffer(std::string("MORE")));  // and it still reads
  while (raw->taken.size() < 17 && io_.run_one_for(std::chrono::seconds(5)) != 0) {
  }
  EXPECT_EQ(raw->taken, "CONNSUBSCRIBEMORE");
  connection_->close();
  io_.poll();
}

}  // namespace
}  // namespace carrier::net
