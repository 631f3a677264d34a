#include "http/console/console_assets.hpp"

#include <gtest/gtest.h>

namespace carrier::http::console {
namespace {

TEST(ConsoleAssets, IndexAndUplotAreEmbeddedWithTheirTypes) {
  const auto index = find_asset("index.html");
  ASSERT_TRUE(index.has_value());
  EXPECT_EQ(index->content_type, "text/html; charset=utf-8");
  EXPECT_NE(index->body.find("<!doctype html>"), std::string_view::npos);
  const auto uplot = find_asset("vendor/uPlot.iife.min.js");
  ASSERT_TRUE(uplot.has_value());
  EXPECT_EQ(uplot->content_type, "text/javascript; charset=utf-8");
  EXPECT_NE(uplot->body.find("uPlot"), std::string_view::npos);
  const auto css = find_asset("vendor/uPlot.min.css");
  ASSERT_TRUE(css.has_value());
  EXPECT_EQ(css->content_type, "text/css; charset=utf-8");
}

TEST(ConsoleAssets, EtagsAreQuotedAndDiffer) {
  const auto a = find_asset("index.html");
  const auto b = find_asset("console.css");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->etag.front(), '"');
  EXPECT_EQ(a->etag.back(), '"');
  EXPECT_NE(a->etag, b->etag);
}

TEST(ConsoleAssets, UnknownAndTraversalPathsAreNotFound) {
  EXPECT_FALSE(find_asset("").has_value());
  EXPECT_FALSE(find_asset("../index.html").has_value());
  EXPECT_FALSE(find_asset("/index.html").has_value());
  EXPECT_FALSE(find_asset(std::string_view("index.html\0x", 12)).has_value());
  EXPECT_FALSE(find_asset("nothing.js").has_value());
}

}  // namespace
}  // namespace carrier::http::console
