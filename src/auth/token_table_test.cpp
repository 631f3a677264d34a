#include "auth/token_table.hpp"

#include <gtest/gtest.h>

#include "auth/password_hash.hpp"

namespace carrier::auth {
namespace {

TEST(TokenTableTest, NewTokensAreLongRandomAndUrlSafe) {
  ASSERT_TRUE(init_sodium());
  const auto a = new_token();
  const auto b = new_token();
  EXPECT_NE(a, b);
  EXPECT_EQ(a.rfind("carrier_", 0), 0u);
  EXPECT_EQ(a.size(), 8u + 43u);  // 32 bytes in unpadded base64
  EXPECT_EQ(a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"), std::string::npos);
}

TEST(TokenTableTest, DigestIsSha256Hex) {
  ASSERT_TRUE(init_sodium());
  EXPECT_EQ(token_digest_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(TokenTableTest, FindsTheUserUntilTheTokenExpires) {
  ASSERT_TRUE(init_sodium());
  const auto alice = new_token();
  const auto bob = new_token();
  const TokenTable table({Token{"alice", 0, token_digest_hex(alice), {}}, Token{"bob", 1000, token_digest_hex(bob), {}}});
  EXPECT_EQ(table.user_of(alice, 5000), "alice");  // never expires
  EXPECT_EQ(table.user_of(bob, 999), "bob");
  EXPECT_FALSE(table.user_of(bob, 1000));  // expired
  EXPECT_FALSE(table.user_of(new_token(), 0));
  EXPECT_FALSE(table.user_of("", 0));
  EXPECT_FALSE(table.user_of(alice.substr(0, alice.size() - 1), 0));
  EXPECT_FALSE(TokenTable().user_of(alice, 0));
}

}  // namespace
}  // namespace carrier::auth
