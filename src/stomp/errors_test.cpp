#include "stomp/errors.hpp"

#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace carrier::stomp {
namespace {

using codec::Command;

// Every Errc, found through to_string (it names each one, "unknown error" past the last), so a
// new code is walked here without editing this test.
std::vector<Errc> every_errc() {
  std::vector<Errc> all;
  for (int i = 0; std::string_view(to_string(static_cast<Errc>(i))) != "unknown error"; ++i) {
    all.push_back(static_cast<Errc>(i));
  }
  return all;
}

const Operation kOperations[] = {Operation::decode,  Operation::send_destination,    Operation::subscribe_destination,
                                 Operation::send,    Operation::subscribe,           Operation::remove_subscription,
                                 Operation::acknowledge, Operation::commit};

// The `message` of every refusal, as clients see it. Clients and tests match on these: a change
// here is a change of the wire.
const std::pair<Refusal, std::string_view> kMessages[] = {
    {Refusal::server_busy, "server busy"},
    {Refusal::connect_timeout, "connect timeout"},
    {Refusal::not_connected, "not connected"},
    {Refusal::already_connected, "already connected"},
    {Refusal::unsupported_version, "unsupported protocol version"},
    {Refusal::invalid_heart_beat, "invalid heart-beat header"},
    {Refusal::authentication_failed, "authentication failed"},
    {Refusal::too_many_failed_logins, "too many failed logins"},
    {Refusal::frame_too_large, "frame too large"},
    {Refusal::malformed_frame, "malformed frame"},
    {Refusal::unexpected_frame, "unexpected frame"},
    {Refusal::unknown_command, "unknown command"},
    {Refusal::invalid_destination, "invalid destination"},
    {Refusal::duplicate_subscription, "duplicate subscription id"},
    {Refusal::too_many_subscriptions, "too many subscriptions"},
    {Refusal::invalid_ack_mode, "invalid ack mode"},
    {Refusal::invalid_prefetch, "invalid prefetch"},
    {Refusal::invalid_selector, "invalid selector"},
    {Refusal::shared_subscription_without_name, "shared subscription without a name"},
    {Refusal::durable_subscription_without_client_id, "durable subscription without client-id"},
    {Refusal::unknown_subscription, "unknown subscription"},
    {Refusal::unknown_transaction, "unknown transaction"},
    {Refusal::transaction_already_begun, "transaction already begun"},
    {Refusal::too_many_transactions, "too many open transactions"},
    {Refusal::transaction_too_large, "transaction too large"},
    {Refusal::destination_full, "destination full"},
    {Refusal::destination_does_not_exist, "destination does not exist"},
    {Refusal::message_not_stored, "message not stored"},
    {Refusal::subscription_failed, "subscription failed"},
    {Refusal::acknowledgement_not_stored, "acknowledgement not stored"},
    {Refusal::transaction_not_committed, "transaction not committed"},
    {Refusal::heart_beat_timeout, "heart-beat timeout"},
    {Refusal::slow_consumer, "slow consumer"},
    {Refusal::shutting_down, "broker shutting down"},
    {Refusal::closed_by_administrator, "closed by an administrator"},
    {Refusal::access_denied, "access denied"},
};

TEST(StompErrors, FixedMessagesAreStable) {
  for (const auto& [why, text] : kMessages) {
    EXPECT_EQ(error_message(why, Command::send, "some detail"), text);
  }
}

TEST(StompErrors, MessagesThatNameTheFrame) {
  EXPECT_EQ(error_message(Refusal::missing_header, Command::send, "destination"), "SEND frame has no destination header");
  EXPECT_EQ(error_message(Refusal::missing_header, Command::ack, "id"), "ACK frame has no id header");
  EXPECT_EQ(error_message(Refusal::missing_header, Command::begin, "transaction"),
            "BEGIN frame has no transaction header");
  EXPECT_EQ(error_message(Refusal::unknown_message, Command::nack, "no unacknowledged message"),
            "NACK for an unknown message");
  // The problem is the message itself, as it always was for SEND's headers and destinations.
  EXPECT_EQ(error_message(Refusal::invalid_header, Command::send, "priority must be 0 to 9, got 'x'"),
            "priority must be 0 to 9, got 'x'");
  EXPECT_EQ(error_message(Refusal::destination_refused, Command::send, "unknown exchange 'x'"), "unknown exchange 'x'");
}

TEST(StompErrors, EveryErrcMapsForEveryOperation) {
  const auto all = every_errc();
  ASSERT_GE(all.size(), 11u);
  for (auto op : kOperations) {
    for (auto code : all) {
      const auto why = refusal_for(code, op);
      // A message that says something, whatever the detail.
      EXPECT_FALSE(error_message(why, Command::send, "x").empty()) << to_string(code);
    }
  }
}

TEST(StompErrors, ErrcMapping) {
  EXPECT_EQ(refusal_for(Errc::limit_exceeded, Operation::decode), Refusal::frame_too_large);
  EXPECT_EQ(refusal_for(Errc::protocol_error, Operation::decode), Refusal::malformed_frame);
  EXPECT_EQ(refusal_for(Errc::invalid_argument, Operation::decode), Refusal::malformed_frame);
  EXPECT_EQ(refusal_for(Errc::limit_exceeded, Operation::send), Refusal::destination_full);
  EXPECT_EQ(refusal_for(Errc::not_found, Operation::send), Refusal::destination_does_not_exist);
  EXPECT_EQ(refusal_for(Errc::io_error, Operation::send), Refusal::message_not_stored);
  EXPECT_EQ(refusal_for(Errc::unavailable, Operation::send), Refusal::message_not_stored);
  EXPECT_EQ(refusal_for(Errc::invalid_argument, Operation::subscribe_destination), Refusal::invalid_destination);
  EXPECT_EQ(refusal_for(Errc::permission_denied, Operation::subscribe_destination), Refusal::destination_refused);
  EXPECT_EQ(refusal_for(Errc::not_found, Operation::subscribe_destination), Refusal::destination_refused);
  EXPECT_EQ(refusal_for(Errc::invalid_argument, Operation::send_destination), Refusal::destination_refused);
  EXPECT_EQ(refusal_for(Errc::io_error, Operation::subscribe), Refusal::subscription_failed);
  EXPECT_EQ(refusal_for(Errc::not_found, Operation::remove_subscription), Refusal::unknown_subscription);
  EXPECT_EQ(refusal_for(Errc::io_error, Operation::acknowledge), Refusal::acknowledgement_not_stored);
  EXPECT_EQ(refusal_for(Errc::io_error, Operation::commit), Refusal::transaction_not_committed);
}

TEST(StompErrors, OnlyAccessDeniedKeepsTheConnection) {
  for (const auto& [why, text] : kMessages) {
    EXPECT_EQ(error_frame(why, Command::send, "", nullptr).keeps_connection, why == Refusal::access_denied) << text;
  }
}

TEST(StompErrors, VerdictMapping) {
  EXPECT_EQ(refusal_for(auth::Verdict::busy), Refusal::server_busy);
  EXPECT_EQ(refusal_for(auth::Verdict::throttled), Refusal::too_many_failed_logins);
  EXPECT_EQ(refusal_for(auth::Verdict::rejected), Refusal::authentication_failed);
}

TEST(StompErrors, FrameCarriesMessageDetailAndReceipt) {
  const std::string receipt = "r-7";
  auto frame = error_frame(Refusal::unknown_transaction, Command::commit, "no transaction 't' has begun", &receipt);
  const codec::Headers expected{{"message", "unknown transaction"}, {"content-type", "text/plain"}, {"receipt-id", "r-7"}};
  EXPECT_EQ(frame.headers, expected);
  EXPECT_EQ(frame.body, "no transaction 't' has begun\n");
  EXPECT_FALSE(frame.bounded_close);
}

TEST(StompErrors, FrameWithoutDetailRepeatsTheMessage) {
  auto frame = error_frame(Refusal::authentication_failed, Command::connect, "", nullptr);
  const codec::Headers expected{{"message", "authentication failed"}, {"content-type", "text/plain"}};
  EXPECT_EQ(frame.headers, expected);
  EXPECT_EQ(frame.body, "authentication failed\n");
  // A missing header's name is not a body of its own.
  EXPECT_EQ(error_frame(Refusal::missing_header, Command::send, "destination", nullptr).body,
            "SEND frame has no destination header\n");
}

TEST(StompErrors, UnsupportedVersionListsOurs) {
  auto frame = error_frame(Refusal::unsupported_version, Command::connect, "Supported protocol versions are 1.0 1.1 1.2",
                           nullptr);
  const codec::Headers expected{
      {"message", "unsupported protocol version"}, {"version", "1.0,1.1,1.2"}, {"content-type", "text/plain"}};
  EXPECT_EQ(frame.headers, expected);
  EXPECT_EQ(frame.body, "Supported protocol versions are 1.0 1.1 1.2\n");
}

TEST(StompErrors, OnlyASlowConsumerAndAnAdministratorsCloseAreBounded) {
  EXPECT_TRUE(error_frame(Refusal::slow_consumer, Command::message, "more than 1 bytes", nullptr).bounded_close);
  EXPECT_TRUE(error_frame(Refusal::closed_by_administrator, Command::error, "maintenance", nullptr).bounded_close);
  for (const auto& [why, text] : kMessages) {
    if (why != Refusal::slow_consumer && why != Refusal::closed_by_administrator) {
      EXPECT_FALSE(error_frame(why, Command::send, "", nullptr).bounded_close) << text;
    }
  }
}

}  // namespace
}  // namespace carrier::stomp
