#include "admin/access.hpp"

#include <gtest/gtest.h>

namespace carrier::admin {
namespace {

TEST(Access, WithoutAdminUsersOnlyLoopbackClients) {
  const Options none;
  EXPECT_TRUE(may_administer(none, "", "127.0.0.1"));
  EXPECT_TRUE(may_administer(none, "", "127.8.9.1"));
  EXPECT_TRUE(may_administer(none, "bob", "::1"));
  EXPECT_TRUE(may_administer(none, "", "::ffff:127.0.0.1"));
  EXPECT_FALSE(may_administer(none, "", "10.0.0.7"));
  EXPECT_FALSE(may_administer(none, "", "::2"));
  EXPECT_FALSE(may_administer(none, "", "1270.0.0.1"));
}

TEST(Access, WithAdminUsersOnlyThoseUsersFromAnywhere) {
  const Options admins{{"alice", "ops"}};
  EXPECT_TRUE(may_administer(admins, "alice", "10.0.0.7"));
  EXPECT_TRUE(may_administer(admins, "ops", "127.0.0.1"));
  EXPECT_FALSE(may_administer(admins, "bob", "127.0.0.1"));
  EXPECT_FALSE(may_administer(admins, "", "127.0.0.1"));
  EXPECT_FALSE(may_administer(admins, "Alice", "127.0.0.1"));
}

TEST(Access, WithAnAclItsAdminRuleDecidesAndAdminUsersStillGetIn) {
  const Options none;
  EXPECT_TRUE(may_administer(none, "ops", "10.0.0.7", true));
  EXPECT_FALSE(may_administer(none, "bob", "127.0.0.1", false));  // loopback is no pass with an ACL
  EXPECT_FALSE(may_administer(none, "", "127.0.0.1", false));
  const Options admins{{"alice"}};
  EXPECT_TRUE(may_administer(admins, "alice", "10.0.0.7", false));  // [admin] users keep working
  EXPECT_TRUE(may_administer(admins, "ops", "10.0.0.7", true));
  EXPECT_FALSE(may_administer(admins, "bob", "127.0.0.1", false));
}

}  // namespace
}  // namespace carrier::admin
