#include "auth/user_file.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

namespace carrier::auth {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kHashA = "$argon2id$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$aGFzaGhhc2hoYXNo";
const std::string kHashB = "$argon2id$v=19$m=65536,t=2,p=1$b3RoZXJzYWx0$b3RoZXJoYXNo";

std::string error_of(std::string_view text) {
  auto parsed = parse_user_file(text, "users.txt");
  if (parsed) {
    ADD_FAILURE() << "parsed, expected an error:\n" << text;
    return {};
  }
  EXPECT_EQ(parsed.error().code, Errc::invalid_argument);
  return parsed.error().detail;
}

TEST(UserFileTest, ReadsEntriesCommentsAndBlankLines) {
  const std::string text = "# Carrier users\n\nalice:" + kHashA + "\r\n   \n  # bob left\nbob:" + kHashB + "  \n";
  auto users = parse_user_file(text, "users.txt");
  ASSERT_TRUE(users) << users.error().to_string();
  ASSERT_EQ(users->size(), 2u);
  EXPECT_EQ((*users)[0].name, "alice");
  EXPECT_EQ((*users)[0].password_hash, kHashA);
  EXPECT_EQ((*users)[0].source, "users.txt:3");
  EXPECT_EQ((*users)[1].name, "bob");
  EXPECT_EQ((*users)[1].password_hash, kHashB);
  EXPECT_EQ((*users)[1].source, "users.txt:6");
}

TEST(UserFileTest, EmptyFileHasNoUsers) {
  auto users = parse_user_file("", "users.txt");
  ASSERT_TRUE(users);
  EXPECT_TRUE(users->empty());
  EXPECT_TRUE(parse_user_file("\n# nothing\n", "users.txt")->empty());
}

TEST(UserFileTest, LastLineNeedsNoNewline) {
  auto users = parse_user_file("alice:" + kHashA, "users.txt");
  ASSERT_TRUE(users);
  ASSERT_EQ(users->size(), 1u);
}

TEST(UserFileTest, BadLinesAreNamedByLine) {
  EXPECT_EQ(error_of("alice:" + kHashA + "\nbob\n"), "expected NAME:HASH in users.txt:2");
  EXPECT_THAT(error_of(":" + kHashA), HasSubstr("must not be empty in users.txt:1"));
  EXPECT_THAT(error_of("a\x01:" + kHashA), HasSubstr("control characters in users.txt:1"));
  EXPECT_THAT(error_of("alice:\n"), HasSubstr("the hash of user \"alice\" must be an argon2id hash"));
  EXPECT_THAT(error_of("alice:" + kHashA + "\n\nalice:" + kHashB + "\n"),
              HasSubstr("user \"alice\" is defined twice, in users.txt:1 and users.txt:3"));
}

TEST(UserFileTest, APlaintextPasswordIsNeverEchoed) {
  const auto detail = error_of("alice:correct horse battery staple\n");
  EXPECT_THAT(detail, HasSubstr("users.txt:1"));
  EXPECT_THAT(detail, Not(HasSubstr("horse")));
}

TEST(UserFileTest, ReadNamesTheMissingFile) {
  auto users = read_user_file("/nonexistent/carrier-users.txt");
  ASSERT_FALSE(users);
  EXPECT_EQ(users.error().code, Errc::not_found);
  EXPECT_THAT(users.error().detail, HasSubstr("/nonexistent/carrier-users.txt"));
}

TEST(UserFileTest, ReadsAFile) {
  const auto path = std::filesystem::temp_directory_path() / ("carrier-users-" + std::to_string(::getpid()));
  std::ofstream(path) << "alice:" << kHashA << "\n";
  auto users = read_user_file(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(users) << users.error().to_string();
  ASSERT_EQ(users->size(), 1u);
  EXPECT_EQ((*users)[0].source, path.string() + ":1");
}

}  // namespace
}  // namespace carrier::auth
