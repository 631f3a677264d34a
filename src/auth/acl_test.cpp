#include "auth/acl.hpp"

#include <gtest/gtest.h>

namespace carrier::auth {
namespace {

Acl parse(std::string_view text) {
  auto acl = Acl::parse(text, "acl");
  EXPECT_TRUE(acl.has_value()) << (acl ? "" : acl.error().detail);
  return acl ? std::move(*acl) : Acl{};
}

std::string parse_error(std::string_view text) {
  auto acl = Acl::parse(text, "acl");
  return acl ? std::string("parsed") : acl.error().detail;
}

TEST(Acl, MosquittoTopicLinesDefaultToReadwrite) {
  auto acl = parse("user alice\ntopic sensors/+/temp\ntopic read news/#\n");
  auto g = acl.grant_for("alice", "c1");
  EXPECT_TRUE(g.allows(Right::write, AclKind::topic, "sensors.kitchen.temp"));
  EXPECT_TRUE(g.allows(Right::read, AclKind::topic, "sensors.*.temp"));
  EXPECT_FALSE(g.allows(Right::read, AclKind::topic, "sensors.>"));
  EXPECT_TRUE(g.allows(Right::read, AclKind::topic, "news"));  // MQTT's `#` matches the parent
  EXPECT_TRUE(g.allows(Right::read, AclKind::topic, "news.a.b"));
  EXPECT_FALSE(g.allows(Right::write, AclKind::topic, "news.a"));
  EXPECT_FALSE(g.allows(Right::read, AclKind::queue, "news.a"));  // queues are apart
}

TEST(Acl, NoRuleIsDenied) {
  auto acl = parse("user alice\nqueue read orders.>\n");
  EXPECT_FALSE(acl.grant_for("bob", "").allows(Right::read, AclKind::queue, "orders.1"));
  EXPECT_FALSE(acl.grant_for("", "").allows(Right::read, AclKind::queue, "orders.1"));
  EXPECT_TRUE(acl.grant_for("alice", "").allows(Right::read, AclKind::queue, "orders.1"));
  EXPECT_FALSE(acl.grant_for("alice", "").allows(Right::read, AclKind::queue, "orders"));
}

TEST(Acl, DenyBeatsAllow) {
  auto acl = parse("user alice\nqueue readwrite >\nqueue deny bob.>\nqueue deny write audit\n");
  auto g = acl.grant_for("alice", "");
  EXPECT_TRUE(g.allows(Right::read, AclKind::queue, "orders"));
  EXPECT_FALSE(g.allows(Right::read, AclKind::queue, "bob.inbox"));
  EXPECT_FALSE(g.allows(Right::write, AclKind::queue, "bob.inbox"));
  EXPECT_TRUE(g.allows(Right::read, AclKind::queue, "audit"));
  EXPECT_FALSE(g.allows(Right::write, AclKind::queue, "audit"));
  // A wildcard subscription that could reach a denied name is refused whole.
  EXPECT_FALSE(g.allows(Right::read, AclKind::queue, ">"));
  EXPECT_FALSE(g.allows(Right::read, AclKind::queue, "*.inbox"));
  EXPECT_TRUE(g.allows(Right::read, AclKind::queue, "orders.*"));
}

TEST(Acl, PatternsSubstituteUserAndClientId) {
  auto acl = parse("pattern queue readwrite inbox.%u\npattern read clients/%c/#\n");
  auto alice = acl.grant_for("alice", "dev-1");
  EXPECT_TRUE(alice.allows(Right::read, AclKind::queue, "inbox.alice"));
  EXPECT_FALSE(alice.allows(Right::read, AclKind::queue, "inbox.bob"));
  EXPECT_TRUE(alice.allows(Right::read, AclKind::topic, "clients.dev-1.x"));
  EXPECT_FALSE(alice.allows(Right::read, AclKind::topic, "clients.dev-2.x"));
}

TEST(Acl, SubstitutionNeverWidensARule) {
  auto acl = parse("pattern queue readwrite inbox.%u\npattern read c/%c\npattern queue deny secret.%u\n");
  EXPECT_FALSE(acl.grant_for(">", "").allows(Right::read, AclKind::queue, "inbox.bob"));
  EXPECT_FALSE(acl.grant_for("a.b", "").allows(Right::read, AclKind::queue, "inbox.a"));
  EXPECT_FALSE(acl.grant_for("u", "#").allows(Right::read, AclKind::topic, "c.x"));
  EXPECT_FALSE(acl.grant_for("", "").allows(Right::read, AclKind::queue, "inbox.%u"));
  // A deny rule it cannot substitute denies everything of its kind and rights.
  EXPECT_FALSE(acl.grant_for("*", "").allows(Right::read, AclKind::queue, "anything"));
  // An MQTT pattern escapes the value as MQTT topic levels are: alice.smith's level is alice/smith.
  auto dotted = parse("pattern readwrite users/%u/#\n").grant_for("alice.smith", "");
  EXPECT_TRUE(dotted.allows(Right::write, AclKind::topic, "users.alice/smith.x"));
  EXPECT_FALSE(dotted.allows(Right::write, AclKind::topic, "users.alice.smith.x"));
}

TEST(Acl, GroupsGrantTheirMembersTheirRules) {
  auto acl = parse(
      "group ops\n"
      "member alice\n"
      "member carol smith\n"
      "queue all ops.>\n"
      "user alice\n"
      "queue deny ops.secret\n");
  auto alice = acl.grant_for("alice", "");
  EXPECT_TRUE(alice.allows(Right::admin, AclKind::queue, "ops.x"));
  EXPECT_FALSE(alice.allows(Right::read, AclKind::queue, "ops.secret"));
  EXPECT_TRUE(acl.grant_for("carol smith", "").allows(Right::read, AclKind::queue, "ops.secret"));
  EXPECT_FALSE(acl.grant_for("bob", "").allows(Right::read, AclKind::queue, "ops.x"));
}

TEST(Acl, RightListsAndAnonymousRules) {
  auto acl = parse("topic read public.>\nuser alice\ntopic read,create feeds.>\n");
  auto anonymous = acl.grant_for("", "");
  EXPECT_TRUE(anonymous.allows(Right::read, AclKind::topic, "public.a"));
  EXPECT_FALSE(acl.grant_for("alice", "").allows(Right::read, AclKind::topic, "public.a"));
  EXPECT_TRUE(acl.grant_for("alice", "").allows(Right::create, AclKind::topic, "feeds.x"));
  EXPECT_FALSE(acl.grant_for("alice", "").allows(Right::write, AclKind::topic, "feeds.x"));
  EXPECT_FALSE(acl.grant_for("alice", "").allows(Right::admin, AclKind::topic, "feeds.x"));
}

TEST(Acl, MqttEscapesMatchTheCoreSpelling) {
  auto acl = parse("user u\ntopic write a.b/c\ntopic read /x\n");
  auto g = acl.grant_for("u", "");
  EXPECT_TRUE(g.allows(Right::write, AclKind::topic, "a/b.c"));  // MQTT a.b/c is core a/b.c
  EXPECT_FALSE(g.allows(Right::write, AclKind::topic, "a.b.c"));
  EXPECT_TRUE(g.allows(Right::read, AclKind::topic, "%.x"));  // empty level
}

TEST(Acl, BadLinesNameTheLine) {
  EXPECT_EQ(parse_error("user alice\nfrobnicate x\n"),
            "unknown keyword \"frobnicate\" (expected user, group, member, topic, queue or pattern) in acl:2");
  EXPECT_EQ(parse_error("member alice\n"), "`member` outside a `group` block in acl:1");
  EXPECT_EQ(parse_error("topic\n"), "a rule needs a pattern in acl:1");
  // As in Mosquitto, a lone word is the pattern: a topic called "read", readwrite.
  EXPECT_EQ(parse_error("topic read\n"), "parsed");
  EXPECT_EQ(parse_error("topic a/#/b\n"), "`#` must be the last level of an MQTT pattern in acl:1");
  EXPECT_EQ(parse_error("topic a/b+\n"), "`+` and `#` must fill a whole level of an MQTT pattern in acl:1");
  EXPECT_EQ(parse_error("queue a..b\n"), "a pattern has an empty level in acl:1");
  EXPECT_EQ(parse_error("queue a.>.b\n"), "`>` must be the last level of a pattern in acl:1");
  EXPECT_NE(parse_error("user \n"), "parsed");
}

TEST(Acl, CommentsBlankLinesAndCrlfAreSkipped) {
  auto acl = parse("# rules\r\n\r\n  user alice  \r\n  # indented comment\r\nqueue read q\r\n");
  EXPECT_TRUE(acl.grant_for("alice", "").allows(Right::read, AclKind::queue, "q"));
  EXPECT_EQ(acl.rule_count(), 1u);
}

}  // namespace
}  // namespace carrier::auth
