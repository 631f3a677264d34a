#include "client/mqtt_client.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "mqtt/codec/decoder.hpp"
#include "mqtt/codec/encoder.hpp"

namespace carrier::client {
namespace {

namespace asio = net::asio;
namespace codec = mqtt::codec;
using namespace std::chrono_literals;

struct FakeMqttBehaviour {
  std::uint8_t connack_code = 0;  // 0: accepted; else the 3.1.1 return code
  bool ack_publishes = true;      // false: never answer QoS 1/2 PUBLISHes
  std::uint8_t granted_qos = 1;
};

// Just enough of an MQTT 3.1.1 server for the client's tests: answers CONNECT, QoS 1/2
// PUBLISHes, SUBSCRIBE, UNSUBSCRIBE and PINGREQ, records every packet, and lets the test send
// packets of its own (deliveries, late acknowledgements) or drop the connection.
//
// Runs on: its own thread and io_context; the test thread reads the records under mutex_.
class FakeMqttServer {
 public:
  explicit FakeMqttServer(FakeMqttBehaviour behaviour = {}) : behaviour_(behaviour) {
    acceptor_.open(net::tcp::v4());
    acceptor_.set_option(net::tcp::acceptor::reuse_address(true));
    acceptor_.bind(net::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    acceptor_.listen();
    port_ = acceptor_.local_endpoint().port();
    asio::co_spawn(io_, serve(this), asio::detached);
    thread_ = std::thread([this] { io_.run(); });
  }

  ~FakeMqttServer() {
    io_.stop();
    thread_.join();
  }

  std::uint16_t port() const { return port_; }

  std::vector<codec::Packet> packets() {
    std::lock_guard lock(mutex_);
    return packets_;
  }

  template <class T>
  std::vector<T> packets_of() {
    std::vector<T> out;
    for (auto& p : packets()) {
      if (auto* t = std::get_if<T>(&p)) out.push_back(*t);
    }
    return out;
  }

  template <class T>
  bool wait_for_count(std::size_t n, std::chrono::milliseconds timeout = 5s) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] {
      std::size_t count = 0;
      for (auto& p : packets_) count += std::holds_alternative<T>(p) ? 1 : 0;
      return count >= n;
    });
  }

  void send(const codec::Packet& packet) {
    std::string bytes;
    codec::encode(packet, codec::Version::v3_1_1, bytes);
    asio::post(io_, [this, bytes] {
      boost::system::error_code ignored;
      if (socket_.is_open()) asio::write(socket_, asio::buffer(bytes), ignored);
    });
  }

  void drop_connection() {
    asio::post(io_, [this] {
      boost::system::error_code ignored;
      socket_.close(ignored);
    });
  }

