#include "mqtt/connect_terms.hpp"

#include <gtest/gtest.h>

namespace carrier::mqtt {
namespace {

using codec::ReasonCode;
using codec::Version;

codec::Connect connect(Version version, std::string client_id, bool clean_start = true) {
  codec::Connect c;
  c.version = version;
  c.client_id = std::move(client_id);
  c.clean_start = clean_start;
  return c;
}

ConnectTerms granted(const codec::Connect& c, const Options& options = {}) {
  auto r = negotiate_connect(c, options);
  EXPECT_TRUE(std::holds_alternative<ConnectTerms>(r))
      << (std::holds_alternative<ConnectRefusal>(r) ? std::get<ConnectRefusal>(r).detail : "");
  return std::holds_alternative<ConnectTerms>(r) ? std::get<ConnectTerms>(r) : ConnectTerms{};
}

ReasonCode refused(const codec::Connect& c, const Options& options = {}) {
  auto r = negotiate_connect(c, options);
  EXPECT_TRUE(std::holds_alternative<ConnectRefusal>(r));
  return std::holds_alternative<ConnectRefusal>(r) ? std::get<ConnectRefusal>(r).reason : ReasonCode::success;
}

TEST(ConnectTerms, ClientIdRulesPerVersion) {
  EXPECT_EQ(refused(connect(Version::v3_1, "")), ReasonCode::client_identifier_not_valid);
  EXPECT_EQ(refused(connect(Version::v3_1_1, "", false)), ReasonCode::client_identifier_not_valid);
  EXPECT_EQ(granted(connect(Version::v3_1_1, "")).client_id, "");  // the broker names it
  EXPECT_EQ(granted(connect(Version::v5, "", false)).client_id, "");
  EXPECT_EQ(granted(connect(Version::v3_1, std::string(23, 'a'))).client_id, std::string(23, 'a'));
  EXPECT_EQ(refused(connect(Version::v3_1, std::string(24, 'a'))), ReasonCode::client_identifier_not_valid);
  // 23 characters, not bytes: "é" is two bytes and one character.
  std::string accented;
  for (int i = 0; i < 23; ++i) accented += "\xC3\xA9";
  EXPECT_EQ(granted(connect(Version::v3_1, accented)).client_id, accented);
  EXPECT_EQ(granted(connect(Version::v3_1_1, std::string(65535, 'x'))).client_id.size(), 65535u);
}

TEST(ConnectTerms, NoAuthenticationMethodIsOffered) {
  auto c = connect(Version::v5, "c");
  c.properties.authentication_method = "SCRAM-SHA-1";
  auto r = negotiate_connect(c, {});
  ASSERT_TRUE(std::holds_alternative<ConnectRefusal>(r));
  EXPECT_EQ(std::get<ConnectRefusal>(r).reason, ReasonCode::bad_authentication_method);
  EXPECT_EQ(std::get<ConnectRefusal>(r).detail, "authentication method 'SCRAM-SHA-1' is not supported");
}

TEST(ConnectTerms, SessionExpiry) {
  Options options;
  options.session_expiry_max = 3600;
  EXPECT_EQ(granted(connect(Version::v3_1_1, "c", true), options).session_expiry, 0u);
  EXPECT_EQ(granted(connect(Version::v3_1_1, "c", false), options).session_expiry, 3600u);
  EXPECT_EQ(granted(connect(Version::v3_1_1, "c", false)).session_expiry, 0xFFFFFFFFu);
  auto c = connect(Version::v5, "c");
  c.properties.session_expiry_interval = 0xFFFFFFFF;
  auto t = granted(c, options);
  EXPECT_EQ(t.session_expiry, 3600u);
  EXPECT_EQ(t.connack_session_expiry, std::optional<std::uint32_t>(3600));
  c.properties.session_expiry_interval = 60;
  t = granted(c, options);
  EXPECT_EQ(t.session_expiry, 60u);
  EXPECT_FALSE(t.connack_session_expiry);
}

TEST(ConnectTerms, KeepAliveBoundOnlyFor5) {
  Options options;
  options.max_keep_alive = 60;
  auto c = connect(Version::v5, "c");
  c.keep_alive = 0;  // "none": bounded too
  auto t = granted(c, options);
  EXPECT_EQ(t.keep_alive, 60);
  EXPECT_EQ(t.server_keep_alive, std::optional<std::uint16_t>(60));
  c.keep_alive = 65535;
  EXPECT_EQ(granted(c, options).keep_alive, 60);
  c.keep_alive = 30;
  t = granted(c, options);
  EXPECT_EQ(t.keep_alive, 30);
  EXPECT_FALSE(t.server_keep_alive);
  auto old = connect(Version::v3_1_1, "c");
  old.keep_alive = 65535;  // 3.x cannot be told: as asked
  EXPECT_EQ(granted(old, options).keep_alive, 65535);
  EXPECT_FALSE(granted(old, options).server_keep_alive);
}

TEST(ConnectTerms, ClientLimitsOnlyFor5) {
  EXPECT_FALSE(granted(connect(Version::v3_1_1, "c")).client_limits);
  auto c = connect(Version::v5, "c");
  auto t = granted(c);
  ASSERT_TRUE(t.client_limits);
  EXPECT_EQ(t.client_limits->receive_maximum, 65535);
  EXPECT_EQ(t.client_limits->outbound_window, 100);  // max_inflight
  EXPECT_TRUE(t.client_limits->request_problem_information);
  c.properties.receive_maximum = 1;
  c.properties.maximum_packet_size = 4294967295u;
  c.properties.topic_alias_maximum = 65535;
  c.properties.request_problem_information = 0;
  t = granted(c);
  EXPECT_EQ(t.client_limits->outbound_window, 1);
  EXPECT_EQ(t.client_limits->max_packet_size, 4294967295u);
  EXPECT_EQ(t.client_limits->topic_alias_maximum, 65535);
  EXPECT_FALSE(t.client_limits->request_problem_information);
  Options zero;
  zero.max_inflight = 0;  // never a window of 0
  EXPECT_EQ(granted(connect(Version::v5, "c"), zero).client_limits->outbound_window, 1);
}

}  // namespace
}  // namespace carrier::mqtt
