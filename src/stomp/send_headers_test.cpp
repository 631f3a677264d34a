#include "stomp/send_headers.hpp"

#include <gtest/gtest.h>

#include "core/deadline.hpp"

namespace carrier::stomp {
namespace {

constexpr std::int64_t kArrival = 1'700'000'000'000;
constexpr std::uint64_t kMaxDelay = 31'536'000'000;

model::Message send_accepted(const codec::Headers& headers) {
  model::Message m;
  m.timestamp_ms = kArrival;
  auto refused = read_send_headers(headers, SendLimits{kArrival, kMaxDelay}, m);
  EXPECT_FALSE(refused) << refused->detail;
  return m;
}

std::string send_refused(const codec::Headers& headers) {
  model::Message m;
  auto r = read_send_headers(headers, SendLimits{kArrival, kMaxDelay}, m);
  EXPECT_TRUE(r);
  if (!r) return {};
  EXPECT_EQ(r->why, Refusal::invalid_header);
  return r->detail;
}

TEST(SendHeaders, Plain) {
  auto m = send_accepted({{"destination", "/queue/a"}, {"receipt", "r"}, {"content-length", "3"}});
  EXPECT_FALSE(m.persistent);
  EXPECT_EQ(m.priority, 4);  // the core's default stays
  EXPECT_EQ(m.expires_ms, 0);
  EXPECT_EQ(m.deliver_at_ms, 0);
  EXPECT_EQ(m.timestamp_ms, kArrival);
  EXPECT_TRUE(m.properties.empty());
}

TEST(SendHeaders, Persistent) {
  EXPECT_TRUE(send_accepted({{"persistent", "true"}}).persistent);
  EXPECT_FALSE(send_accepted({{"persistent", "TRUE"}}).persistent);
  EXPECT_FALSE(send_accepted({{"persistent", ""}}).persistent);
}

TEST(SendHeaders, Priority) {
  EXPECT_EQ(send_accepted({{"priority", "0"}}).priority, 0);
  EXPECT_EQ(send_accepted({{"priority", "9"}}).priority, 9);
  for (const char* hostile : {"", "10", "-1", "4.5", "9223372036854775808", "2147483648", " 1", "x"}) {
    EXPECT_EQ(send_refused({{"priority", hostile}}), fmt::format("priority must be 0 to 9, got '{}'", hostile));
  }
}

TEST(SendHeaders, Expires) {
  EXPECT_EQ(send_accepted({{"expires", "9223372036854775807"}}).expires_ms, 9223372036854775807);
  EXPECT_EQ(send_accepted({{"expires", "0"}}).expires_ms, 0);
  for (const char* hostile : {"-1", "9223372036854775808", "", "1.5", "soon"}) {
    EXPECT_EQ(send_refused({{"expires", hostile}}), fmt::format("expires must be epoch milliseconds, got '{}'", hostile));
  }
}

TEST(SendHeaders, DeliverAt) {
  EXPECT_EQ(send_accepted({{"deliver-at", "1700000001000"}}).deliver_at_ms, 1700000001000);
  EXPECT_EQ(send_accepted({{"deliver-at", "0"}}).deliver_at_ms, 0);  // in the past: due now
  EXPECT_EQ(send_refused({{"deliver-at", "-5"}}), "deliver-at must be epoch milliseconds, got '-5'");
  EXPECT_EQ(send_refused({{"deliver-at", "9223372036854775807"}}),
            "deliver-at must be at most 31536000000 ms ahead (max_schedule_delay_ms), got '9223372036854775807'");
}

TEST(SendHeaders, Delay) {
  EXPECT_EQ(send_accepted({{"delay", "1000"}}).deliver_at_ms, kArrival + 1000);
  EXPECT_EQ(send_accepted({{"AMQ_SCHEDULED_DELAY", "31536000000"}}).deliver_at_ms, kArrival + 31'536'000'000);
  EXPECT_EQ(send_accepted({{"delay", "0"}}).deliver_at_ms, 0);
  EXPECT_EQ(send_refused({{"delay", "-1"}}), "delay must be milliseconds, got '-1'");
  EXPECT_EQ(send_refused({{"AMQ_SCHEDULED_DELAY", ""}}), "AMQ_SCHEDULED_DELAY must be milliseconds, got ''");
  EXPECT_EQ(send_refused({{"delay", "9223372036854775000"}}),
            "delay must be at most 31536000000 ms (max_schedule_delay_ms), got '9223372036854775000'");
  EXPECT_EQ(send_refused({{"delay", "18446744073709551616"}}), "delay must be milliseconds, got '18446744073709551616'");
  // A huge limit saturates at "never" instead of wrapping into the past.
  model::Message m;
  ASSERT_FALSE(read_send_headers({{"delay", "18446744073709551615"}}, SendLimits{kArrival, UINT64_MAX}, m));
  EXPECT_EQ(m.deliver_at_ms, core::kNeverMs);
}

TEST(SendHeaders, TimestampReplacesArrivalOnlyWhenANumber) {
  EXPECT_EQ(send_accepted({{"timestamp", "5"}}).timestamp_ms, 5);
  EXPECT_EQ(send_accepted({{"timestamp", "-5"}}).timestamp_ms, -5);
  EXPECT_EQ(send_accepted({{"timestamp", "yesterday"}}).timestamp_ms, kArrival);
  // delay counts from arrival, whatever the timestamp says.
  auto m = send_accepted({{"timestamp", "5"}, {"delay", "10"}});
  EXPECT_EQ(m.deliver_at_ms, kArrival + 10);
}

TEST(SendHeaders, NamedFieldsAndProperties) {
  auto m = send_accepted({{"correlation-id", "c"}, {"reply-to", "/temp-queue/r"}, {"type", "t"}, {"content-type", "text/x"},
                     {"x-a", "1"}, {"message-id", "forged"}, {"subscription", "forged"}, {"ack", "forged"},
                     {"redelivered", "true"}, {"delivery-count", "9"}, {"transaction", "tx"}, {"x-b", ""}});
  EXPECT_EQ(m.correlation_id, "c");
  EXPECT_EQ(m.reply_to, "/temp-queue/r");  // as written: the session resolves it
  EXPECT_EQ(m.type, "t");
  EXPECT_EQ(m.content_type, "text/x");
  const std::vector<std::pair<std::string, std::string>> expected{{"x-a", "1"}, {"x-b", ""}};
  EXPECT_EQ(m.properties, expected);
}

TEST(SendHeaders, FirstOfARepeatedHeaderWins) {
  auto m = send_accepted({{"priority", "7"}, {"priority", "not even a number"}, {"x", "first"}, {"x", "second"}});
  EXPECT_EQ(m.priority, 7);
  ASSERT_EQ(m.properties.size(), 1u);
  EXPECT_EQ(m.properties[0].second, "first");
  EXPECT_EQ(send_refused({{"priority", "11"}, {"priority", "1"}}), "priority must be 0 to 9, got '11'");
}

TEST(SendHeaders, Reserved) {
  EXPECT_TRUE(is_reserved_header("destination"));
  EXPECT_TRUE(is_reserved_header("AMQ_SCHEDULED_DELAY"));
  EXPECT_FALSE(is_reserved_header("Destination"));
  EXPECT_FALSE(is_reserved_header(""));
}

}  // namespace
}  // namespace carrier::stomp
