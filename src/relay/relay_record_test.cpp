#include "relay/relay_record.hpp"

#include <gtest/gtest.h>

namespace carrier::relay {
namespace {

const model::MessageId kId{1, 2};

TEST(RelayRecord, PeersListensMailAndEntriesRoundTrip) {
  PeerRecord peer{"uuid-ABC03", "alice", "http://h:1/EndpointService:jxta-NetGroup/uuid-1", 60000, 1700000000000, "grp"};
  auto m = encode_peer(peer, kId, 5);
  EXPECT_EQ(m->destination.name, kPeersQueue);
  EXPECT_TRUE(m->persistent);
  EXPECT_EQ(decode_peer(*m), peer);

  ListenRecord listen{"uuid-ABC03", "urn:jxta:uuid-5104", "7"};
  EXPECT_EQ(decode_listen(*encode_listen(listen, kId, 5)), listen);

  MailRecord mail{"uuid-ABC03", std::string("jxmg\0\0\0", 7)};
  EXPECT_EQ(decode_mail(*encode_mail(mail, kId, 5)), mail);

  Directory::Entry entry{"PIPE", "chat", "urn:jxta:uuid-5404", "JxtaPropagate"};
  EXPECT_EQ(decode_entry(*encode_entry(entry, kId, 5)), entry);
}

TEST(RelayRecord, WhatDoesNotDecodeIsRefused) {
  auto m = encode_peer(PeerRecord{"uuid-1", "", "", 10, 20, ""}, kId, 5);
  auto other_format = *m;
  other_format.properties[0].second = "9";
  EXPECT_FALSE(decode_peer(other_format).has_value());
  auto no_deadline = *m;
  for (auto& [k, v] : no_deadline.properties) {
    if (k == "relay-expires-ms") v = "soon";
  }
  EXPECT_FALSE(decode_peer(no_deadline).has_value());
  model::Message bare;
  EXPECT_FALSE(decode_peer(bare).has_value());
  EXPECT_FALSE(decode_listen(bare).has_value());
  EXPECT_FALSE(decode_mail(bare).has_value());
  EXPECT_FALSE(decode_entry(bare).has_value());
  auto not_a_kind = *encode_entry(Directory::Entry{"PIPE", "x", "id", ""}, kId, 5);
  for (auto& [k, v] : not_a_kind.properties) {
    if (k == "relay-type") v = "PEER";
  }
  EXPECT_FALSE(decode_entry(not_a_kind).has_value());
}

}  // namespace
}  // namespace carrier::relay
