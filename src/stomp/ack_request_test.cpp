#include "stomp/ack_request.hpp"

#include <gtest/gtest.h>

namespace carrier::stomp {
namespace {

using codec::Command;
using codec::Version;

std::variant<AckRequest, Refused> read(Command command, Version version, codec::Headers headers) {
  return read_ack(codec::Frame{command, std::move(headers), {}}, version);
}

TEST(AckRequest, TokenSpellings) {
  auto t = parse_ack_token("3.17");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->subscription, 3u);
  EXPECT_EQ(t->delivery, 17u);
  t = parse_ack_token("18446744073709551615.18446744073709551615");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->delivery, 18446744073709551615u);
  for (const char* hostile : {"", ".", "3", "3.", ".17", "-1.2", "3.-2", "18446744073709551616.1",
                              "1.18446744073709551616", "1.2.3", "1 .2", "+1.2", "a.b", "1.2x"}) {
    EXPECT_FALSE(parse_ack_token(hostile)) << hostile;
  }
}

TEST(AckRequest, Version12NamesTheDeliveryById) {
  auto r = read(Command::ack, Version::v1_2, {{"id", "2.5"}, {"message-id", "ignored"}});
  ASSERT_TRUE(std::holds_alternative<AckRequest>(r));
  const auto& a = std::get<AckRequest>(r);
  EXPECT_EQ(a.named, "2.5");
  ASSERT_TRUE(a.token);
  EXPECT_EQ(a.token->subscription, 2u);
  EXPECT_EQ(a.token->delivery, 5u);
  EXPECT_TRUE(a.requeue);
  // Not one of our tokens: read, and found nowhere by the session.
  r = read(Command::ack, Version::v1_2, {{"id", std::string(70000, '9')}});
  ASSERT_TRUE(std::holds_alternative<AckRequest>(r));
  EXPECT_FALSE(std::get<AckRequest>(r).token);
}

TEST(AckRequest, MissingHeaderPerVersion) {
  auto r = read(Command::ack, Version::v1_2, {{"message-id", "m"}});
  ASSERT_TRUE(std::holds_alternative<Refused>(r));
  EXPECT_EQ(std::get<Refused>(r).why, Refusal::missing_header);
  EXPECT_EQ(std::get<Refused>(r).detail, "id");
  r = read(Command::nack, Version::v1_1, {{"id", "1.1"}});
  ASSERT_TRUE(std::holds_alternative<Refused>(r));
  EXPECT_EQ(std::get<Refused>(r).detail, "message-id");
  EXPECT_EQ(error_message(Refusal::missing_header, Command::nack, "message-id"), "NACK frame has no message-id header");
}

TEST(AckRequest, Version10And11NameTheMessage) {
  auto r = read(Command::ack, Version::v1_0, {{"message-id", "m-1"}, {"subscription", "s"}});
  ASSERT_TRUE(std::holds_alternative<AckRequest>(r));
  EXPECT_EQ(std::get<AckRequest>(r).named, "m-1");
  EXPECT_EQ(std::get<AckRequest>(r).subscription, std::optional<std::string>("s"));
  EXPECT_FALSE(std::get<AckRequest>(r).token);
  r = read(Command::ack, Version::v1_1, {{"message-id", ""}});
  ASSERT_TRUE(std::holds_alternative<AckRequest>(r));
  EXPECT_FALSE(std::get<AckRequest>(r).subscription);
}

TEST(AckRequest, NackDoesNotExistIn10) {
  auto r = read(Command::nack, Version::v1_0, {{"message-id", "m"}});
  ASSERT_TRUE(std::holds_alternative<Refused>(r));
  EXPECT_EQ(std::get<Refused>(r).why, Refusal::unknown_command);
  EXPECT_EQ(std::get<Refused>(r).detail, "NACK does not exist in STOMP 1.0");
}

TEST(AckRequest, RequeueOnlyOnNack) {
  auto r = read(Command::nack, Version::v1_2, {{"id", "1.1"}, {"requeue", "false"}});
  EXPECT_FALSE(std::get<AckRequest>(r).requeue);
  r = read(Command::nack, Version::v1_2, {{"id", "1.1"}, {"requeue", "FALSE"}});
  EXPECT_TRUE(std::get<AckRequest>(r).requeue);  // only "false" turns it off, as RabbitMQ reads it
  r = read(Command::ack, Version::v1_2, {{"id", "1.1"}, {"requeue", "false"}});
  EXPECT_TRUE(std::get<AckRequest>(r).requeue);
}

}  // namespace
}  // namespace carrier::stomp
