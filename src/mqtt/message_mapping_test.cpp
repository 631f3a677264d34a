#include "mqtt/message_mapping.hpp"

#include <gtest/gtest.h>

namespace carrier::mqtt {
namespace {

constexpr std::int64_t kMappingNow = 1'700'000'000'000;

codec::Publish full_publish() {
  codec::Publish p;
  p.qos = 2;
  p.retain = true;
  p.topic = "a/b";
  p.payload = "caf\xC3\xA9";
  p.properties.payload_format_indicator = 1;
  p.properties.message_expiry_interval = 60;
  p.properties.content_type = "text/plain";
  p.properties.response_topic = "replies/x";
  p.properties.correlation_data = std::string("\x00\x01", 2);
  p.properties.user_properties = {{"k", "v"}, {"k", "w"}};
  return p;
}

TEST(MessageMapping, PublishToCoreMessage) {
  auto m = to_core_message(full_publish(), "a/b", model::MessageId{}, kMappingNow, 42);
  EXPECT_EQ(m->destination.kind, model::DestinationKind::topic);
  EXPECT_EQ(m->destination.name, "a.b");
  EXPECT_TRUE(m->persistent);
  EXPECT_TRUE(m->retain);
  EXPECT_EQ(m->origin, 42u);
  EXPECT_EQ(m->expires_ms, kMappingNow + 60'000);
  EXPECT_EQ(m->content_type, "text/plain");
  EXPECT_EQ(m->reply_to, "/topic/replies.x");
  EXPECT_EQ(m->correlation_id, std::string("\x00\x01", 2));
  EXPECT_EQ(message_qos(*m), 2);
  EXPECT_EQ(*m->body, "caf\xC3\xA9");
}

TEST(MessageMapping, RoundTripThroughTheCore) {
  auto m = to_core_message(full_publish(), "a/b", model::MessageId{}, kMappingNow, 42);
  auto p = to_publish(*m, OutboundOptions{2, false, codec::Version::v5, kMappingNow + 10'500, 7});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->topic, "a/b");
  EXPECT_EQ(p->qos, 2);
  EXPECT_EQ(p->payload, "caf\xC3\xA9");
  const auto& props = p->properties;
  EXPECT_EQ(props.payload_format_indicator, 1);
  EXPECT_EQ(props.message_expiry_interval, 50u);  // 49.5 s left, rounded up
  EXPECT_EQ(props.content_type, "text/plain");
  EXPECT_EQ(props.response_topic, "replies/x");
  EXPECT_EQ(props.correlation_data, std::string("\x00\x01", 2));
  // The QoS and format markers do not come back as user properties.
  EXPECT_EQ(props.user_properties, (std::vector<std::pair<std::string, std::string>>{{"k", "v"}, {"k", "w"}}));
  EXPECT_EQ(props.subscription_identifiers, std::vector<std::uint32_t>{7});
}

TEST(MessageMapping, Mqtt3GetsNoProperties) {
  auto m = to_core_message(full_publish(), "a/b", model::MessageId{}, kMappingNow, 1);
  auto p = to_publish(*m, OutboundOptions{1, true, codec::Version::v3_1_1, kMappingNow, 7});
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->properties.empty());
  EXPECT_TRUE(p->retain);
}

TEST(MessageMapping, ExpiredMessagesAreNotSent) {
  auto m = to_core_message(full_publish(), "a/b", model::MessageId{}, kMappingNow, 1);
  EXPECT_FALSE(to_publish(*m, OutboundOptions{1, false, codec::Version::v5, kMappingNow + 60'000}));
  EXPECT_FALSE(to_publish(*m, OutboundOptions{1, false, codec::Version::v3_1_1, kMappingNow + 60'001}));
}

TEST(MessageMapping, StompMessages) {
  model::Message m;
  m.destination = model::Destination{model::DestinationKind::topic, "orders.eu"};
  m.persistent = true;
  m.reply_to = "/queue/replies";
  m.correlation_id = "c-1";
  m.content_type = "application/json";
  m.properties = {{"header", "value"}, {"bad", "\xFF"}};
  m.body = std::make_shared<const std::string>("{}");
  EXPECT_EQ(message_qos(m), 1);
  auto p = to_publish(m, OutboundOptions{1, false, codec::Version::v5, kMappingNow});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->topic, "orders/eu");
  EXPECT_EQ(p->properties.response_topic, "/queue/replies");
  EXPECT_EQ(p->properties.correlation_data, "c-1");
  EXPECT_EQ(p->properties.content_type, "application/json");
  // A header MQTT cannot carry (not UTF-8) is left out.
  EXPECT_EQ(p->properties.user_properties, (std::vector<std::pair<std::string, std::string>>{{"header", "value"}}));
  m.persistent = false;
  EXPECT_EQ(message_qos(m), 0);
  m.destination.name = "a.#";
  EXPECT_FALSE(to_publish(m, OutboundOptions{0, false, codec::Version::v5, kMappingNow}));
}

TEST(MessageMapping, Will) {
  codec::Will w;
  w.topic = "status/c1";
  w.payload = "offline";
  w.qos = 1;
  w.retain = true;
  auto m = will_message(w, model::MessageId{}, kMappingNow, 9);
  EXPECT_EQ(m->destination.name, "status.c1");
  EXPECT_TRUE(m->persistent);
  EXPECT_TRUE(m->retain);
  EXPECT_EQ(*m->body, "offline");
}

}  // namespace
}  // namespace carrier::mqtt
