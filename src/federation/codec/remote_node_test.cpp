#include "federation/codec/remote_node.hpp"

#include <gtest/gtest.h>

#include "federation/codec/test_support.hpp"

namespace carrier::federation::codec {
namespace {

using namespace testing;

// The seed's example: selectors = ping, pong, query; locale = JP_ja; profiles = GNUTELLA, NAPSTER.
NodeProperty seed_example() {
  return NodeProperty{{{"selectors", {"ping", "pong", "query"}},
                       {"locale", {"JP_ja"}},
                       {"profiles", {"GNUTELLA", "NAPSTER"}}}};
}

// new String[] { "selectors", "3", "ping", "pong", "query", "locale", "1", "JP_ja",
//                "profiles", "2", "GNUTELLA", "NAPSTER" }: 12 PStrings, 71 bytes with NULs.
const std::string kSeedExampleWire =
    std::string("\x00\x00\x00\x0c", 4) + std::string("\x00\x00\x00\x47", 4) +
    std::string("selectors\0" "3\0" "ping\0" "pong\0" "query\0"
                "locale\0" "1\0" "JP_ja\0"
                "profiles\0" "2\0" "GNUTELLA\0" "NAPSTER\0", 71);

TEST(NodeProperty, SeedExampleByteForByte) {
  std::string out;
  ASSERT_TRUE(encode_node_property(seed_example(), out));
  EXPECT_EQ(out, kSeedExampleWire);
  auto back = decode_node_property(kSeedExampleWire, Limits{});
  ASSERT_TRUE(back.has_value()) << back.error().to_string();
  EXPECT_EQ(*back, seed_example());
  ASSERT_NE(back->find("profiles"), nullptr);
  EXPECT_EQ(back->find("profiles")->size(), 2u);
  EXPECT_EQ(back->find("absent"), nullptr);
}

TEST(NodeProperty, EmptyAndValuelessKeysRoundTrip) {
  for (const NodeProperty& p : {NodeProperty{}, NodeProperty{{{"selectors", {}}, {"k", {""}}}}}) {
    std::string out;
    ASSERT_TRUE(encode_node_property(p, out));
    auto back = decode_node_property(out, Limits{});
    ASSERT_TRUE(back.has_value()) << back.error().to_string();
    EXPECT_EQ(*back, p);
  }
  std::string empty;
  ASSERT_TRUE(encode_node_property(NodeProperty{}, empty));
  EXPECT_EQ(empty, be32(0) + be32(0));
}

TEST(RemoteNode, RoundTripsAndIsTheIdThenTheProperty) {
  const RemoteNode node{make_id(0xa0), seed_example()};
  std::string out;
  ASSERT_TRUE(encode_remote_node(node, out));
  EXPECT_EQ(out, id_bytes(make_id(0xa0)) + kSeedExampleWire);
  auto back = decode_remote_node(out, Limits{});
  ASSERT_TRUE(back.has_value()) << back.error().to_string();
  EXPECT_EQ(*back, node);
  expect_every_prefix_refused(out, [](std::string_view b) { return decode_remote_node(b, Limits{}); });
}

TEST(NodeProperty, EveryTruncationIsRefused) {
  expect_every_prefix_refused(kSeedExampleWire, [](std::string_view b) { return decode_node_property(b, Limits{}); });
}

// slotSize, slotLength and the strings as given: for the refusals below.
std::string property(std::uint32_t slots, std::string_view strings) {
  return be32(slots) + be32(static_cast<std::uint32_t>(strings.size())) + std::string(strings);
}

Error refusal(const std::string& wire, const Limits& limits = Limits{}) {
  auto r = decode_node_property(wire, limits);
  EXPECT_FALSE(r.has_value());
  return r.has_value() ? Error(Errc::invalid_argument, "decoded") : r.error();
}

TEST(NodeProperty, BadCountsAreRefused) {
  using namespace std::string_literals;
  const std::pair<std::string, std::string_view> cases[] = {
      {property(2, "k\0" "x\0"s), "not a decimal count"},
      {property(2, "k\0" "01\0"s), "not a decimal count"},
      {property(2, "k\0" "-1\0"s), "not a decimal count"},
      {property(2, "k\0" "\0"s), "not a decimal count"},
      {property(3, "k\0" "5\0" "v\0"s), "5 values announced, 1 strings left"},
      {property(1, "k\0"s), "no value count"},
      {property(4, "k\0" "0\0" "k\0" "0\0"s), "repeated"},
      {property(2, "k\0" "0\0" "extra\0"s), "bytes after the last"},
      {property(3, "k\0" "1\0"s), "missing NUL"},
      {property(5, "k\0" "1\0"s), "5 strings in 4 bytes"},
      {be32(2) + be32(100) + "k\0" "0\0"s, "100 bytes announced"},
  };
  for (const auto& [wire, expected] : cases) {
    const Error e = refusal(wire);
    EXPECT_EQ(e.code, Errc::protocol_error) << e.detail;
    EXPECT_NE(e.detail.find(expected), std::string::npos) << e.detail << " (wanted: " << expected << ")";
  }
}

TEST(NodeProperty, HostileSlotCountsHitTheLimit) {
  const Error e = refusal(be32(0x8000'0000u) + be32(0xffff'ffffu) + "k");
  EXPECT_EQ(e.code, Errc::limit_exceeded);
  Limits unlimited;
  unlimited.max_property_slots = std::numeric_limits<std::size_t>::max();
  const Error t = refusal(be32(0x8000'0000u) + be32(0xffff'ffffu) + "k", unlimited);
  EXPECT_EQ(t.code, Errc::protocol_error);
}

TEST(NodeProperty, StringLimit) {
  Limits small;
  small.max_string_bytes = 8;
  const Error e = refusal(kSeedExampleWire, small);  // "selectors" is 9 bytes
  EXPECT_EQ(e.code, Errc::limit_exceeded);
  EXPECT_NE(e.detail.find("at byte 8"), std::string::npos) << e.detail;
}

TEST(NodeProperty, EncoderRefusesWhatTheDecoderWould) {
  std::string out = "kept";
  auto repeated = encode_node_property(NodeProperty{{{"k", {}}, {"k", {"v"}}}}, out);
  ASSERT_FALSE(repeated.has_value());
  EXPECT_EQ(repeated.error().code, Errc::invalid_argument);
  auto nul = encode_node_property(NodeProperty{{{"k", {std::string("a\0b", 3)}}}}, out);
  ASSERT_FALSE(nul.has_value());
  EXPECT_EQ(out, "kept");
}

}  // namespace
}  // namespace carrier::federation::codec
