#include "stomp/session.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "auth/options.hpp"
#include "session/session_test_fixture.hpp"

namespace carrier::stomp {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::string_literals;

// One STOMP session over a fake transport (session::testing::SessionTest: the broker, timers
// and writer run by hand).
class StompSessionTest : public session::testing::SessionTest {
 protected:
  StompSessionTest() : handshakes_(100) {
    authenticator_ = std::move(*auth::Authenticator::create(auth::Options{}, ex_));
  }
  ~StompSessionTest() override { close_all(); }

  void open(Options options = {}) {
    transport_ = make_transport("stomp");
    session_ = std::make_shared<Session>(transport_, *broker_, options, *authenticator_, handshakes_.try_acquire());
    session_->begin();
  }

  // The peer sends `frames`; what the broker answered, once everything settled.
  std::string exchange(const std::string& frames) {
    transport_->receive(frames);
    settle();
    return transport_->take_written();
  }

  void connect() {
    ASSERT_THAT(exchange("CONNECT\naccept-version:1.2\nhost:/\nheart-beat:0,0\n\n\0"s), HasSubstr("CONNECTED\n"));
  }

  std::unique_ptr<auth::Authenticator> authenticator_;
  net::HandshakeLimit handshakes_;
  std::shared_ptr<net::FakeTransport> transport_;
  std::shared_ptr<Session> session_;
};

TEST_F(StompSessionTest, ConnectGetsConnected) {
  open();
  const std::string reply = exchange("CONNECT\naccept-version:1.0,1.2\nhost:/\nheart-beat:0,0\n\n\0"s);
  EXPECT_THAT(reply, HasSubstr("CONNECTED\n"));
  EXPECT_THAT(reply, HasSubstr("version:1.2\n"));
  EXPECT_THAT(reply, HasSubstr("session:carrier-" + std::to_string(session_->id()) + "\n"));
  EXPECT_FALSE(transport_->is_closing());
}

TEST_F(StompSessionTest, AFrameBeforeConnectGetsAnErrorAndTheConnectionCloses) {
  open();
  const std::string reply = exchange("SEND\ndestination:/queue/a\nreceipt:r9\n\nx\0"s);
  EXPECT_THAT(reply, HasSubstr("ERROR\n"));
  EXPECT_THAT(reply, HasSubstr("message:not connected\n"));
  EXPECT_THAT(reply, HasSubstr("receipt-id:r9\n"));
  EXPECT_TRUE(transport_->is_closed()) << "closed once the ERROR was written";
}

TEST_F(StompSessionTest, AMalformedFrameGetsAnErrorAndTheConnectionCloses) {
  open();
  connect();
  const std::string reply = exchange("SEND\ndestination:/queue/a\ncontent-length:zz\n\nx\0"s);
  EXPECT_THAT(reply, HasSubstr("ERROR\n"));
  EXPECT_THAT(reply, HasSubstr("message:malformed frame\n"));
  EXPECT_TRUE(transport_->is_closed());
  EXPECT_EQ(transport_->handler(), session_.get()) << "the transport still knows its session until it goes";
}

TEST_F(StompSessionTest, SubscribeAndSendDeliverAMessageWithReceipts) {
  open();
  connect();
  EXPECT_THAT(exchange("SUBSCRIBE\nid:s1\ndestination:/queue/orders\nreceipt:r1\n\n\0"s), HasSubstr("receipt-id:r1\n"));
  const std::string reply = exchange("SEND\ndestination:/queue/orders\nreceipt:r2\n\nhello\0"s);
  EXPECT_THAT(reply, HasSubstr("receipt-id:r2\n"));
  EXPECT_THAT(reply, HasSubstr("MESSAGE\n"));
  EXPECT_THAT(reply, HasSubstr("subscription:s1\n"));
  EXPECT_THAT(reply, HasSubstr("destination:/queue/orders\n"));
  EXPECT_THAT(reply, HasSubstr("\nhello\0"s));
}

TEST_F(StompSessionTest, AnAutoAckedDeliveryIsAckedOnlyOnceWritten) {
  open();
  connect();
  exchange("SUBSCRIBE\nid:s1\ndestination:/queue/orders\n\n\0"s);
  transport_->receive("SEND\ndestination:/queue/orders\n\nhello\0"s);
  ex_.drain();
  EXPECT_THAT(transport_->out(), HasSubstr("MESSAGE\n"));
  EXPECT_EQ(broker_->stats().messages_unacked, 1u) << "encoded but not written: still the consumer's";
  EXPECT_TRUE(transport_->write());
  ex_.drain();
  EXPECT_EQ(broker_->stats().messages_unacked, 0u);
}

TEST_F(StompSessionTest, AClientAckSettlesTheDelivery) {
  open();
  connect();
  exchange("SUBSCRIBE\nid:s1\ndestination:/queue/orders\nack:client-individual\n\n\0"s);
  const std::string message = exchange("SEND\ndestination:/queue/orders\n\nhello\0"s);
  ASSERT_THAT(message, HasSubstr("MESSAGE\n"));
  const auto at = message.find("\nack:");
  ASSERT_NE(at, std::string::npos);
  const std::string token = message.substr(at + 5, message.find('\n', at + 1) - at - 5);
  EXPECT_EQ(broker_->stats().messages_unacked, 1u);
  EXPECT_THAT(exchange("ACK\nid:" + token + "\nreceipt:r3\n\n\0"s), HasSubstr("receipt-id:r3\n"));
  EXPECT_EQ(broker_->stats().messages_unacked, 0u);
  EXPECT_EQ(broker_->stats().messages_ready, 0u);
}

TEST_F(StompSessionTest, DeliveriesPastTheOutputBoundWaitForTheWriter) {
  Options options;
  options.max_pending_output_bytes = 1;  // one frame fits, the next waits
  open(options);
  connect();
  exchange("SUBSCRIBE\nid:s1\ndestination:/queue/orders\nack:client-individual\n\n\0"s);
  transport_->receive("SEND\ndestination:/queue/orders\n\none\0SEND\ndestination:/queue/orders\n\ntwo\0"s);
  ex_.drain();
  EXPECT_THAT(transport_->out(), HasSubstr("one"));
  EXPECT_THAT(transport_->out(), Not(HasSubstr("two"))) << "held past the bound";
  settle();
  const std::string written = transport_->take_written();
  EXPECT_THAT(written, HasSubstr("one"));
  EXPECT_THAT(written, HasSubstr("two")) << "encoded once the first write drained the output";
}

TEST_F(StompSessionTest, DisconnectWithReceiptClosesAfterTheReceipt) {
  open();
  connect();
  EXPECT_THAT(exchange("DISCONNECT\nreceipt:bye\n\n\0"s), HasSubstr("RECEIPT\nreceipt-id:bye\n"));
  EXPECT_TRUE(transport_->is_closed());
}

TEST_F(StompSessionTest, NoConnectWithinTheDeadlineGetsAnError) {
  Options options;
  options.connect_timeout_ms = 1;
  open(options);
  io_.run_one_for(std::chrono::seconds(5));  // the deadline's timer
  settle();
  EXPECT_THAT(transport_->take_written(), HasSubstr("message:connect timeout\n"));
  EXPECT_TRUE(transport_->is_closed());
}

TEST_F(StompSessionTest, WithoutAHandshakeSlotTheConnectionIsRefused) {
  net::HandshakeLimit none(0);
  transport_ = make_transport("stomp");
  session_ = std::make_shared<Session>(transport_, *broker_, Options{}, *authenticator_, none.try_acquire());
  session_->begin();
  settle();
  EXPECT_THAT(transport_->take_written(), HasSubstr("message:server busy\n"));
  EXPECT_TRUE(transport_->is_closed());
  session_.reset();
}

TEST_F(StompSessionTest, ShutdownSaysGoodbyeAndReleasesTheSubscriptions) {
  open();
  connect();
  exchange("SUBSCRIBE\nid:s1\ndestination:/topic/news\n\n\0"s);
  EXPECT_EQ(broker_->stats().topic_subscriptions, 1u);
  transport_->shutdown();
  settle();
  EXPECT_THAT(transport_->take_written(), HasSubstr("message:broker shutting down\n"));
  EXPECT_TRUE(transport_->is_closed());
  ex_.drain();
  EXPECT_EQ(broker_->stats().topic_subscriptions, 0u);
}

TEST_F(StompSessionTest, ACompletionAfterTheSessionIsGoneDoesNothing) {
  open();
  connect();
  // A persistent SEND waits for the store; the session goes before it confirms.
  transport_->receive("SEND\ndestination:/queue/orders\npersistent:true\nreceipt:late\n\nx\0"s);
  ex_.drain();
  std::weak_ptr<Session> watch = session_;
  transport_->close();
  session_.reset();
  EXPECT_TRUE(watch.expired()) << "nothing but the test held the session";
  EXPECT_EQ(transport_->handler(), nullptr);
  store_.complete_all();
  ex_.drain();
  transport_->write();
  EXPECT_THAT(transport_->take_written(), Not(HasSubstr("receipt-id:late")));
}

}  // namespace
}  // namespace carrier::stomp
