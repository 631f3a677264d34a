#include "mqtt/codec/data_types.hpp"

#include <gtest/gtest.h>

#include <string>

#include "mqtt/codec/topic_syntax.hpp"

namespace carrier::mqtt::codec {
namespace {

using namespace std::string_literals;

TEST(Utf8, AcceptsWellFormedText) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("sensors/temp"));
  EXPECT_TRUE(is_valid_utf8("caf\xC3\xA9"));               // U+00E9
  EXPECT_TRUE(is_valid_utf8("\xE2\x82\xAC"));              // U+20AC
  EXPECT_TRUE(is_valid_utf8("\xF0\x9F\x98\x80"));          // U+1F600
  EXPECT_TRUE(is_valid_utf8("\xEF\xBF\xBF"));              // U+FFFF: a non-character, allowed
  EXPECT_TRUE(is_valid_utf8("\xF4\x8F\xBF\xBF"));          // U+10FFFF
  EXPECT_TRUE(is_valid_utf8("\x01\x1F\x7F"));              // control characters: SHOULD NOT, allowed
}

TEST(Utf8, RejectsWhatMqttForbids) {
  EXPECT_FALSE(is_valid_utf8("a\0b"s));                    // U+0000
  EXPECT_FALSE(is_valid_utf8("\xC0\x80"));                 // overlong U+0000
  EXPECT_FALSE(is_valid_utf8("\xC1\xBF"));                 // overlong
  EXPECT_FALSE(is_valid_utf8("\xE0\x80\xAF"));             // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xF0\x80\x80\xAF"));         // overlong
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));             // U+D800, a surrogate
  EXPECT_FALSE(is_valid_utf8("\xED\xBF\xBF"));             // U+DFFF
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));         // U+110000
  EXPECT_FALSE(is_valid_utf8("\x80"));                     // lone continuation byte
  EXPECT_FALSE(is_valid_utf8("\xC3"));                     // truncated
  EXPECT_FALSE(is_valid_utf8("\xE2\x82"));                 // truncated
  EXPECT_FALSE(is_valid_utf8("\xC3\x28"));                 // bad continuation
  EXPECT_FALSE(is_valid_utf8("\xFF"));
  EXPECT_FALSE(is_valid_utf8("\xF8\x88\x80\x80\x80"));     // 5-byte form
}

TEST(VariableByteInteger, RoundTripsTheBoundaries) {
  for (std::uint32_t v : {0u, 1u, 127u, 128u, 16'383u, 16'384u, 2'097'151u, 2'097'152u, 268'435'455u}) {
    std::string bytes;
    put_variable_int(bytes, v);
    EXPECT_EQ(bytes.size(), variable_int_size(v)) << v;
    Reader in(bytes, 0);
    std::uint32_t back = 0;
    ASSERT_TRUE(in.variable_int(back, "value")) << v;
    EXPECT_EQ(back, v);
    EXPECT_TRUE(in.at_end());
  }
}

TEST(VariableByteInteger, RejectsLongAndNonMinimalForms) {
  {
    std::string bytes = "\xFF\xFF\xFF\xFF\x01";
    Reader in(bytes, 10);
    std::uint32_t v = 0;
    EXPECT_FALSE(in.variable_int(v, "value"));
    ASSERT_TRUE(in.error());
    EXPECT_EQ(in.error()->reason, ReasonCode::malformed_packet);
    EXPECT_EQ(in.error()->offset, 10u);
  }
  {
    std::string bytes = "\x80\x00"s;
    Reader in(bytes, 0);
    std::uint32_t v = 0;
    EXPECT_FALSE(in.variable_int(v, "value"));
  }
  {
    std::string bytes = "\x80";
    Reader in(bytes, 0);
    std::uint32_t v = 0;
    EXPECT_FALSE(in.variable_int(v, "value"));  // truncated
  }
}

TEST(Reader, StringsAndBinary) {
  std::string bytes;
  put_string(bytes, "h\xC3\xA9llo");
  put_string(bytes, "\0\xFF"s);
  put_u16(bytes, 0xBEEF);
  put_u32(bytes, 0xDEADBEEF);
  Reader in(bytes, 0);
  std::string s, b;
  std::uint16_t u16 = 0;
  std::uint32_t u32 = 0;
  ASSERT_TRUE(in.utf8(s, "s"));
  ASSERT_TRUE(in.binary(b, "b"));
  ASSERT_TRUE(in.u16(u16, "u16"));
  ASSERT_TRUE(in.u32(u32, "u32"));
  EXPECT_EQ(s, "h\xC3\xA9llo");
  EXPECT_EQ(b, "\0\xFF"s);
  EXPECT_EQ(u16, 0xBEEF);
  EXPECT_EQ(u32, 0xDEADBEEFu);
  EXPECT_TRUE(in.at_end());
}

TEST(Reader, InvalidUtf8IsMalformedAtTheStringsOffset) {
  std::string bytes = "xx";
  put_string(bytes, "\xED\xA0\x80");
  Reader in(std::string_view(bytes).substr(2), 2);
  std::string s;
  EXPECT_FALSE(in.utf8(s, "topic"));
  ASSERT_TRUE(in.error());
  EXPECT_EQ(in.error()->reason, ReasonCode::malformed_packet);
  EXPECT_EQ(in.error()->offset, 2u);
}

TEST(Reader, FirstErrorSticks) {
  std::string bytes = "\x01";
  Reader in(bytes, 0);
  std::uint16_t v = 0;
  EXPECT_FALSE(in.u16(v, "first"));
  EXPECT_FALSE(in.fail(ReasonCode::protocol_error, 0, "second"));
  EXPECT_NE(in.error()->detail.find("first"), std::string::npos);
}

TEST(TopicSyntax, Names) {
  EXPECT_TRUE(is_valid_topic_name("a"));
  EXPECT_TRUE(is_valid_topic_name("/"));
  EXPECT_TRUE(is_valid_topic_name("a//b"));
  EXPECT_TRUE(is_valid_topic_name("$SYS/broker"));
  EXPECT_FALSE(is_valid_topic_name(""));
  EXPECT_FALSE(is_valid_topic_name("a/+"));
  EXPECT_FALSE(is_valid_topic_name("a/#"));
  EXPECT_FALSE(is_valid_topic_name("a+b"));
}

TEST(TopicSyntax, Filters) {
  for (const char* ok : {"#", "+", "a/#", "a/+/b", "+/+", "/+", "a//b", "+/#", "$SYS/#", "a/b/"}) {
    EXPECT_TRUE(is_valid_topic_filter(ok)) << ok;
  }
  for (const char* bad : {"", "a#", "a/#/b", "a/b#", "a+", "a/+b", "##", "#/"}) {
    EXPECT_FALSE(is_valid_topic_filter(bad)) << bad;
  }
}

TEST(TopicSyntax, SharedFilters) {
  auto s = parse_shared_filter("$share/group/a/+/b");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->group, "group");
  EXPECT_EQ(s->filter, "a/+/b");
  EXPECT_TRUE(parse_shared_filter("$share/g/#"));
  EXPECT_FALSE(parse_shared_filter("$share/g"));
  EXPECT_FALSE(parse_shared_filter("$share//a"));
  EXPECT_FALSE(parse_shared_filter("$share/g/"));
  EXPECT_FALSE(parse_shared_filter("$share/g+/a"));
  EXPECT_FALSE(parse_shared_filter("$share/g/a#"));
  EXPECT_FALSE(parse_shared_filter("$shared/g/a"));
}

}  // namespace
}  // namespace carrier::mqtt::codec
