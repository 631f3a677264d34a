#include "mqtt/session.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "auth/options.hpp"
#include "mqtt/codec/decoder.hpp"
#include "mqtt/codec/encoder.hpp"
#include "mqtt/service.hpp"
#include "session/session_test_fixture.hpp"

namespace carrier::mqtt {
namespace {

using codec::ReasonCode;
using codec::Version;

// MQTT sessions over fake transports (session::testing::SessionTest: the broker, timers and
// writers run by hand).
class MqttSessionTest : public session::testing::SessionTest {
 protected:
  struct Client {
    std::shared_ptr<net::FakeTransport> transport;
    std::shared_ptr<Session> session;
    Version version = Version::v3_1_1;
  };

  MqttSessionTest() : handshakes_(100) {
    authenticator_ = std::move(*auth::Authenticator::create(auth::Options{}, ex_));
    service_ = std::make_unique<Service>(ex_, std::vector<core::Broker*>{broker_.get()}, options_, *authenticator_,
                                         handshakes_);
    service_->start(model::ShardId(0));
  }
  ~MqttSessionTest() override {
    close_all();
    clients_.clear();
  }

  Client& open(Version version = Version::v3_1_1) {
    Client c;
    c.version = version;
    c.transport = make_transport("mqtt");
    c.session = std::make_shared<Session>(c.transport, *broker_, *service_, options_, handshakes_.try_acquire());
    c.session->start_watchdog();
    clients_.push_back(std::move(c));
    return clients_.back();
  }

  static void send(Client& c, const codec::Packet& packet) {
    std::string bytes;
    codec::encode(packet, c.version, bytes);
    c.transport->receive(bytes);
  }

  // What the broker wrote to `c` since last asked, decoded.
  static std::vector<codec::Packet> received(Client& c) {
    const std::string bytes = c.transport->take_written();
    std::vector<codec::Packet> out;
    std::string_view rest(bytes);
    while (!rest.empty()) {
      auto r = codec::decode(rest, c.version, codec::DecoderLimits{});
      if (!r.packet) {
        ADD_FAILURE() << "undecodable output";
        break;
      }
      out.push_back(std::move(*r.packet));
      rest.remove_prefix(r.consumed);
    }
    return out;
  }

  // Sends `packet`, settles, and returns the answer (expected to be one packet of type T).
  template <class T>
  T exchange(Client& c, const codec::Packet& packet) {
    send(c, packet);
    settle();
    auto got = received(c);
    EXPECT_EQ(got.size(), 1u);
    if (got.empty() || !std::holds_alternative<T>(got.front())) {
      ADD_FAILURE() << "not the expected packet";
      return T{};
    }
    return std::get<T>(got.front());
  }

  // `clean`: false for a persistent session (its subscriptions are durable queues in the core).
  void connect(Client& c, std::string client_id, bool clean = true) {
    codec::Connect connect{.version = c.version, .clean_start = clean, .client_id = std::move(client_id)};
    const auto connack = exchange<codec::Connack>(c, connect);
    ASSERT_EQ(connack.reason, ReasonCode::success);
  }

