#include "http/codec/body_encoding.hpp"

#include <gtest/gtest.h>

namespace carrier::http::codec {
namespace {

TEST(BodyEncoding, Utf8) {
  EXPECT_TRUE(is_utf8("plain"));
  EXPECT_TRUE(is_utf8("gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(is_utf8("\xff"));
  EXPECT_FALSE(is_utf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(is_utf8("\xed\xa0\x80"));      // a surrogate
  EXPECT_FALSE(is_utf8("\xf4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(is_utf8("\xe2\x82"));          // cut short
}

TEST(BodyEncoding, Base64RoundTrip) {
  for (std::string s : {std::string(), std::string("f"), std::string("fo"), std::string("foo"),
                        std::string("\x00\x01\xfe\xff", 4)}) {
    auto e = base64_encode(s);
    auto d = base64_decode(e);
    ASSERT_TRUE(d) << e;
    EXPECT_EQ(*d, s);
  }
  EXPECT_EQ(base64_encode("foob"), "Zm9vYg==");
}

TEST(BodyEncoding, Base64RefusesNonCanonical) {
  EXPECT_FALSE(base64_decode("Zm9"));
  EXPECT_FALSE(base64_decode("Zm9v YQ=="));
  EXPECT_FALSE(base64_decode("Zh=="));  // stray bits under the padding
  EXPECT_FALSE(base64_decode("Z=9v"));
  EXPECT_FALSE(base64_decode("Zm=v"));
}

}  // namespace
}  // namespace carrier::http::codec
