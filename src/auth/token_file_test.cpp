#include "auth/token_file.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace carrier::auth {
namespace {

using ::testing::HasSubstr;

const std::string kDigest(64, 'a');

std::string token_error_of(std::string_view text) {
  auto parsed = parse_token_file(text, "tokens.txt");
  if (parsed) {
    ADD_FAILURE() << "parsed, expected an error:\n" << text;
    return {};
  }
  EXPECT_EQ(parsed.error().code, Errc::invalid_argument);
  return parsed.error().detail;
}

TEST(TokenFileTest, ReadsLinesCommentsAndBlankLines) {
  auto tokens = parse_token_file("# tokens\n\nalice:0:" + kDigest + "\r\nbob:1767225600:" + kDigest + "  \n", "tokens.txt");
  ASSERT_TRUE(tokens) << tokens.error().detail;
  ASSERT_EQ(tokens->size(), 2u);
  EXPECT_EQ((*tokens)[0].user, "alice");
  EXPECT_EQ((*tokens)[0].expires_s, 0);
  EXPECT_EQ((*tokens)[0].digest_hex, kDigest);
  EXPECT_EQ((*tokens)[1].expires_s, 1767225600);
  EXPECT_EQ((*tokens)[1].source, "tokens.txt:4");
}

TEST(TokenFileTest, LineRoundTrips) {
  const Token t{"alice", 42, kDigest, {}};
  auto tokens = parse_token_file(token_line(t), "x");
  ASSERT_TRUE(tokens);
  EXPECT_EQ((*tokens)[0].user, "alice");
  EXPECT_EQ((*tokens)[0].expires_s, 42);
}

TEST(TokenFileTest, RefusesBadLinesNamingTheLine) {
  EXPECT_THAT(token_error_of("alice\n"), HasSubstr("USER:EXPIRES:SHA256 in tokens.txt:1"));
  EXPECT_THAT(token_error_of("\nalice:" + kDigest + "\n"), HasSubstr("tokens.txt:2"));
  EXPECT_THAT(token_error_of("alice:soon:" + kDigest), HasSubstr("epoch seconds"));
  EXPECT_THAT(token_error_of("alice:-1:" + kDigest), HasSubstr("epoch seconds"));
  EXPECT_THAT(token_error_of("alice:0:" + std::string(63, 'a')), HasSubstr("SHA-256"));
  EXPECT_THAT(token_error_of("alice:0:" + std::string(64, 'A')), HasSubstr("SHA-256"));
  EXPECT_THAT(token_error_of(":0:" + kDigest), HasSubstr("tokens.txt:1"));
}

}  // namespace
}  // namespace carrier::auth
