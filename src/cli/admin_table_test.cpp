#include "cli/admin_table.hpp"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace carrier::cli {
namespace {

std::string read(const std::string& name) {
  std::ifstream in(std::string(CARRIER_CLI_TESTDATA) + "/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Each view against its golden file: testdata/admin_<view>.json in, admin_<view>.txt out.
class AdminTableGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(AdminTableGolden, MatchesTheGoldenFile) {
  const std::string view = GetParam();
  const auto input = nlohmann::json::parse(read("admin_" + view + ".json"));
  auto text = format_admin_table(view, input);
  ASSERT_TRUE(text) << text.error().detail;
  EXPECT_EQ(*text, read("admin_" + view + ".txt"));
}

INSTANTIATE_TEST_SUITE_P(Views, AdminTableGolden, ::testing::Values("queues", "topics", "connections", "browse"));

TEST(AdminTable, EmptyListIsTheHeaderAlone) {
  auto text = format_admin_table("subscriptions", nlohmann::json{{"total", 0}, {"items", nlohmann::json::array()}});
  ASSERT_TRUE(text);
  EXPECT_EQ(*text, "NAME  DEPTH  UNACKED  CONSUMERS  DURABLE\n");
}

TEST(AdminTable, UnknownViewOrShapeIsAnError) {
  EXPECT_FALSE(format_admin_table("bogus", nlohmann::json::array()));
  EXPECT_FALSE(format_admin_table("queues", nlohmann::json{{"total", 1}}));
}

}  // namespace
}  // namespace carrier::cli
