#include "relay/directory.hpp"

#include <gtest/gtest.h>

namespace carrier::relay {
namespace {

TEST(Wildcard, Matches) {
  EXPECT_TRUE(wildcard_match("*", ""));
  EXPECT_TRUE(wildcard_match("my*", "myPeerGroup"));
  EXPECT_TRUE(wildcard_match("*Group", "myPeerGroup"));
  EXPECT_TRUE(wildcard_match("m*P*p", "myPeerGroup"));
  EXPECT_TRUE(wildcard_match("myPeerGroup", "myPeerGroup"));
  EXPECT_FALSE(wildcard_match("my", "myPeerGroup"));
  EXPECT_FALSE(wildcard_match("*x*", "myPeerGroup"));
  EXPECT_TRUE(wildcard_match("a*a*a*a*a*b", std::string(40, 'a') + "b"));
}

TEST(Directory, AddsOnceSearchesWithAThresholdAndABound) {
  Directory dir(3);
  EXPECT_EQ(dir.add({"PIPE", "chat", "id-1", "JxtaPropagate"}).value(), true);
  EXPECT_EQ(dir.add({"PIPE", "chat", "id-1", "JxtaPropagate"}).value(), false);  // found again
  EXPECT_TRUE(dir.add({"PIPE", "chart", "id-2", "JxtaUnicast"}).has_value());
  EXPECT_TRUE(dir.add({"GROUP", "chatters", "id-3", ""}).has_value());
  EXPECT_EQ(dir.size(), 3u);
  auto full = dir.add({"PIPE", "x", "id-4", ""});
  ASSERT_FALSE(full.has_value());
  EXPECT_EQ(full.error().code, Errc::limit_exceeded);
  EXPECT_EQ(dir.search("PIPE", "name", "ch*", 10).size(), 2u);
  EXPECT_EQ(dir.search("PIPE", "name", "ch*", 1).size(), 1u);
  EXPECT_EQ(dir.search("PIPE", "id", "id-2", 10).size(), 1u);
  EXPECT_EQ(dir.search("GROUP", "name", "*", 10).size(), 1u);
}

}  // namespace
}  // namespace carrier::relay
