#include "http/codec/message_fields.hpp"

#include <gtest/gtest.h>

namespace carrier::http::codec {
namespace {

constexpr FieldLimits kLimits{.max_delay_ms = 60000, .max_headers = 8};

TEST(MessageFields, Prefix) {
  EXPECT_TRUE(has_header_prefix("Carrier-Header-priority"));
  EXPECT_TRUE(has_header_prefix("carrier-header-x"));
  EXPECT_FALSE(has_header_prefix("Carrier-Header-"));
  EXPECT_FALSE(has_header_prefix("Carrier-Headers"));
}

TEST(MessageFields, ReadsWhatTheBrokerUnderstands) {
  auto f = read_fields({{"priority", "7"},
                        {"persistent", "true"},
                        {"ttl", "1000"},
                        {"delay", "500"},
                        {"correlation-id", "c1"},
                        {"orderId", "42"},
                        {"priority", "1"},
                        {"redelivered", "true"}},
                       1000, kLimits);
  ASSERT_TRUE(f) << f.error().detail;
  EXPECT_EQ(f->priority, 7);
  EXPECT_TRUE(f->persistent);
  EXPECT_EQ(f->expires_ms, 2000);
  EXPECT_EQ(f->deliver_at_ms, 1500);
  EXPECT_EQ(f->correlation_id, "c1");
  ASSERT_EQ(f->properties.size(), 1u);  // the repeated priority and the reserved name are not properties
  EXPECT_EQ(f->properties[0].first, "orderId");
}

TEST(MessageFields, RefusesBadValues) {
  EXPECT_FALSE(read_fields({{"priority", "10"}}, 0, kLimits));
  EXPECT_FALSE(read_fields({{"persistent", "yes"}}, 0, kLimits));
  EXPECT_FALSE(read_fields({{"delay", "60001"}}, 0, kLimits));
  EXPECT_FALSE(read_fields({{"expires", "-1"}}, 0, kLimits));
  EXPECT_FALSE(read_fields({{"ttl", "9223372036854775808000"}}, 0, kLimits));
  EXPECT_FALSE(read_fields({{"", "x"}}, 0, kLimits));
  Headers many(9, {"a", "b"});
  EXPECT_EQ(read_fields(many, 0, kLimits).error().code, Errc::limit_exceeded);
}

TEST(MessageFields, HugeTtlSaturates) {
  auto f = read_fields({{"ttl", "18446744073709551615"}}, 1000, kLimits);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->expires_ms, INT64_MAX);
}

}  // namespace
}  // namespace carrier::http::codec