 private:
  static asio::awaitable<void> serve(FakeMqttServer* self) {
    boost::system::error_code ec;
    co_await self->acceptor_.async_accept(self->socket_, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return;
    std::string input;
    std::vector<char> chunk(16 * 1024);
    for (;;) {
      std::size_t n =
          co_await self->socket_.async_read_some(asio::buffer(chunk), asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return;
      input.append(chunk.data(), n);
      std::string out;
      for (;;) {
        auto step = codec::decode(input, codec::Version::v3_1_1, {});
        if (step.error) {
          ADD_FAILURE() << "client sent a bad packet: " << step.error->to_string();
          co_return;
        }
        if (!step.packet) break;
        input.erase(0, step.consumed);
        self->handle(*step.packet, out);
      }
      if (!out.empty()) {
        co_await asio::async_write(self->socket_, asio::buffer(out), asio::redirect_error(asio::use_awaitable, ec));
        if (ec) co_return;
      }
    }
  }

  void handle(const codec::Packet& packet, std::string& out) {
    {
      std::lock_guard lock(mutex_);
      packets_.push_back(packet);
    }
    changed_.notify_all();
    const auto v = codec::Version::v3_1_1;
    if (std::holds_alternative<codec::Connect>(packet)) {
      codec::Connack connack;
      connack.reason = static_cast<codec::ReasonCode>(behaviour_.connack_code);
      codec::encode(connack, v, out);
    } else if (const auto* publish = std::get_if<codec::Publish>(&packet)) {
      if (!behaviour_.ack_publishes) return;
      if (publish->qos == 1) codec::encode(codec::Puback{publish->packet_id}, v, out);
      if (publish->qos == 2) codec::encode(codec::Pubrec{publish->packet_id}, v, out);
    } else if (const auto* pubrel = std::get_if<codec::Pubrel>(&packet)) {
      codec::encode(codec::Pubcomp{pubrel->packet_id}, v, out);
    } else if (const auto* subscribe = std::get_if<codec::Subscribe>(&packet)) {
      codec::Suback suback;
      suback.packet_id = subscribe->packet_id;
      for (std::size_t i = 0; i < subscribe->topics.size(); ++i) {
        suback.reasons.push_back(static_cast<codec::ReasonCode>(behaviour_.granted_qos));
      }
      codec::encode(suback, v, out);
    } else if (const auto* unsubscribe = std::get_if<codec::Unsubscribe>(&packet)) {
      codec::Unsuback unsuback;
      unsuback.packet_id = unsubscribe->packet_id;
      codec::encode(unsuback, v, out);
    } else if (std::holds_alternative<codec::Pingreq>(packet)) {
      codec::encode(codec::Pingresp{}, v, out);
    }
  }

  FakeMqttBehaviour behaviour_;
  asio::io_context io_;
  net::tcp::acceptor acceptor_{io_};
  net::tcp::socket socket_{io_};
  std::uint16_t port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<codec::Packet> packets_;
};

TEST(MqttClient, ConnectPublishQos0AndPing) {
  FakeMqttServer server;
  MqttClient client;
  MqttConnectOptions options;
  options.client_id = "bench-1";
  options.keep_alive = std::chrono::seconds(60);
  ASSERT_TRUE(client.connect("127.0.0.1", server.port(), options));
  EXPECT_TRUE(client.connected());
  ASSERT_TRUE(client.publish("a/b", "hello", 0));
  ASSERT_TRUE(client.ping());  // the server read the PUBLISH before answering
  auto connects = server.packets_of<codec::Connect>();
  ASSERT_EQ(connects.size(), 1u);
  EXPECT_EQ(connects[0].client_id, "bench-1");
  EXPECT_EQ(connects[0].keep_alive, 60);
  EXPECT_TRUE(connects[0].clean_start);
  auto publishes = server.packets_of<codec::Publish>();
  ASSERT_EQ(publishes.size(), 1u);
  EXPECT_EQ(publishes[0].topic, "a/b");
  EXPECT_EQ(publishes[0].payload, "hello");
  EXPECT_EQ(publishes[0].qos, 0);
  EXPECT_TRUE(client.disconnect());
  EXPECT_TRUE(server.wait_for_count<codec::Disconnect>(1));
}

TEST(MqttClient, Qos1AndQos2PublishesAreConfirmed) {
  FakeMqttServer server;
  MqttClient client;
  ASSERT_TRUE(client.connect("127.0.0.1", server.port()));
  EXPECT_TRUE(client.publish("t", "one", 1));
  EXPECT_TRUE(client.publish("t", "two", 2));
  EXPECT_EQ(server.packets_of<codec::Pubrel>().size(), 1u);  // QoS 2: PUBREC answered with PUBREL
  std::promise<Status> done;
  ASSERT_TRUE(client.async_publish("t", "three", 1, false, [&](Status s) { done.set_value(s); }));
  EXPECT_TRUE(done.get_future().get());
  EXPECT_TRUE(client.wait_for_acks());
  auto publishes = server.packets_of<codec::Publish>();
  ASSERT_EQ(publishes.size(), 3u);
  EXPECT_NE(publishes[0].packet_id, 0);
  EXPECT_NE(publishes[0].packet_id, publishes[2].packet_id);  // ids are not reused while in use
  EXPECT_EQ(client.in_flight(), 0u);
}

TEST(MqttClient, TheWindowHoldsPublishersUntilAcknowledged) {
  FakeMqttServer server({.ack_publishes = false});
  MqttClient client;
  MqttConnectOptions options;
  options.max_in_flight = 2;
  ASSERT_TRUE(client.connect("127.0.0.1", server.port(), options));
  std::atomic<int> confirmed{0};
  auto count = [&](Status s) {
    if (s) ++confirmed;
  };
  ASSERT_TRUE(client.async_publish("t", "1", 1, false, count));
  ASSERT_TRUE(client.async_publish("t", "2", 1, false, count));
  EXPECT_EQ(client.in_flight(), 2u);
  std::atomic<bool> third_sent{false};
  std::thread third([&] {
    EXPECT_TRUE(client.async_publish("t", "3", 1, false, count));
    third_sent = true;
  });
  ASSERT_TRUE(server.wait_for_count<codec::Publish>(2));
  std::this_thread::sleep_for(100ms);  // give a wrong implementation time to send the third
  EXPECT_FALSE(third_sent.load());
  EXPECT_EQ(server.packets_of<codec::Publish>().size(), 2u);
  server.send(codec::Puback{server.packets_of<codec::Publish>()[0].packet_id});
  third.join();
  EXPECT_TRUE(server.wait_for_count<codec::Publish>(3));
  for (const auto& p : server.packets_of<codec::Publish>()) {
    if (p.payload != "1") server.send(codec::Puback{p.packet_id});
  }
  EXPECT_TRUE(client.wait_for_acks());
  EXPECT_EQ(confirmed.load(), 3);
}

TEST(MqttClient, SubscribeReceivesAndAcknowledges) {
  FakeMqttServer server({.granted_qos = 2});
  MqttClient client;
  std::mutex mutex;
  std::condition_variable arrived;
  std::vector<MqttMessage> messages;
  client.on_message([&](const MqttMessage& m) {
    std::lock_guard lock(mutex);
    messages.push_back(m);
    arrived.notify_all();
  });
  ASSERT_TRUE(client.connect("127.0.0.1", server.port()));
  auto granted = client.subscribe("sensors/#", 2);
  ASSERT_TRUE(granted);
  EXPECT_EQ(*granted, 2);
  auto subscribes = server.packets_of<codec::Subscribe>();
  ASSERT_EQ(subscribes.size(), 1u);
  EXPECT_EQ(subscribes[0].topics[0].filter, "sensors/#");

  server.send(codec::Publish{.qos = 1, .topic = "sensors/a", .packet_id = 7, .payload = "x"});
  EXPECT_TRUE(server.wait_for_count<codec::Puback>(1));
  EXPECT_EQ(server.packets_of<codec::Puback>()[0].packet_id, 7);
  // QoS 2 repeated before PUBREL: delivered once, PUBREC twice; PUBREL gets PUBCOMP.
  server.send(codec::Publish{.qos = 2, .topic = "sensors/b", .packet_id = 9, .payload = "y"});
  server.send(codec::Publish{.qos = 2, .dup = true, .topic = "sensors/b", .packet_id = 9, .payload = "y"});
  EXPECT_TRUE(server.wait_for_count<codec::Pubrec>(2));
  server.send(codec::Pubrel{9});
  EXPECT_TRUE(server.wait_for_count<codec::Pubcomp>(1));
  std::unique_lock lock(mutex);
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0].topic, "sensors/a");
  EXPECT_EQ(messages[0].qos, 1);
  EXPECT_EQ(messages[1].payload, "y");
  EXPECT_EQ(messages[1].qos, 2);
  lock.unlock();
  EXPECT_TRUE(client.unsubscribe({"sensors/#"}));
}

