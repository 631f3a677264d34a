#include "auth/password_hash.hpp"

#include <gtest/gtest.h>

#include "auth/user_syntax.hpp"

namespace carrier::auth {
namespace {

TEST(PasswordHashTest, HashesVerifyAndAreSalted) {
  ASSERT_TRUE(init_sodium());
  auto a = hash_password("s3cret");
  auto b = hash_password("s3cret");
  ASSERT_TRUE(a && b);
  EXPECT_NE(*a, *b);  // a fresh salt each time
  EXPECT_EQ(password_hash_problem(*a), "") << *a;
  EXPECT_TRUE(is_usable_hash(*a));
  EXPECT_TRUE(verify_password(*a, "s3cret"));
  EXPECT_TRUE(verify_password(*b, "s3cret"));
  EXPECT_FALSE(verify_password(*a, "s3cre"));
  EXPECT_FALSE(verify_password(*a, ""));
  EXPECT_TRUE(a->starts_with("$argon2id$v=19$m=65536,t=2,p=1$")) << *a;  // the interactive limits
}

TEST(PasswordHashTest, BinaryPasswordsWork) {
  ASSERT_TRUE(init_sodium());
  const std::string password("a\0b\xff", 4);
  auto h = hash_password(password);
  ASSERT_TRUE(h);
  EXPECT_TRUE(verify_password(*h, password));
  EXPECT_FALSE(verify_password(*h, std::string("a", 1)));
}

TEST(PasswordHashTest, MalformedHashesNeverVerify) {
  ASSERT_TRUE(init_sodium());
  EXPECT_FALSE(is_usable_hash("secret"));
  EXPECT_FALSE(is_usable_hash("$argon2id$v=19$m=65536,t=2,p=1$c2FsdA$aGFzaA"));  // salt too short
  EXPECT_FALSE(verify_password("secret", "secret"));
  EXPECT_FALSE(verify_password("", ""));
}

TEST(PasswordHashTest, WipeEmpties) {
  std::string s = "password";
  wipe(s);
  EXPECT_TRUE(s.empty());
  std::string moved_from = "hunter2";
  std::string taken = std::move(moved_from);
  wipe(moved_from);  // its small-string buffer is zeroed too (not observable portably)
  EXPECT_TRUE(moved_from.empty());
  EXPECT_EQ(taken, "hunter2");
}

}  // namespace
}  // namespace carrier::auth
