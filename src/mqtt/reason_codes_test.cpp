#include "mqtt/reason_codes.hpp"

#include <gtest/gtest.h>

#include "mqtt/codec/packet.hpp"

namespace carrier::mqtt {
namespace {

using codec::ReasonCode;

TEST(ReasonCodes, EveryErrcHasACodeThePacketMayCarry) {
  const Errc all[] = {Errc::invalid_argument, Errc::protocol_error, Errc::limit_exceeded, Errc::not_found,
                      Errc::already_exists,   Errc::io_error,       Errc::corrupt_data,   Errc::unavailable,
                      Errc::shutting_down,    Errc::timed_out,      Errc::permission_denied};
  for (auto e : all) {
    EXPECT_TRUE(codec::is_failure(reason_for(e, Operation::publish)));
    EXPECT_TRUE(codec::is_allowed(codec::PacketType::puback, reason_for(e, Operation::publish), codec::Version::v5))
        << to_string(e);
    EXPECT_TRUE(codec::is_allowed(codec::PacketType::suback, reason_for(e, Operation::subscribe), codec::Version::v5))
        << to_string(e);
    EXPECT_TRUE(codec::is_allowed(codec::PacketType::connack, reason_for(e, Operation::connect), codec::Version::v5))
        << to_string(e);
    EXPECT_TRUE(
        codec::is_allowed(codec::PacketType::disconnect, reason_for(e, Operation::connection), codec::Version::v5))
        << to_string(e);
  }
  EXPECT_EQ(reason_for(Errc::limit_exceeded, Operation::publish), ReasonCode::quota_exceeded);
  EXPECT_EQ(reason_for(Errc::permission_denied, Operation::publish), ReasonCode::not_authorized);
  EXPECT_EQ(reason_for(Errc::shutting_down, Operation::connection), ReasonCode::server_shutting_down);
}

TEST(ReasonCodes, ConnackCodesForMqtt3) {
  EXPECT_EQ(to_return_code(ReasonCode::success), codec::ConnectReturnCode::accepted);
  EXPECT_EQ(to_return_code(ReasonCode::unsupported_protocol_version),
            codec::ConnectReturnCode::unacceptable_protocol_version);
  EXPECT_EQ(to_return_code(ReasonCode::client_identifier_not_valid), codec::ConnectReturnCode::identifier_rejected);
  EXPECT_EQ(to_return_code(ReasonCode::bad_user_name_or_password),
            codec::ConnectReturnCode::bad_user_name_or_password);
  EXPECT_EQ(to_return_code(ReasonCode::not_authorized), codec::ConnectReturnCode::not_authorized);
  EXPECT_EQ(to_return_code(ReasonCode::server_busy), codec::ConnectReturnCode::server_unavailable);
}

}  // namespace
}  // namespace carrier::mqtt
