#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "config/config.hpp"
#include "config/config_test_support.hpp"

namespace carrier::config {
namespace {

using namespace testing;

// [federation] and [[federation.link]].

TEST(ConfigFederation, OffByDefault) {
  const auto c = parse_ok("");
  EXPECT_FALSE(c.federation_listener.enabled);
  EXPECT_TRUE(c.federation.links.empty());
  EXPECT_EQ(c.federation.ttl, 5);
  EXPECT_EQ(c.federation.dedup_window, 100000u);
  EXPECT_EQ(c.federation.max_bad_frames, 10u);
}

TEST(ConfigFederation, EveryKey) {
  const auto c = parse_ok(R"(
[federation]
listen = "127.0.0.1:61700"
ttl = 3
dedup_window = 500
reconnect_min_ms = 20
reconnect_max_ms = 2000
max_bad_frames = 4
max_in_flight = 7
max_frame_bytes = 1048576
[[federation.link]]
name = "to-b"
connect = "localhost:61701"
username = "linker"
password = "s3cret"
cost = 9
[[federation.link]]
name = "to-c"
connect = "[::1]:61702"
)");
  EXPECT_TRUE(c.federation_listener.enabled);
  EXPECT_EQ(c.federation_listener.port, 61700);
  EXPECT_EQ(c.federation.ttl, 3);
  EXPECT_EQ(c.federation.dedup_window, 500u);
  EXPECT_EQ(c.federation.reconnect_min_ms, 20u);
  EXPECT_EQ(c.federation.reconnect_max_ms, 2000u);
  EXPECT_EQ(c.federation.max_bad_frames, 4u);
  EXPECT_EQ(c.federation.max_in_flight, 7u);
  EXPECT_EQ(c.federation.limits.max_frame_bytes, 1048576u);
  ASSERT_EQ(c.federation.links.size(), 2u);
  EXPECT_EQ(c.federation.links[0].name, "to-b");
  EXPECT_EQ(c.federation.links[0].host, "127.0.0.1");
  EXPECT_EQ(c.federation.links[0].port, 61701);
  EXPECT_EQ(c.federation.links[0].username, "linker");
  EXPECT_EQ(c.federation.links[0].password, "s3cret");
  EXPECT_EQ(c.federation.links[0].cost, 9);
  EXPECT_EQ(c.federation.links[1].host, "::1");
  EXPECT_EQ(c.federation.links[1].cost, 1);
}

TEST(ConfigFederation, BadValuesAreNamed) {
  EXPECT_THAT(toml_error("[federation]\nttl = 0\n"), HasSubstr("federation.ttl"));
  EXPECT_THAT(toml_error("[federation]\nlisten = \"nowhere\"\n"), HasSubstr("federation.listen"));
  EXPECT_THAT(toml_error("[federation]\nbogus = 1\n"), HasSubstr("unknown key 'federation.bogus'"));
  EXPECT_THAT(toml_error("[[federation.link]]\nname = \"x\"\n"), HasSubstr("needs name and connect"));
  EXPECT_THAT(toml_error("[[federation.link]]\nname = \"x\"\nconnect = \"off\"\n"),
              HasSubstr("federation.link[0].connect"));
}

TEST(ConfigFederation, FlagOverridesTheFile) {
  net::ListenerOptions listener{false, "127.0.0.1", 61700};
  ASSERT_TRUE(parse_listen("127.0.0.1:7000", "--federation", listener));
  EXPECT_TRUE(listener.enabled);
  EXPECT_EQ(listener.port, 7000);
}

}  // namespace
}  // namespace carrier::config