  std::unique_ptr<auth::Authenticator> authenticator_;
  net::HandshakeLimit handshakes_;
  Options options_;
  std::unique_ptr<Service> service_;
  std::deque<Client> clients_;  // references stay valid as clients are added
};

TEST_F(MqttSessionTest, ConnectGetsConnack) {
  auto& c = open();
  codec::Connect connect{.version = Version::v3_1_1, .clean_start = true, .keep_alive = 30, .client_id = "c1"};
  const auto connack = exchange<codec::Connack>(c, connect);
  EXPECT_EQ(connack.reason, ReasonCode::success);
  EXPECT_FALSE(connack.session_present);
  EXPECT_FALSE(c.transport->is_closing());
}

TEST_F(MqttSessionTest, APacketBeforeConnectClosesTheConnection) {
  auto& c = open();
  send(c, codec::Pingreq{});
  settle();
  EXPECT_TRUE(c.transport->is_closed());
  EXPECT_TRUE(received(c).empty());
}

TEST_F(MqttSessionTest, SubscribeGetsSubackAndAQos1PublishIsAckedAndDelivered) {
  auto& c = open();
  connect(c, "c1", false);
  const auto suback = exchange<codec::Suback>(c, codec::Subscribe{.packet_id = 1, .topics = {{.filter = "t/+", .qos = 1}}});
  EXPECT_EQ(suback.packet_id, 1);
  ASSERT_EQ(suback.reasons.size(), 1u);
  EXPECT_EQ(suback.reasons[0], static_cast<ReasonCode>(1)) << "QoS 1 granted";

  send(c, codec::Publish{.qos = 1, .topic = "t/a", .packet_id = 7, .payload = "hi"});
  settle();
  auto got = received(c);
  ASSERT_EQ(got.size(), 2u);
  bool acked = false;
  std::optional<codec::Publish> delivered;
  for (auto& p : got) {
    if (auto* a = std::get_if<codec::Puback>(&p)) acked = a->packet_id == 7 && a->reason == ReasonCode::success;
    if (auto* d = std::get_if<codec::Publish>(&p)) delivered = *d;
  }
  EXPECT_TRUE(acked);
  ASSERT_TRUE(delivered);
  EXPECT_EQ(delivered->topic, "t/a");
  EXPECT_EQ(delivered->payload, "hi");
  EXPECT_EQ(delivered->qos, 1);
  EXPECT_EQ(broker_->stats().messages_unacked, 1u) << "held until the client's PUBACK";
  send(c, codec::Puback{.packet_id = delivered->packet_id});
  settle();
  EXPECT_EQ(broker_->stats().messages_unacked, 0u);
}

TEST_F(MqttSessionTest, AQos0DeliveryIsAckedOnlyOnceWritten) {
  auto& c = open();
  connect(c, "c1", false);
  exchange<codec::Suback>(c, codec::Subscribe{.packet_id = 1, .topics = {{.filter = "t", .qos = 0}}});
  auto& producer = open();
  connect(producer, "p1");
  send(producer, codec::Publish{.qos = 0, .topic = "t", .payload = "x"});
  ex_.drain();
  EXPECT_FALSE(c.transport->out().empty()) << "encoded for the subscriber";
  EXPECT_EQ(broker_->stats().messages_unacked, 1u) << "not written yet: still the subscriber's";
  EXPECT_TRUE(c.transport->write());
  ex_.drain();
  EXPECT_EQ(broker_->stats().messages_unacked, 0u);
}

TEST_F(MqttSessionTest, AServerPacketFromAnMqtt5ClientGetsDisconnectProtocolError) {
  auto& c = open(Version::v5);
  connect(c, "c5");
  const auto d = exchange<codec::Disconnect>(c, codec::Pingresp{});
  EXPECT_EQ(d.reason, ReasonCode::protocol_error);
  EXPECT_TRUE(c.transport->is_closed());
}

TEST_F(MqttSessionTest, ASecondConnectionWithTheClientIdTakesTheSessionOver) {
  auto& first = open(Version::v5);
  connect(first, "same");
  auto& second = open(Version::v5);
  connect(second, "same");
  auto got = received(first);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<codec::Disconnect>(got[0]));
  EXPECT_EQ(std::get<codec::Disconnect>(got[0]).reason, ReasonCode::session_taken_over);
  EXPECT_TRUE(first.transport->is_closed());
  EXPECT_FALSE(second.transport->is_closing());
}

TEST_F(MqttSessionTest, ShutdownSendsDisconnectServerShuttingDown) {
  auto& c = open(Version::v5);
  connect(c, "c5");
  c.transport->shutdown();
  settle();
  auto got = received(c);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<codec::Disconnect>(got[0]));
  EXPECT_EQ(std::get<codec::Disconnect>(got[0]).reason, ReasonCode::server_shutting_down);
  EXPECT_TRUE(c.transport->is_closed());
}

TEST_F(MqttSessionTest, NoConnectWithinTheDeadlineCloses) {
  options_.connect_timeout_ms = 1;
  auto& c = open();
  while (!c.transport->is_closed() && io_.run_one_for(std::chrono::seconds(5)) != 0) {
  }
  EXPECT_TRUE(c.transport->is_closed());
}

TEST_F(MqttSessionTest, AClosedSessionGoesOnceItsWatchdogHasEnded) {
  auto& c = open();
  connect(c, "c1");
  std::weak_ptr<Session> watch = c.session;
  c.session.reset();
  EXPECT_FALSE(watch.expired()) << "its watchdog holds it while it is open";
  c.transport->close();
  settle();
  EXPECT_TRUE(watch.expired());
  EXPECT_EQ(c.transport->handler(), nullptr);
}

}  // namespace
}  // namespace carrier::mqtt
