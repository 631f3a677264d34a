#include "mqtt/topic_map.hpp"

#include <gtest/gtest.h>

#include "core/destination_tree.hpp"

namespace carrier::mqtt {
namespace {

TEST(TopicMap, PlainTopicsMapLevelForLevel) {
  EXPECT_EQ(to_core_name("a/b/c"), "a.b.c");
  EXPECT_EQ(to_core_name("sensors"), "sensors");
  EXPECT_EQ(to_core_name("$SYS/broker/uptime"), "$SYS.broker.uptime");
  EXPECT_EQ(to_mqtt_name("a.b.c"), "a/b/c");
}

TEST(TopicMap, SpecialCharactersAreEscapedOneToOne) {
  EXPECT_EQ(to_core_name("a/b.c"), "a.b/c");  // ActiveMQ's swap
  EXPECT_EQ(to_core_name("/a"), "%.a");
  EXPECT_EQ(to_core_name("a//b"), "a.%.b");
  EXPECT_EQ(to_core_name("a/"), "a.%");
  EXPECT_EQ(to_core_name("/"), "%.%");
  EXPECT_EQ(to_core_name("100%"), "100%25");
  EXPECT_EQ(to_core_name("a*b/>"), "a%2Ab.%3E");
  for (const char* topic : {"a/b.c", "/a", "a//b", "a/", "/", "100%", "a*b/>", "%/%25/%2A", "x.y.z", "*", ">",
                            "caf\xC3\xA9/\xE2\x82\xAC", "%"}) {
    EXPECT_EQ(to_mqtt_name(to_core_name(topic)), topic) << topic;
    // And every core name is a valid one (no wildcards, no empty levels).
    EXPECT_FALSE(core::DestinationTree::has_wildcards(to_core_name(topic))) << topic;
    EXPECT_TRUE(core::DestinationTree::is_valid_filter(to_core_name(topic))) << topic;
  }
}

TEST(TopicMap, StompNamesThatAreNotMqttTopics) {
  EXPECT_EQ(to_mqtt_name("a.b/c"), "a/b.c");
  EXPECT_EQ(to_mqtt_name("50%off"), "50%off");  // a lone % is kept
  EXPECT_FALSE(to_mqtt_name("a.+"));             // would be a wildcard in MQTT
  EXPECT_FALSE(to_mqtt_name("a.#"));
  EXPECT_FALSE(to_mqtt_name(std::string("a\0b", 3)));
  EXPECT_FALSE(to_mqtt_name("\xFF"));
}

TEST(TopicMap, Filters) {
  auto f = to_core_filters("a/+/c");
  EXPECT_EQ(f.main, "a.*.c");
  EXPECT_FALSE(f.parent);
  f = to_core_filters("a/#");
  EXPECT_EQ(f.main, "a.>");
  EXPECT_EQ(f.parent, "a");
  f = to_core_filters("#");
  EXPECT_EQ(f.main, ">");
  EXPECT_FALSE(f.parent);
  f = to_core_filters("+/#");
  EXPECT_EQ(f.main, "*.>");
  EXPECT_EQ(f.parent, "*");
  f = to_core_filters("/+");
  EXPECT_EQ(f.main, "%.*");
  for (const char* filter : {"a/+/c", "a/#", "#", "+", "+/#", "/+", "a//#", "a.b/+"}) {
    auto cf = to_core_filters(filter);
    EXPECT_TRUE(core::DestinationTree::is_valid_filter(cf.main)) << filter;
    if (cf.parent) {
      EXPECT_TRUE(core::DestinationTree::is_valid_filter(*cf.parent)) << filter;
    }
  }
}

// MQTT's matching rules, run through the mapping and core's matcher.
bool matches(const char* filter, const char* topic) {
  auto cf = to_core_filters(filter);
  const std::string name = to_core_name(topic);
  bool m = core::DestinationTree::filter_matches(cf.main, name) ||
           (cf.parent && core::DestinationTree::filter_matches(*cf.parent, name));
  if (starts_with_wildcard(filter) && topic[0] == '$') m = false;
  return m;
}

TEST(TopicMap, MatchingFollowsMqtt) {
  EXPECT_TRUE(matches("a/#", "a"));
  EXPECT_TRUE(matches("a/#", "a/b"));
  EXPECT_TRUE(matches("a/#", "a/b/c"));
  EXPECT_FALSE(matches("a/#", "ab"));
  EXPECT_TRUE(matches("#", "a"));
  EXPECT_TRUE(matches("#", "/a"));
  EXPECT_TRUE(matches("+/+", "/a"));
  EXPECT_FALSE(matches("+", "/a"));
  EXPECT_TRUE(matches("a/+/c", "a//c"));
  EXPECT_TRUE(matches("a/+", "a/b.c"));
  EXPECT_FALSE(matches("a/+", "a/b/c"));
  EXPECT_FALSE(matches("#", "$SYS/x"));
  EXPECT_FALSE(matches("+/x", "$SYS/x"));
  EXPECT_TRUE(matches("$SYS/#", "$SYS/x"));
  EXPECT_TRUE(matches("a/*", "a/*"));   // a literal star is just a character in MQTT
  EXPECT_FALSE(matches("a/*", "a/b"));
}

TEST(TopicMap, ReplyTo) {
  EXPECT_EQ(to_reply_to("resp/1"), "/topic/resp.1");
  EXPECT_EQ(to_response_topic("/topic/resp.1"), "resp/1");
  EXPECT_EQ(to_response_topic("/queue/replies"), "/queue/replies");
  EXPECT_EQ(to_response_topic(to_reply_to("/topic/x")), "/topic/x");
  EXPECT_FALSE(to_response_topic(""));
  EXPECT_FALSE(to_response_topic("a/#"));
}

TEST(TopicMap, ReplyQueue) {
  // A STOMP or HTTP requester's temporary queue, passed through as the response topic.
  EXPECT_EQ(to_response_topic("/temp-queue/carrier-7.r"), "/temp-queue/carrier-7.r");
  EXPECT_EQ(reply_queue_of("/temp-queue/carrier-7.r"), "carrier-7.r");
  EXPECT_FALSE(reply_queue_of("/temp-queue/mine"));  // not a broker-qualified name
  EXPECT_FALSE(reply_queue_of("temp-queue/carrier-7"));
  EXPECT_FALSE(reply_queue_of("a/b"));
}

TEST(TopicMap, Levels) {
  EXPECT_FALSE(exceeds_levels("a", 1));
  EXPECT_TRUE(exceeds_levels("a/b", 1));
  EXPECT_FALSE(exceeds_levels("a/b/c", 3));
  EXPECT_TRUE(exceeds_levels("a/b/c/d", 3));
  EXPECT_TRUE(exceeds_levels("//", 2));  // empty levels count
  EXPECT_FALSE(exceeds_levels("//", 3));
  EXPECT_FALSE(exceeds_levels("abcdefgh", 3));  // long, one level
  std::string deep;
  for (int i = 0; i < 200; ++i) deep += "x/";
  EXPECT_TRUE(exceeds_levels(deep, 128));
  EXPECT_FALSE(exceeds_levels(deep, 201));
}

}  // namespace
}  // namespace carrier::mqtt