TEST(MqttClient, RefusedConnectIsPermissionDenied) {
  FakeMqttServer server({.connack_code = 5});
  MqttClient client;
  auto s = client.connect("127.0.0.1", server.port());
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, Errc::permission_denied);
  EXPECT_FALSE(client.connected());
}

TEST(MqttClient, ALostConnectionFailsWhatIsPending) {
  FakeMqttServer server({.ack_publishes = false});
  MqttClient client;
  std::promise<Error> reported;
  client.on_error([&](const Error& e) { reported.set_value(e); });
  ASSERT_TRUE(client.connect("127.0.0.1", server.port()));
  std::promise<Status> done;
  ASSERT_TRUE(client.async_publish("t", "x", 1, false, [&](Status s) { done.set_value(s); }));
  ASSERT_TRUE(server.wait_for_count<codec::Publish>(1));
  server.drop_connection();
  auto s = done.get_future().get();
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, Errc::io_error);
  EXPECT_EQ(reported.get_future().get().code, Errc::io_error);
  EXPECT_FALSE(client.publish("t", "y", 0));
  EXPECT_FALSE(client.ping());
}

TEST(MqttClient, NoServerIsAnIoError) {
  std::uint16_t port = 0;
  {
    FakeMqttServer server;  // a port nobody listens on once it is gone
    port = server.port();
  }
  MqttClient client;
  auto s = client.connect("127.0.0.1", port);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, Errc::io_error);
}

}  // namespace
}  // namespace carrier::client
