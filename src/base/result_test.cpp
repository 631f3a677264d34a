#include "base/result.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace carrier {
namespace {

Result<int> parse_positive(int v) {
  if (v <= 0) return unexpected(Errc::invalid_argument, "must be positive");
  return v;
}

TEST(Result, CarriesValueOrError) {
  auto good = parse_positive(3);
  ASSERT_TRUE(good.has_value());
  EXPECT_EQ(*good, 3);
  auto bad = parse_positive(-1);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, Errc::invalid_argument);
  EXPECT_EQ(bad.error().to_string(), "invalid argument: must be positive");
  EXPECT_EQ(bad.value_or(7), 7);
}

TEST(Result, MoveOnlyValues) {
  Result<std::unique_ptr<std::string>> r = std::make_unique<std::string>("x");
  ASSERT_TRUE(r);
  auto p = std::move(r).value();
  EXPECT_EQ(*p, "x");
}

TEST(Result, VoidStatus) {
  Status s = ok();
  EXPECT_TRUE(s);
  Status e = unexpected(Errc::io_error, "disk full");
  EXPECT_FALSE(e);
  EXPECT_EQ(e.error().code, Errc::io_error);
}

}  // namespace
}  // namespace carrier
