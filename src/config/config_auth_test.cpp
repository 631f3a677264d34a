#include "config/config.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "auth/acl.hpp"
#include "config/config_test_support.hpp"

namespace carrier::config {
namespace {

using namespace testing;

// [auth]: users inline and in a users file, anonymous access.

// A well-formed argon2id hash (of nothing anyone types).
constexpr std::string_view kHash = "$argon2id$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$aGFzaGhhc2hoYXNo";

TEST(ConfigAuth, DefaultsLetEveryoneIn) {
  const auto c = parse_ok("");
  EXPECT_FALSE(c.auth.anonymous.has_value());
  EXPECT_TRUE(c.auth.allows_anonymous());
  EXPECT_TRUE(c.auth.users.empty());
  EXPECT_TRUE(c.auth.users_file.empty());
  EXPECT_EQ(c.auth.failure_delay_ms, 1000u);
  EXPECT_EQ(c.auth.verify_threads, 1u);
}

TEST(ConfigAuth, EveryKey) {
  const auto c = parse_ok(fmt::format(R"([auth]
anonymous = true
users_file = "users.txt"
failure_delay_ms = 0
verify_threads = 2
max_pending = 10

[[auth.user]]
name = "alice"
password_hash = "{0}"

[[auth.user]]
name = "bob"
password_hash = "{0}"
)", kHash));
  EXPECT_EQ(c.auth.anonymous, true);
  EXPECT_EQ(c.auth.users_file, "users.txt");
  EXPECT_EQ(c.auth.failure_delay_ms, 0u);
  EXPECT_EQ(c.auth.verify_threads, 2u);
  EXPECT_EQ(c.auth.max_pending, 10u);
  ASSERT_EQ(c.auth.users.size(), 2u);
  EXPECT_EQ(c.auth.users[0].name, "alice");
  EXPECT_EQ(c.auth.users[0].password_hash, kHash);
  EXPECT_EQ(c.auth.users[0].source, "carrier.toml:8:1");
  EXPECT_EQ(c.auth.users[1].name, "bob");
  // With users, anonymous clients are refused unless allowed.
  auto strict = parse_ok(fmt::format("[[auth.user]]\nname = \"a\"\npassword_hash = \"{}\"\n", kHash));
  EXPECT_FALSE(strict.auth.allows_anonymous());
}

TEST(ConfigAuth, BadValuesAreNamed) {
  EXPECT_THAT(toml_error("[auth]\nanonymous = 1"), StartsWith("'auth.anonymous' must be true or false"));
  EXPECT_THAT(toml_error("[auth]\nusers_file = \"\""), StartsWith("'auth.users_file' must be a non-empty string"));
  EXPECT_THAT(toml_error("[auth]\nverify_threads = 0"), StartsWith("'auth.verify_threads' must be a positive integer"));
  EXPECT_THAT(toml_error("[auth]\nfailure_delay_ms = 60001"), StartsWith("'auth.failure_delay_ms' must be at most 60000"));
  EXPECT_THAT(toml_error("[auth]\npassword = \"x\""), StartsWith("unknown key 'auth.password'"));
  EXPECT_THAT(toml_error("[[auth.user]]\nname = \"a\"\npassword = \"x\""), StartsWith("unknown key 'auth.user[0].password'"));
  EXPECT_THAT(toml_error("[auth]\nuser = 1"), StartsWith("'auth.user' must be an array of tables ([[auth.user]])"));
  EXPECT_THAT(toml_error("[[auth.user]]\nname = \"a:b\""),
              StartsWith("'auth.user[0].name' must be a user name (a user name must not contain ':')"));
  EXPECT_THAT(toml_error("[[auth.user]]\nname = \"a\""),
              StartsWith("'auth.user[0]' needs both name and password_hash in carrier.toml:1:1"));
}

TEST(ConfigAuth, APasswordWhereTheHashGoesIsNotEchoed) {
  const auto detail = toml_error("[[auth.user]]\nname = \"alice\"\npassword_hash = \"hunter2\"\n");
  EXPECT_THAT(detail, StartsWith("'auth.user[0].password_hash' must be an argon2id hash"));
  EXPECT_THAT(detail, HasSubstr("carrier.toml:3:17"));
  EXPECT_EQ(detail.find("hunter2"), std::string::npos) << detail;
}

TEST(ConfigAuth, DuplicateInlineUsers) {
  EXPECT_THAT(toml_error(fmt::format("[[auth.user]]\nname = \"a\"\npassword_hash = \"{0}\"\n"
                                     "[[auth.user]]\nname = \"a\"\npassword_hash = \"{0}\"\n",
                                     kHash)),
              StartsWith("user \"a\" is defined twice, in carrier.toml:1:1 and carrier.toml:4:1"));
}

TEST(ConfigAuth, UsersFileIsReadBesideTheConfigFile) {
  TempFile file(fmt::format("[auth]\nusers_file = \"users.txt\"\n[[auth.user]]\nname = \"a\"\npassword_hash = \"{}\"\n",
                            kHash));
  const auto users = file.write("users.txt", fmt::format("# users\nb:{}\nc:{}\n", kHash, kHash));
  Flags flags;
  flags.config_file = file.path();
  auto loaded = load(flags);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  EXPECT_EQ(loaded->auth.users_file, users);
  ASSERT_EQ(loaded->auth.users.size(), 3u);
  EXPECT_EQ(loaded->auth.users[0].name, "a");
  EXPECT_EQ(loaded->auth.users[1].name, "b");
  EXPECT_EQ(loaded->auth.users[1].source, users.string() + ":2");
  EXPECT_EQ(loaded->auth.users[2].name, "c");
  EXPECT_FALSE(loaded->auth.allows_anonymous());
}

TEST(ConfigAuth, AclFileIsReadBesideTheConfigFile) {
  TempFile file("[auth]\nacl_file = \"acl.txt\"\n");
  Flags flags;
  flags.config_file = file.path();
  auto loaded = load(flags);
  ASSERT_FALSE(loaded);
  EXPECT_THAT(loaded.error().detail, HasSubstr("cannot read ACL file " + (file.path().parent_path() / "acl.txt").string()));

  const auto acl = file.write("acl.txt", "user alice\nqueue read orders.>\n");
  loaded = load(flags);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  EXPECT_EQ(loaded->auth.acl_file, acl);
  ASSERT_NE(loaded->auth.acl, nullptr);
  EXPECT_EQ(loaded->auth.acl->rule_count(), 1u);

  file.write("acl.txt", "user alice\nqueue read orders.>\nfrobnicate\n");
  loaded = load(flags);
  ASSERT_FALSE(loaded);
  EXPECT_THAT(loaded.error().detail, HasSubstr(acl.string() + ":3"));
}

TEST(ConfigAuth, AllowAnonymousIsMosquittosNameForAnonymous) {
  EXPECT_EQ(parse_ok("[auth]\nallow_anonymous = true\n").auth.anonymous, std::optional<bool>(true));
  EXPECT_EQ(parse_ok("[auth]\nanonymous = true\nallow_anonymous = true\n").auth.anonymous, std::optional<bool>(true));
  EXPECT_THAT(toml_error("[auth]\nanonymous = true\nallow_anonymous = false\n"), HasSubstr("allow_anonymous"));
}

TEST(ConfigAuth, UsersFileProblemsStopTheLoad) {
  TempFile file("[auth]\nusers_file = \"users.txt\"\n");
  Flags flags;
  flags.config_file = file.path();
  auto loaded = load(flags);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().code, Errc::not_found);
  EXPECT_THAT(loaded.error().detail, HasSubstr("cannot read users file " + (file.path().parent_path() / "users.txt").string()));

  const auto users = file.write("users.txt", fmt::format("a:{}\nb {}\n", kHash, kHash));
  loaded = load(flags);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().detail, "expected NAME:HASH in " + users.string() + ":2");
}

TEST(ConfigAuth, AUserInBothPlacesIsAnError) {
  TempFile file(fmt::format("[auth]\nusers_file = \"users.txt\"\n[[auth.user]]\nname = \"a\"\npassword_hash = \"{}\"\n",
                            kHash));
  const auto users = file.write("users.txt", fmt::format("a:{}\n", kHash));
  Flags flags;
  flags.config_file = file.path();
  auto loaded = load(flags);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().detail, "user \"a\" is defined twice, in " + file.path().string() + ":3:1 and " +
                                       users.string() + ":1");
}

