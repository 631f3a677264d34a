#include "net/connection.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

namespace carrier::net {
namespace {

// Echoes what it reads; counts closes.
class EchoHandler : public TransportHandler {
 public:
  explicit EchoHandler(std::shared_ptr<Transport> transport) : transport_(std::move(transport)) {
    transport_->set_handler(this);
  }
  ~EchoHandler() override {
    if (transport_->handler() == this) transport_->set_handler(nullptr);
  }
  void on_data(std::string& buffer) override {
    transport_->out() += buffer;
    buffer.clear();
    transport_->flush();
  }
  void on_closed() override { ++closes; }
  void shutdown() override { transport_->close_after_flush(); }
  int closes = 0;

 private:
  std::shared_ptr<Transport> transport_;
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

}  // namespace
}  // namespace carrier::net
