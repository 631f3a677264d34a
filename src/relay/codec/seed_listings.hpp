#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

// Seed 000's Listings 1-15 as rows (namespace id, name, content), with the "xxxx" fields
// filled in, and a byte builder that follows the seed's Figure 4 field by field, apart from the
// encoder under test. Shared by the codec's tests and docs/relay.md's hex.
namespace carrier::relay::codec::seed {

struct Row {
  std::uint8_t ns;
  std::string name;
  std::string content;
};

struct Listing {
  int number;
  std::vector<std::string> namespaces;
  std::vector<Row> rows;
};

inline const std::string kRelayAddress =
    "http://172.16.0.37:2481/EndpointService:jxta-NetGroup/uuid-DEADBEEFDEAFBABAFEEDBABE0000000F05";
inline const std::string kPeerAddress = "jxta://uuid-59616261646162614A78746150325033F55704B199754D3E9076A2947775A6EE03";
inline const std::string kPeerId = "uuid-59616261646162614A78746150325033F55704B199754D3E9076A2947775A6EE03";
inline const std::string kGroupId = "urn:jxta:uuid-476D795065657247726F757002";
inline const std::string kPipeId = "urn:jxta:uuid-51746573745069706504";

// Listing 2 and 4 are HTTP requests; 1, 3, 5-15 are messages. The seed's own typos in lengths
// (Listing 8's "0003 myPeerGroup", Listing 9's "01 id") are the element's real lengths here.
inline std::vector<Listing> listings() {
  const Row to_relay{1, "EndpointDestinationAddress", kRelayAddress};
  const Row from_peer{1, "EndpointSourceAddress", kPeerAddress};
  const Row to_peer{1, "EndpointDestinationAddress", kPeerAddress};
  const Row from_relay{1, "EndpointSourceAddress", kRelayAddress};
  return {
      {1, {"proxy"}, {{2, "request", "create"}, {2, "name", "test"}, {2, "requestId", "1"}, {2, "type", "PIPE"},
                      {2, "arg", "Unicast"}, to_relay, from_peer}},
      {3, {"relay"}, {{2, "response", "pid"}, {2, "peerid", kPeerId}, to_peer, from_relay}},
      {5, {"relay"}, {{2, "response", "connected"}, {2, "lease", "3600000"}, to_peer, from_relay}},
      {6, {"proxy"}, {{2, "request", "join"}, {2, "id", kGroupId}, {2, "arg", "secret"}, {2, "requestId", "1"},
                      to_relay, from_peer}},
      {7, {"proxy"}, {{2, "response", "success"}, {2, "requestId", "2"}, to_peer, from_relay}},
      {8, {"proxy"}, {{2, "request", "search"}, {2, "type", "GROUP"}, {2, "attr", "name"}, {2, "value", "myPeerGroup"},
                      {2, "threshold", "1"}, {2, "requestId", "3"}, to_relay, from_peer}},
      {9, {"proxy"}, {{2, "response", "result"}, {2, "type", "GROUP"}, {2, "name", "myPeerGroup"}, {2, "id", kGroupId},
                      {2, "requestId", "2"}, to_peer, from_relay}},
      {10, {"proxy"}, {{2, "request", "create"}, {2, "name", "testPipe"}, {2, "requestId", "4"}, {2, "type", "PIPE"},
                       {2, "arg", "JxtaUnicast"}, to_relay, from_peer}},
      {11, {"proxy"}, {{2, "response", "success"}, {2, "requestId", "4"}, {2, "type", "PIPE"}, {2, "name", "testPipe"},
                       {2, "id", kPipeId}, {2, "arg", "JxtaUnicast"}, to_peer, from_relay}},
      {12, {"proxy"}, {{2, "request", "listen"}, {2, "id", kPipeId}, {2, "requestId", "1"}, to_relay, from_peer}},
      {13, {"proxy"}, {{2, "response", "success"}, {2, "requestId", "2"}, to_peer, from_relay}},
      {14, {"proxy", "records"}, {{2, "request", "send"}, {2, "requestId", "2"}, {2, "id", kPipeId},
                                  {0, "sender", "tester"}, {0, "message", "Hello"}, {3, "fileReference", "3"},
                                  to_relay, from_peer}},
      {15, {"proxy"}, {{2, "response", "success"}, {2, "requestId", "2"}, to_peer, from_relay}},
  };
}

inline void put_be(std::string& out, std::uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// The bytes of a listing, written out field by field as Figure 4 shows them.
inline std::string bytes_of(const Listing& l) {
  std::string out = "jxmg";
  out.push_back('\0');
  put_be(out, l.namespaces.size(), 2);
  for (const auto& ns : l.namespaces) {
    put_be(out, ns.size(), 2);
    out += ns;
  }
  put_be(out, l.rows.size(), 2);
  for (const auto& r : l.rows) {
    out += "jxel";
    out.push_back(static_cast<char>(r.ns));
    out.push_back('\0');
    put_be(out, r.name.size(), 2);
    out += r.name;
    put_be(out, r.content.size(), 4);
    out += r.content;
  }
  return out;
}

}  // namespace carrier::relay::codec::seed
