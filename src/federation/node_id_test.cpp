#include "federation/node_id.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace carrier::federation {
namespace {

std::filesystem::path fresh_dir(const char* name) {
  auto dir = std::filesystem::temp_directory_path() / ("carrier-node-id-" + std::string(name) + "-" +
                                                       std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

TEST(NodeId, GeneratedOnceThenKept) {
  const auto dir = fresh_dir("kept");
  auto first = load_or_create_node_id(dir);
  ASSERT_TRUE(first);
  auto second = load_or_create_node_id(dir);
  ASSERT_TRUE(second);
  EXPECT_EQ(*first, *second);
  EXPECT_NE(*first, codec::Id128{});
  std::filesystem::remove_all(dir);
}

TEST(NodeId, TwoDirectoriesTwoIds) {
  const auto a = fresh_dir("a");
  const auto b = fresh_dir("b");
  EXPECT_NE(*load_or_create_node_id(a), *load_or_create_node_id(b));
  std::filesystem::remove_all(a);
  std::filesystem::remove_all(b);
}

TEST(NodeId, CorruptFileRefusedNamingIt) {
  const auto dir = fresh_dir("corrupt");
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "federation-node-id") << "not-hex\n";
  auto id = load_or_create_node_id(dir);
  ASSERT_FALSE(id);
  EXPECT_NE(id.error().detail.find("federation-node-id"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(NodeId, HexRoundTrip) {
  codec::Id128 id;
  for (std::size_t i = 0; i < 16; ++i) id.bytes[i] = static_cast<std::uint8_t>(i * 17);
  EXPECT_EQ(to_hex(id), "00112233445566778899aabbccddeeff");
  EXPECT_EQ(*from_hex(to_hex(id)), id);
  EXPECT_FALSE(from_hex("0011"));
  EXPECT_FALSE(from_hex("zz112233445566778899aabbccddeeff"));
}

}  // namespace
}  // namespace carrier::federation
