#include "store/log/crc32c.hpp"

#include <gtest/gtest.h>

#include <string>

namespace carrier::store::log {
namespace {

TEST(Crc32c, KnownVectors) {
  EXPECT_EQ(crc32c(""), 0u);
  EXPECT_EQ(crc32c("123456789"), 0xe3069283u);  // the standard check value
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8a9136aau);  // RFC 3720 B.4
  EXPECT_EQ(crc32c(std::string(32, '\xff')), 0x62a8ab43u);
}

TEST(Crc32c, ChainsAcrossSplits) {
  std::string data;
  for (int i = 0; i < 1000; ++i) data.push_back(static_cast<char>(i * 31 + 7));
  const std::uint32_t whole = crc32c(data);
  for (std::size_t split : {0u, 1u, 7u, 8u, 9u, 500u, 999u, 1000u}) {
    const std::string_view v(data);
    EXPECT_EQ(crc32c(v.substr(split), crc32c(v.substr(0, split))), whole) << split;
  }
}

}  // namespace
}  // namespace carrier::store::log
