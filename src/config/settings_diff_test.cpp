#include "config/settings_diff.hpp"

#include <gtest/gtest.h>

namespace carrier::config {
namespace {

Settings of(std::string_view text) {
  auto s = settings_of(text, "test.toml");
  EXPECT_TRUE(s) << (s ? "" : s.error().detail);
  return s ? *s : Settings{};
}

TEST(SettingsDiff, FlattensTablesAndKeepsArraysWhole) {
  auto s = of("log_level = \"info\"\n[stomp]\nlisten = \"127.0.0.1:1\"\n[[policy]]\nmatch = \"a.>\"\n");
  EXPECT_NE(s.at("log_level").find("info"), std::string::npos);
  EXPECT_NE(s.at("stomp.listen").find("127.0.0.1:1"), std::string::npos);
  EXPECT_NE(s.at("policy").find("a.>"), std::string::npos);
  EXPECT_EQ(s.size(), 3u);
}

TEST(SettingsDiff, SplitsLiveFromRestartKeys) {
  auto before = of("log_level = \"info\"\nshards = 2\n[[policy]]\nmatch = \"a\"\nmax_messages = 5\n");
  auto after = of("log_level = \"debug\"\nshards = 4\n[[policy]]\nmatch = \"a\"\nmax_messages = 6\n"
                  "[stomp]\nlisten = \"127.0.0.1:2\"\n");
  auto change = compare(before, after);
  EXPECT_EQ(change.live, (std::vector<std::string>{"log_level", "policy"}));
  EXPECT_EQ(change.restart, (std::vector<std::string>{"shards", "stomp.listen"}));
  EXPECT_TRUE(compare(after, after).live.empty());
  EXPECT_TRUE(compare(after, after).restart.empty());
}

TEST(SettingsDiff, ThePagingBudgetChangesLive) {
  auto change = compare(of("[core]\nmemory_budget_bytes = 1048576\nmemory_limit_bytes = 1\n"),
                        of("[core]\nmemory_budget_bytes = 2097152\nmemory_limit_bytes = 2\n"));
  EXPECT_EQ(change.live, (std::vector<std::string>{"core.memory_budget_bytes"}));
  EXPECT_EQ(change.restart, (std::vector<std::string>{"core.memory_limit_bytes"}));
}

TEST(SettingsDiff, ARemovedKeyIsAChange) {
  auto change = compare(of("[http]\nlisten = \"off\"\n"), of(""));
  EXPECT_EQ(change.restart, (std::vector<std::string>{"http.listen"}));
}

TEST(SettingsDiff, ABrokenFileIsAnError) { EXPECT_FALSE(settings_of("shards = = 2", "bad.toml")); }

}  // namespace
}  // namespace carrier::config
