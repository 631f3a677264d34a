#include "stomp/connect_request.hpp"

#include <gtest/gtest.h>

namespace carrier::stomp {
namespace {

using codec::Version;

codec::Frame connect(codec::Headers headers) { return codec::Frame{codec::Command::connect, std::move(headers), {}}; }

ConnectRequest accepted(codec::Headers headers, HeartBeatPolicy policy = {}) {
  auto r = read_connect(connect(std::move(headers)), policy);
  EXPECT_TRUE(std::holds_alternative<ConnectRequest>(r));
  return std::holds_alternative<ConnectRequest>(r) ? std::get<ConnectRequest>(r) : ConnectRequest{};
}

Refusal refused(codec::Headers headers) {
  auto r = read_connect(connect(std::move(headers)), {});
  EXPECT_TRUE(std::holds_alternative<Refused>(r));
  return std::holds_alternative<Refused>(r) ? std::get<Refused>(r).why : Refusal::malformed_frame;
}

TEST(ConnectRequest, VersionNegotiation) {
  const std::string both = "1.0,1.1";
  const std::string spaced = " 1.2 , 1.0 ";
  const std::string none = "2.0,1.3";
  const std::string empty;
  EXPECT_EQ(negotiate_version(nullptr), Version::v1_0);
  EXPECT_EQ(negotiate_version(&both), Version::v1_1);
  EXPECT_EQ(negotiate_version(&spaced), Version::v1_2);
  EXPECT_EQ(negotiate_version(&none), std::nullopt);
  EXPECT_EQ(negotiate_version(&empty), std::nullopt);
  EXPECT_EQ(refused({{"accept-version", "3.0"}}), Refusal::unsupported_version);
  EXPECT_EQ(refused({{"accept-version", ",,,"}}), Refusal::unsupported_version);
  EXPECT_EQ(accepted({{"accept-version", std::string(100000, ',') + "1.2"}}).version, Version::v1_2);
}

TEST(ConnectRequest, HeartBeatValues) {
  auto parsed = [](std::string text) { return parse_heart_beat(&text); };
  EXPECT_EQ(parse_heart_beat(nullptr), (std::pair<std::uint32_t, std::uint32_t>{0, 0}));
  EXPECT_EQ(parsed("0,0"), (std::pair<std::uint32_t, std::uint32_t>{0, 0}));
  EXPECT_EQ(parsed("1000,2000"), (std::pair<std::uint32_t, std::uint32_t>{1000, 2000}));
  EXPECT_EQ(parsed("4294967295,4294967295"), (std::pair<std::uint32_t, std::uint32_t>{4294967295u, 4294967295u}));
  for (const char* hostile : {"", ",", "1000", "4294967296,0", "9223372036854775808,0", "-1,0", "0,-1", "+1,0",
                              " 1,0", "1,0 ", "1,2,3", "1.5,0", "0x10,0", "abc,def"}) {
    EXPECT_EQ(parsed(hostile), std::nullopt) << hostile;
  }
}

TEST(ConnectRequest, HeartBeatsFollowTheClientAboveTheFloor) {
  HeartBeatPolicy policy{10000, 100};
  // cx: what the client sends (we receive), cy: what it wants (we send).
  auto r = accepted({{"accept-version", "1.2"}, {"heart-beat", "5000,20"}}, policy);
  EXPECT_EQ(r.receive_ms, 5000u);
  EXPECT_EQ(r.send_ms, 100u);  // raised to the floor
  r = accepted({{"accept-version", "1.2"}, {"heart-beat", "0,4294967295"}}, policy);
  EXPECT_EQ(r.receive_ms, 0u);
  EXPECT_EQ(r.send_ms, 4294967295u);
  // heartbeat_ms = 0: off altogether.
  r = accepted({{"accept-version", "1.2"}, {"heart-beat", "5000,5000"}}, HeartBeatPolicy{0, 100});
  EXPECT_EQ(r.send_ms, 0u);
  EXPECT_EQ(r.receive_ms, 0u);
}

TEST(ConnectRequest, BadHeartBeatIsRefusedFrom11AndIgnoredIn10) {
  EXPECT_EQ(refused({{"accept-version", "1.1"}, {"heart-beat", "-5,0"}}), Refusal::invalid_heart_beat);
  EXPECT_EQ(refused({{"accept-version", "1.2"}, {"heart-beat", "18446744073709551616,0"}}), Refusal::invalid_heart_beat);
  auto r = accepted({{"heart-beat", "nonsense"}});  // no accept-version: STOMP 1.0
  EXPECT_EQ(r.version, Version::v1_0);
  EXPECT_EQ(r.send_ms, 0u);
  EXPECT_EQ(r.receive_ms, 0u);
}

TEST(ConnectRequest, CredentialsAndClientId) {
  auto r = accepted({{"accept-version", "1.2"}, {"login", ""}, {"passcode", "p:w"}, {"client-id", "c1"},
                     {"login", "second"}});
  EXPECT_EQ(r.login, std::optional<std::string>(""));  // present though empty; the first wins
  EXPECT_EQ(r.passcode, std::optional<std::string>("p:w"));
  EXPECT_EQ(r.client_id, "c1");
  r = accepted({{"accept-version", "1.2"}});
  EXPECT_FALSE(r.login.has_value());
  EXPECT_FALSE(r.passcode.has_value());
  EXPECT_EQ(r.client_id, "");
}

TEST(ConnectRequest, VersionText) {
  EXPECT_STREQ(version_text(Version::v1_0), "1.0");
  EXPECT_STREQ(version_text(Version::v1_1), "1.1");
  EXPECT_STREQ(version_text(Version::v1_2), "1.2");
}

}  // namespace
}  // namespace carrier::stomp
