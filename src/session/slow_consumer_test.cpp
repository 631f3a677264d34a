#include "session/slow_consumer.hpp"

#include <gtest/gtest.h>

#include <memory>

#include "base/logging.hpp"
#include "net/fake_transport.hpp"

namespace carrier::session {
namespace {

class SlowConsumerTest : public ::testing::Test {
 protected:
  net::asio::io_context io_;
  std::shared_ptr<net::FakeTransport> transport_ = std::make_shared<net::FakeTransport>(io_.get_executor());
  std::shared_ptr<spdlog::logger> log_ = logging::get("session");
};

TEST_F(SlowConsumerTest, DropCountsEveryDeliveryItDrops) {
  SlowConsumer slow(net::SlowConsumerPolicy::drop, "test messages");
  EXPECT_TRUE(slow.drop(*log_, *transport_, "s1"));
  EXPECT_TRUE(slow.drop(*log_, *transport_));
  EXPECT_EQ(slow.dropped(), 2u);
  slow.log_dropped(*log_, *transport_);
}

TEST_F(SlowConsumerTest, DisconnectDropsNothing) {
  SlowConsumer slow(net::SlowConsumerPolicy::disconnect, "test messages");
  EXPECT_FALSE(slow.drop(*log_, *transport_));
  EXPECT_EQ(slow.dropped(), 0u);
}

}  // namespace
}  // namespace carrier::session
