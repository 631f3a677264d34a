#include "auth/user_syntax.hpp"

#include <gtest/gtest.h>

namespace carrier::auth {
namespace {

constexpr std::string_view kHash =
    "$argon2id$v=19$m=65536,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$K9YJ9c4n0m0oL6n7bXx3cT3y1m3a2h3Q6jQk0e3mZ1E";

TEST(UserNameTest, AcceptsOrdinaryNames) {
  EXPECT_EQ(user_name_problem("alice"), "");
  EXPECT_EQ(user_name_problem("device-17.eu@example.org"), "");
  EXPECT_EQ(user_name_problem("Jürgen Müller"), "");
  EXPECT_EQ(user_name_problem(std::string(kMaxUserNameBytes, 'a')), "");
}

TEST(UserNameTest, RejectsWhatTheFileOrAPeerCouldNotSay) {
  EXPECT_NE(user_name_problem(""), "");
  EXPECT_NE(user_name_problem(std::string(kMaxUserNameBytes + 1, 'a')), "");
  EXPECT_NE(user_name_problem("a:b"), "");
  EXPECT_NE(user_name_problem(" alice"), "");
  EXPECT_NE(user_name_problem("alice "), "");
  EXPECT_NE(user_name_problem("ali\tce"), "");
  EXPECT_NE(user_name_problem(std::string("a\0b", 3)), "");
  EXPECT_NE(user_name_problem("\xff"), "");
  EXPECT_NE(user_name_problem("\xc0\xaf"), "");       // overlong '/'
  EXPECT_NE(user_name_problem("\xed\xa0\x80"), "");   // a surrogate
  EXPECT_NE(user_name_problem("caf\xc3"), "");        // cut short
}

TEST(PasswordHashSyntaxTest, AcceptsCryptoPwhashStrOutput) { EXPECT_EQ(password_hash_problem(kHash), ""); }

TEST(PasswordHashSyntaxTest, RejectsOtherShapes) {
  EXPECT_NE(password_hash_problem(""), "");
  EXPECT_NE(password_hash_problem("secret"), "");  // a plaintext password where the hash goes
  EXPECT_NE(password_hash_problem("$argon2i$v=19$m=65536,t=2,p=1$c2FsdA$aGFzaA"), "");
  EXPECT_NE(password_hash_problem("$argon2id$v=16$m=65536,t=2,p=1$c2FsdA$aGFzaA"), "");
  EXPECT_NE(password_hash_problem("$argon2id$v=19$m=x,t=2,p=1$c2FsdA$aGFzaA"), "");
  EXPECT_NE(password_hash_problem("$argon2id$v=19$m=65536,t=2,p=1$c2FsdA$"), "");
  EXPECT_NE(password_hash_problem("$argon2id$v=19$m=65536,t=2,p=1$$aGFzaA"), "");
  EXPECT_NE(password_hash_problem("$argon2id$v=19$m=65536,t=2,p=1$c2FsdA$aGFz aA"), "");
  EXPECT_NE(password_hash_problem(std::string(kHash) + std::string(80, 'A')), "");  // past STRBYTES
  // The message never repeats what was given.
  EXPECT_EQ(password_hash_problem("hunter2").find("hunter2"), std::string::npos);
}

TEST(PrintableNameTest, EscapesAndCuts) {
  EXPECT_EQ(printable_name("a\"b\n"), "a\\\"b\\x0a");
  EXPECT_EQ(printable_name(std::string(100, 'x')), std::string(64, 'x') + "...");
}

}  // namespace
}  // namespace carrier::auth
