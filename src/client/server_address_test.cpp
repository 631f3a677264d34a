#include "client/server_address.hpp"

#include <gtest/gtest.h>

namespace carrier::client {
namespace {

TEST(ServerAddress, HostAndPortIsStompOverTcp) {
  auto a = parse_server_address("broker:61614", 61613);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->endpoint.host, "broker");
  EXPECT_EQ(a->endpoint.port, 61614);
  EXPECT_TRUE(a->websocket_path.empty());
  EXPECT_FALSE(a->tls);
  EXPECT_EQ(parse_server_address("broker", 61613)->endpoint.port, 61613);
}

TEST(ServerAddress, WebSocketUrls) {
  auto ws = parse_server_address("ws://127.0.0.1:18080/ws", 61613);
  ASSERT_TRUE(ws);
  EXPECT_EQ(ws->endpoint.host, "127.0.0.1");
  EXPECT_EQ(ws->endpoint.port, 18080);
  EXPECT_EQ(ws->websocket_path, "/ws");
  EXPECT_FALSE(ws->tls);
  auto wss = parse_server_address("wss://[::1]/stomp", 61613);
  ASSERT_TRUE(wss);
  EXPECT_EQ(wss->endpoint.host, "::1");
  EXPECT_EQ(wss->endpoint.port, 8443);
  EXPECT_EQ(wss->websocket_path, "/stomp");
  EXPECT_TRUE(wss->tls);
  auto bare = parse_server_address("ws://localhost", 61613);
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->endpoint.port, 8080);
  EXPECT_EQ(bare->websocket_path, "/ws");
}

TEST(ServerAddress, BadOnesAreRefused) {
  EXPECT_FALSE(parse_server_address("ws://", 61613));
  EXPECT_FALSE(parse_server_address("wss://host:99999/ws", 61613));
  EXPECT_FALSE(parse_server_address("ws://host:80/a b", 61613));
  EXPECT_FALSE(parse_server_address("ws://host:80/a\r\nX: y", 61613));
  EXPECT_FALSE(parse_server_address("", 61613));
}

}  // namespace
}  // namespace carrier::client
