#include "config/config.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "config/config_test_support.hpp"

namespace carrier::config {
namespace {

using namespace testing;

// [tls], [tls.NAME] and the TLS listeners.

TEST(ConfigTls, TlsListenersAreOffByDefault) {
  const auto c = parse_ok("");
  EXPECT_FALSE(c.stomp_tls_listener.enabled);
  EXPECT_EQ(c.stomp_tls_listener.port, 61614);
  EXPECT_FALSE(c.mqtt_tls_listener.enabled);
  EXPECT_EQ(c.mqtt_tls_listener.port, 8883);
  EXPECT_FALSE(c.http_tls_listener.enabled);
  const auto tls = c.tls.for_listener("stomp");
  EXPECT_TRUE(tls.cert_file.empty());
  EXPECT_EQ(tls.client_certificates, net::ClientCertificates::none);
  EXPECT_FALSE(tls.use_identity_as_username);
}

TEST(ConfigTls, ListenerTablesOverrideTls) {
  const auto c = parse_ok(R"(
[stomp]
tls_listen = "0.0.0.0:61614"
[mqtt]
tls_listen = "127.0.0.1:8883"
[http]
tls_listen = "127.0.0.1:8443"
[tls]
cert_file = "/etc/carrier/broker.crt"
key_file = "/etc/carrier/broker.key"
ca_file = "/etc/carrier/ca.crt"
client_certificates = "optional"
use_identity_as_username = true
[tls.mqtt]
client_certificates = "required"
[tls.http]
cert_file = "/etc/carrier/web.crt"
key_file = "/etc/carrier/web.key"
use_identity_as_username = false
)");
  EXPECT_TRUE(c.stomp_tls_listener.enabled);
  EXPECT_EQ(c.stomp_tls_listener.host, "0.0.0.0");
  EXPECT_TRUE(c.mqtt_tls_listener.enabled);
  EXPECT_TRUE(c.http_tls_listener.enabled);
  const auto stomp = c.tls.for_listener("stomp");
  EXPECT_EQ(stomp.cert_file, "/etc/carrier/broker.crt");
  EXPECT_EQ(stomp.ca_file, "/etc/carrier/ca.crt");
  EXPECT_EQ(stomp.client_certificates, net::ClientCertificates::optional);
  EXPECT_TRUE(stomp.use_identity_as_username);
  const auto mqtt = c.tls.for_listener("mqtt");
  EXPECT_EQ(mqtt.cert_file, "/etc/carrier/broker.crt");
  EXPECT_EQ(mqtt.client_certificates, net::ClientCertificates::required);
  const auto http = c.tls.for_listener("http");
  EXPECT_EQ(http.cert_file, "/etc/carrier/web.crt");
  EXPECT_EQ(http.key_file, "/etc/carrier/web.key");
  EXPECT_EQ(http.ca_file, "/etc/carrier/ca.crt");
  EXPECT_FALSE(http.use_identity_as_username);
}

TEST(ConfigTls, BadValuesNameTheKey) {
  EXPECT_THAT(toml_error("[tls]\nclient_certificates = \"always\"\n"),
              StartsWith("'tls.client_certificates' must be one of none, optional, required"));
  EXPECT_THAT(toml_error("[tls]\ncert_file = \"\"\n"), StartsWith("'tls.cert_file' must be a non-empty string"));
  EXPECT_THAT(toml_error("[tls.stomp]\nkey_fil = \"x\"\n"), StartsWith("unknown key 'tls.stomp.key_fil'"));
  EXPECT_THAT(toml_error("[tls.amqp]\ncert_file = \"x\"\n"), StartsWith("unknown key 'tls.amqp'"));
  EXPECT_THAT(toml_error("[stomp]\ntls_listen = \"61614\"\n"), StartsWith("'stomp.tls_listen' must be"));
}

TEST(ConfigTls, AnEnabledTlsListenerNeedsACertificate) {
  Flags flags;
  flags.stomp_tls = "127.0.0.1:61614";
  auto loaded = load(flags);
  ASSERT_FALSE(loaded);
  EXPECT_THAT(loaded.error().detail, HasSubstr("tls.cert_file and tls.key_file"));

  TempFile file("[tls]\ncert_file = \"a.crt\"\nkey_file = \"a.key\"\nclient_certificates = \"required\"\n");
  flags.config_file = file.path();
  loaded = load(flags);
  ASSERT_FALSE(loaded);
  EXPECT_THAT(loaded.error().detail, HasSubstr("needs tls.ca_file"));
}

TEST(ConfigTls, FlagsEnableTheListenersAndFilesAreRelativeToTheConfig) {
  TempFile file("[tls]\ncert_file = \"a.crt\"\nkey_file = \"/abs/a.key\"\n");
  Flags flags;
  flags.config_file = file.path();
  flags.stomp_tls = "127.0.0.1:1";
  flags.mqtt_tls = "127.0.0.1:2";
  flags.https = "127.0.0.1:3";
  auto loaded = load(flags);
  ASSERT_TRUE(loaded) << loaded.error().detail;
  EXPECT_EQ(loaded->stomp_tls_listener.port, 1);
  EXPECT_EQ(loaded->mqtt_tls_listener.port, 2);
  EXPECT_EQ(loaded->http_tls_listener.port, 3);
  const auto tls = loaded->tls.for_listener("mqtt");
  EXPECT_EQ(tls.cert_file, (file.path().parent_path() / "a.crt").string());
  EXPECT_EQ(tls.key_file, "/abs/a.key");
  flags.https = "nowhere";
  EXPECT_FALSE(load(flags));
}

}  // namespace
}  // namespace carrier::config
