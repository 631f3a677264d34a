#include "stomp/codec/escape.hpp"

#include <gtest/gtest.h>

#include <string>

namespace carrier::stomp::codec {
namespace {

using namespace std::string_literals;

std::string escaped(std::string_view raw, Version v) {
  std::string out;
  append_escaped(raw, v, out);
  return out;
}

TEST(Escape, EscapesPerVersion) {
  const std::string raw = "a\\b\nc:d\re";
  EXPECT_EQ(escaped(raw, Version::v1_0), raw);
  EXPECT_EQ(escaped(raw, Version::v1_1), "a\\\\b\\nc\\cd\re");
  EXPECT_EQ(escaped(raw, Version::v1_2), "a\\\\b\\nc\\cd\\re");
  EXPECT_EQ(escaped("", Version::v1_2), "");
  EXPECT_EQ(escaped("plain", Version::v1_2), "plain");
  EXPECT_EQ(escaped("::", Version::v1_2), "\\c\\c");
}

TEST(Escape, AppendsWithoutClearing) {
  std::string out = "x=";
  append_escaped(":", Version::v1_1, out);
  EXPECT_EQ(out, "x=\\c");
}

TEST(Escape, UnescapesPerVersion) {
  EXPECT_EQ(unescape("a\\\\b\\nc\\cd", Version::v1_1), "a\\b\nc:d");
  EXPECT_EQ(unescape("a\\\\b\\nc\\cd\\re", Version::v1_2), "a\\b\nc:d\re");
  EXPECT_EQ(unescape("a\\rb", Version::v1_1), std::nullopt);  // \r is 1.2 only
  EXPECT_EQ(unescape("a\\tb\\", Version::v1_0), "a\\tb\\");   // 1.0 has no escapes
  EXPECT_EQ(unescape("", Version::v1_2), "");
  EXPECT_EQ(unescape("\\\\\\\\", Version::v1_2), "\\\\");
}

TEST(Escape, RejectsUndefinedSequences) {
  for (Version v : {Version::v1_1, Version::v1_2}) {
    EXPECT_EQ(unescape("\\t", v), std::nullopt);
    EXPECT_EQ(unescape("ab\\", v), std::nullopt);
    EXPECT_EQ(unescape("\\N", v), std::nullopt);
    EXPECT_EQ(unescape("\\:", v), std::nullopt);
  }
}

TEST(Escape, UnescapeAppendReportsTheOffsetOfTheBadBackslash) {
  std::string out;
  EXPECT_EQ(unescape_append("ok\\nthen\\x", Version::v1_2, out), 8u);
  out.clear();
  EXPECT_EQ(unescape_append("trailing\\", Version::v1_1, out), 8u);
  out = "keep:";
  EXPECT_EQ(unescape_append("v\\c", Version::v1_1, out), std::string_view::npos);
  EXPECT_EQ(out, "keep:v:");
}

TEST(Escape, RoundTripsEveryByteValue) {
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  all += "\\\\::\n\n\r\r\\n";
  for (Version v : {Version::v1_0, Version::v1_1, Version::v1_2}) {
    EXPECT_EQ(unescape(escaped(all, v), v), all);
  }
}

TEST(Escape, OnlyEscapedFramesEscape) {
  EXPECT_FALSE(escapes_headers(Command::send, Version::v1_0));
  EXPECT_TRUE(escapes_headers(Command::send, Version::v1_1));
  EXPECT_TRUE(escapes_headers(Command::message, Version::v1_2));
  EXPECT_TRUE(escapes_headers(Command::error, Version::v1_2));
  for (Command c : {Command::connect, Command::stomp, Command::connected}) {
    for (Version v : {Version::v1_0, Version::v1_1, Version::v1_2}) {
      EXPECT_FALSE(escapes_headers(c, v));
    }
  }
}

}  // namespace
}  // namespace carrier::stomp::codec