TEST(ConfigAuth, NoAnonymousAndNoUsersIsAnError) {
  TempFile file("[auth]\nanonymous = false\n");
  Flags flags;
  flags.config_file = file.path();
  auto loaded = load(flags);
  ASSERT_FALSE(loaded);
  EXPECT_THAT(loaded.error().detail, HasSubstr("auth.anonymous is false but no user is configured"));
  // An empty users file is no user either.
  TempFile empty("[auth]\nanonymous = false\nusers_file = \"users.txt\"\n");
  empty.write("users.txt", "# nobody yet\n");
  flags.config_file = empty.path();
  loaded = load(flags);
  ASSERT_FALSE(loaded);
  EXPECT_THAT(loaded.error().detail, HasSubstr("no client could connect"));
}


TEST(ConfigAuth, TokensFileIsReadBesideTheConfigFile) {
  TempFile file(fmt::format("[auth]\ntokens_file = \"tokens.txt\"\n[[auth.user]]\nname = \"a\"\npassword_hash = \"{}\"\n",
                            kHash));
  Flags flags;
  flags.config_file = file.path();
  auto loaded = load(flags);
  ASSERT_FALSE(loaded);
  EXPECT_THAT(loaded.error().detail, HasSubstr("cannot read tokens file"));
  const auto tokens = file.write("tokens.txt", "# tokens\na:0:" + std::string(64, 'f') + "\n");
  loaded = load(flags);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  EXPECT_EQ(loaded->auth.tokens_file, tokens);
  ASSERT_EQ(loaded->auth.tokens.size(), 1u);
  EXPECT_EQ(loaded->auth.tokens[0].user, "a");
  EXPECT_EQ(loaded->auth.tokens[0].source, tokens.string() + ":2");
  file.write("tokens.txt", "a:0:nothex\n");
  loaded = load(flags);
  ASSERT_FALSE(loaded);
  EXPECT_THAT(loaded.error().detail, HasSubstr(tokens.string() + ":1"));
}

// Issue 10: limits on connections that have not logged in, and on failed logins.

}  // namespace
}  // namespace carrier::config
