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

TEST(ConfigFederation, TlsOnTheListenerAndTheLinks) {
  const auto plain = parse_ok("[[federation.link]]\nname = \"x\"\nconnect = \"127.0.0.1:1\"\n");
  EXPECT_FALSE(plain.federation.tls);
  EXPECT_EQ(plain.federation.establish_timeout_ms, 10000u);
  EXPECT_FALSE(plain.federation.links[0].tls.enabled);

  TempFile file(R"(
[federation]
listen = "127.0.0.1:61700"
tls = true
establish_timeout_ms = 2500
[tls.federation]
cert_file = "node.crt"
key_file = "node.key"
ca_file = "nodes-ca.crt"
client_certificates = "required"
[[federation.link]]
name = "to-b"
connect = "127.0.0.1:61701"
tls = true
ca_file = "ca.crt"
server_name = "node-b.example"
cert_file = "/abs/me.crt"
key_file = "me.key"
)");
  Flags flags;
  flags.config_file = file.path();
  auto loaded = load(flags);
  ASSERT_TRUE(loaded) << loaded.error().detail;
  const auto dir = file.path().parent_path();
  EXPECT_TRUE(loaded->federation.tls);
  EXPECT_EQ(loaded->federation.establish_timeout_ms, 2500u);
  const auto listener = loaded->tls.for_listener("federation");
  EXPECT_EQ(listener.cert_file, (dir / "node.crt").string());
  EXPECT_EQ(listener.client_certificates, net::ClientCertificates::required);
  EXPECT_EQ(loaded->tls.for_listener("stomp").cert_file, "");
  const auto& link = loaded->federation.links[0].tls;
  EXPECT_TRUE(link.enabled);
  EXPECT_EQ(link.ca_file, (dir / "ca.crt").string());
  EXPECT_EQ(link.server_name, "node-b.example");
  EXPECT_EQ(link.cert_file, "/abs/me.crt");
  EXPECT_EQ(link.key_file, (dir / "me.key").string());
}

TEST(ConfigFederation, HalfConfiguredTlsIsRefused) {
  const std::string link = "[[federation.link]]\nname = \"x\"\nconnect = \"127.0.0.1:1\"\n";
  EXPECT_THAT(toml_error(link + "ca_file = \"ca.crt\"\n"), HasSubstr("need tls = true"));
  EXPECT_THAT(toml_error(link + "tls = true\ncert_file = \"me.crt\"\n"), HasSubstr("go together"));
  EXPECT_THAT(toml_error(link + "tls = \"yes\"\n"), HasSubstr("federation.link[0].tls"));
  EXPECT_THAT(toml_error("[federation]\nestablish_timeout_ms = 10\n"), HasSubstr("establish_timeout_ms"));
  // A TLS listener needs a certificate.
  TempFile file("[federation]\nlisten = \"127.0.0.1:61700\"\ntls = true\n");
  Flags flags;
  flags.config_file = file.path();
  auto loaded = load(flags);
  ASSERT_FALSE(loaded);
  EXPECT_THAT(loaded.error().detail, HasSubstr("federation TLS listener needs a certificate"));
}

TEST(ConfigFederation, FlagOverridesTheFile) {
  net::ListenerOptions listener{false, "127.0.0.1", 61700};
  ASSERT_TRUE(parse_listen("127.0.0.1:7000", "--federation", listener));
  EXPECT_TRUE(listener.enabled);
  EXPECT_EQ(listener.port, 7000);
}

}  // namespace
}  // namespace carrier::config
