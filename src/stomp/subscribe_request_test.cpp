#include "stomp/subscribe_request.hpp"

#include <gtest/gtest.h>

namespace carrier::stomp {
namespace {

using codec::Command;
using codec::Version;
using core::AckMode;
using model::DestinationKind;

codec::Frame subscribe(codec::Headers headers) { return codec::Frame{Command::subscribe, std::move(headers), {}}; }

SubscribeContext context(DestinationKind kind = DestinationKind::queue, Version version = Version::v1_2,
                         std::string_view client_id = {}) {
  return SubscribeContext{version, kind, "sub-1", client_id, 4096};
}

SubscribeOptions subscribe_accepted(codec::Headers headers, const SubscribeContext& c = context()) {
  auto r = read_subscribe_options(subscribe(std::move(headers)), c);
  EXPECT_TRUE(std::holds_alternative<SubscribeOptions>(r))
      << (std::holds_alternative<Refused>(r) ? std::get<Refused>(r).detail : "");
  return std::holds_alternative<SubscribeOptions>(r) ? std::move(std::get<SubscribeOptions>(r)) : SubscribeOptions{};
}

Refused subscribe_refused(codec::Headers headers, const SubscribeContext& c = context()) {
  auto r = read_subscribe_options(subscribe(std::move(headers)), c);
  EXPECT_TRUE(std::holds_alternative<Refused>(r));
  return std::holds_alternative<Refused>(r) ? std::get<Refused>(r) : Refused{Refusal::malformed_frame, {}};
}

TEST(SubscribeRequest, TargetNeedsDestinationAndFrom11AnId) {
  auto r = read_subscribe_target(subscribe({{"id", "1"}}), Version::v1_2);
  ASSERT_TRUE(std::holds_alternative<Refused>(r));
  EXPECT_EQ(error_message(std::get<Refused>(r).why, Command::subscribe, std::get<Refused>(r).detail),
            "SUBSCRIBE frame has no destination header");
  r = read_subscribe_target(subscribe({{"destination", "/queue/a"}}), Version::v1_1);
  ASSERT_TRUE(std::holds_alternative<Refused>(r));
  EXPECT_EQ(error_message(std::get<Refused>(r).why, Command::subscribe, std::get<Refused>(r).detail),
            "SUBSCRIBE frame has no id header");
  // 1.0: the destination names the subscription.
  r = read_subscribe_target(subscribe({{"destination", "/queue/a"}}), Version::v1_0);
  ASSERT_TRUE(std::holds_alternative<SubscribeTarget>(r));
  EXPECT_EQ(std::get<SubscribeTarget>(r).id, "/queue/a");
  r = read_subscribe_target(subscribe({{"destination", "/queue/a"}, {"id", ""}}), Version::v1_2);
  ASSERT_TRUE(std::holds_alternative<SubscribeTarget>(r));
  EXPECT_EQ(std::get<SubscribeTarget>(r).id, "");  // empty is an id like any other
}

TEST(SubscribeRequest, AckModesPerVersion) {
  EXPECT_EQ(subscribe_accepted({}).ack_mode, AckMode::auto_ack);
  EXPECT_EQ(subscribe_accepted({{"ack", "auto"}}).ack_mode, AckMode::auto_ack);
  EXPECT_EQ(subscribe_accepted({{"ack", "client"}}).ack_mode, AckMode::client);
  EXPECT_EQ(subscribe_accepted({{"ack", "client-individual"}}).ack_mode, AckMode::client_individual);
  EXPECT_EQ(subscribe_accepted({{"ack", "client"}}, context(DestinationKind::queue, Version::v1_0)).ack_mode, AckMode::client);
  auto r = subscribe_refused({{"ack", "client-individual"}}, context(DestinationKind::queue, Version::v1_0));
  EXPECT_EQ(r.why, Refusal::invalid_ack_mode);
  EXPECT_NE(r.detail.find("does not exist in STOMP 1.0"), std::string::npos);
  for (const char* hostile : {"", "Client", "AUTO", "client ", "individual"}) {
    EXPECT_EQ(subscribe_refused({{"ack", hostile}}).why, Refusal::invalid_ack_mode) << hostile;
  }
  EXPECT_EQ(subscribe_refused({{"ack", "x"}}).detail, "ack must be auto, client or client-individual, got 'x'");
}

TEST(SubscribeRequest, Prefetch) {
  EXPECT_EQ(subscribe_accepted({}).prefetch, 0u);
  EXPECT_EQ(subscribe_accepted({{"activemq.prefetchSize", "10"}}).prefetch, 10u);
  EXPECT_EQ(subscribe_accepted({{"prefetch-count", "4294967295"}}).prefetch, 4294967295u);
  // ActiveMQ's spelling is read first; the other is then ignored, even if bad.
  EXPECT_EQ(subscribe_accepted({{"prefetch-count", "x"}, {"activemq.prefetchSize", "3"}}).prefetch, 3u);
  for (const char* hostile : {"", "-1", "4294967296", "9223372036854775808", "18446744073709551616", "1e3", " 1",
                              "1 ", "0x10"}) {
    auto r = subscribe_refused({{"activemq.prefetchSize", hostile}});
    EXPECT_EQ(r.why, Refusal::invalid_prefetch) << hostile;
  }
  EXPECT_EQ(subscribe_refused({{"prefetch-count", "-1"}}).detail, "prefetch-count must be a non-negative integer, got '-1'");
}

TEST(SubscribeRequest, Selector) {
  EXPECT_FALSE(subscribe_accepted({{"selector", ""}}).selector);  // empty: no selector (JMS)
  auto s = subscribe_accepted({{"selector", "color = 'red'"}});
  EXPECT_TRUE(s.selector);
  EXPECT_EQ(s.selector_text, "color = 'red'");
  EXPECT_EQ(subscribe_refused({{"selector", "color = "}}).why, Refusal::invalid_selector);
  auto huge = subscribe_refused({{"selector", "a = '" + std::string(5000, 'x') + "'"}});
  EXPECT_EQ(huge.why, Refusal::invalid_selector);
  EXPECT_NE(huge.detail.find("4096"), std::string::npos) << huge.detail;
}

TEST(SubscribeRequest, QueuesHaveNoNamedSubscriptions) {
  auto q = subscribe_accepted({{"durable", "true"}, {"activemq.subscriptionName", "n"}, {"activemq.noLocal", "true"}});
  EXPECT_EQ(q.subscription_name, "");
  EXPECT_FALSE(q.durable);
  EXPECT_FALSE(q.no_local);
}

TEST(SubscribeRequest, ActiveMqDurableNeedsClientId) {
  auto r = subscribe_refused({{"activemq.subscriptionName", "n"}}, context(DestinationKind::topic));
  EXPECT_EQ(r.why, Refusal::durable_subscription_without_client_id);
  auto s = subscribe_accepted({{"activemq.subscriptionName", "n"}}, context(DestinationKind::topic, Version::v1_2, "c1"));
  EXPECT_EQ(s.subscription_name, "stomp:c1:n");
  EXPECT_EQ(s.durable_name, "stomp:c1:n");
  EXPECT_TRUE(s.durable);
  // subscription-name is read the same way; ActiveMQ's header wins when both are present.
  s = subscribe_accepted({{"subscription-name", "b"}, {"activemq.subscriptionName", "a"}},
               context(DestinationKind::topic, Version::v1_2, "c1"));
  EXPECT_EQ(s.subscription_name, "stomp:c1:a");
}

TEST(SubscribeRequest, RabbitMqDurableIsNamedByTheId) {
  for (const char* header : {"durable", "persistent"}) {
    auto s = subscribe_accepted({{header, "true"}, {"auto-delete", "false"}}, context(DestinationKind::topic));
    EXPECT_EQ(s.subscription_name, "stomp::sub-1") << header;  // no client-id needed
    EXPECT_TRUE(s.durable);
    EXPECT_EQ(s.durable_name, s.subscription_name);
  }
  auto s = subscribe_accepted({{"durable", "TRUE"}}, context(DestinationKind::topic));
  EXPECT_EQ(s.subscription_name, "");  // only "true" asks for it
  EXPECT_FALSE(s.durable);
}

TEST(SubscribeRequest, SharedSubscriptions) {
  EXPECT_EQ(subscribe_refused({{"shared", "true"}}, context(DestinationKind::topic)).why,
            Refusal::shared_subscription_without_name);
  EXPECT_EQ(subscribe_refused({{"shared", "true"}, {"subscription-name", ""}}, context(DestinationKind::topic)).why,
            Refusal::shared_subscription_without_name);
  auto s = subscribe_accepted({{"shared", "true"}, {"subscription-name", "g"}}, context(DestinationKind::topic));
  EXPECT_EQ(s.subscription_name, "stomp-shared:g");
  EXPECT_FALSE(s.durable);
  EXPECT_EQ(s.durable_name, "");  // not this client's to end
  s = subscribe_accepted({{"shared", "true"}, {"durable", "true"}, {"subscription-name", "g"}}, context(DestinationKind::topic));
  EXPECT_TRUE(s.durable);
  EXPECT_EQ(s.durable_name, "");
}

TEST(SubscribeRequest, NoLocalOnTopics) {
  EXPECT_TRUE(subscribe_accepted({{"activemq.noLocal", "true"}}, context(DestinationKind::topic)).no_local);
  EXPECT_FALSE(subscribe_accepted({{"activemq.noLocal", "yes"}}, context(DestinationKind::topic)).no_local);
  auto plain = subscribe_accepted({}, context(DestinationKind::topic));
  EXPECT_EQ(plain.subscription_name, "");
  EXPECT_FALSE(plain.durable);
}

TEST(SubscribeRequest, Unsubscribe) {
  auto read = [](codec::Headers headers, Version v = Version::v1_2) {
    return read_unsubscribe(codec::Frame{Command::unsubscribe, std::move(headers), {}}, v);
  };
  auto r = read({});
  ASSERT_TRUE(std::holds_alternative<Refused>(r));
  EXPECT_EQ(error_message(std::get<Refused>(r).why, Command::unsubscribe, std::get<Refused>(r).detail),
            "UNSUBSCRIBE frame has no id header");
  // 1.2 does not fall back to the destination; 1.0 does.
  EXPECT_TRUE(std::holds_alternative<Refused>(read({{"destination", "/topic/t"}})));
  r = read({{"destination", "/topic/t"}}, Version::v1_0);
  ASSERT_TRUE(std::holds_alternative<UnsubscribeRequest>(r));
  EXPECT_EQ(std::get<UnsubscribeRequest>(r).id, std::optional<std::string>("/topic/t"));
  EXPECT_FALSE(std::get<UnsubscribeRequest>(r).end_durable);
  r = read({{"id", "s"}, {"persistent", "true"}});
  EXPECT_TRUE(std::get<UnsubscribeRequest>(r).end_durable);
  r = read({{"activemq.subscriptionName", "n"}});
  ASSERT_TRUE(std::holds_alternative<UnsubscribeRequest>(r));
  EXPECT_TRUE(std::get<UnsubscribeRequest>(r).end_durable);
  EXPECT_FALSE(std::get<UnsubscribeRequest>(r).id);
  EXPECT_EQ(std::get<UnsubscribeRequest>(r).name, std::optional<std::string>("n"));
  EXPECT_EQ(durable_subscription_name("c", "n"), "stomp:c:n");
  // Escaped so that no two ids collide; ids without `:` or `\` keep their stored spelling.
  EXPECT_EQ(durable_subscription_name("a:b", "c"), "stomp:a\\cb:c");
  EXPECT_NE(durable_subscription_name("a:b", "c"), durable_subscription_name("a", "b:c"));
  EXPECT_EQ(durable_subscription_name("a\\b", "c"), "stomp:a\\\\b:c");
  EXPECT_NE(durable_subscription_name("a\\cb", "c"), durable_subscription_name("a:b", "c"));
}

}  // namespace
}  // namespace carrier::stomp
