#include "relay/codec/relay_target.hpp"

#include <gtest/gtest.h>

namespace carrier::relay::codec {
namespace {

constexpr std::string_view kRelay = "http://172.16.0.37:2481/EndpointService:jxta-NetGroup/uuid-DEADBEEFDEAFBABAFEEDBABE0000000F05";

TEST(RelayTarget, Listing2AsksForAPeerId) {
  ASSERT_TRUE(is_relay_path("/unknown-unknown"));
  auto t = parse_relay_target("/unknown-unknown", std::string("0,-1,") + std::string(kRelay) + "/pid");
  ASSERT_TRUE(t.has_value()) << t.error().detail;
  EXPECT_EQ(t->command, Command::pid);
  EXPECT_EQ(t->relay_address, kRelay);
  EXPECT_TRUE(t->peer.empty());
}

TEST(RelayTarget, Listing4ConnectsWithALease) {
  const std::string peer = "uuid-59616261646162614A78746150325033F55704B199754D3E9076A2947775A6EE03";
  auto t = parse_relay_target("/" + peer, std::string("0,-1,") + std::string(kRelay) + "/connect,3600000,keep,other");
  ASSERT_TRUE(t.has_value()) << t.error().detail;
  EXPECT_EQ(t->command, Command::connect);
  EXPECT_EQ(t->peer, peer);
  EXPECT_EQ(t->lease_ms, 3600000);
  EXPECT_EQ(t->relay_address, kRelay);
}

TEST(RelayTarget, PollWithAndWithoutAWait) {
  auto t = parse_relay_target("/uuid-0A0B", "");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->command, Command::poll);
  EXPECT_EQ(t->wait_ms, 0u);
  t = parse_relay_target("/uuid-0A0B", "2500,-1," + std::string(kRelay));
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->wait_ms, 2500u);
}

TEST(RelayTarget, Refusals) {
  EXPECT_FALSE(is_relay_path("/v1/queues/x/messages"));
  EXPECT_FALSE(parse_relay_target("/uuid-XYZ", "").has_value());
  EXPECT_FALSE(parse_relay_target("/uuid-" + std::string(130, 'A'), "").has_value());
  EXPECT_FALSE(parse_relay_target("/unknown-unknown", "").has_value());
  EXPECT_FALSE(parse_relay_target("/unknown-unknown", "0,-1,http://h/connect,5").has_value());
  EXPECT_FALSE(parse_relay_target("/uuid-0A0B", "0,-1,http://h/connect,soon,keep").has_value());
  EXPECT_FALSE(parse_relay_target("/uuid-0A0B", "x,-1,http://h").has_value());
}

}  // namespace
}  // namespace carrier::relay::codec
