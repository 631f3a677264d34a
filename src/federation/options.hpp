#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "federation/codec/limits.hpp"

namespace carrier::federation {

// One `[[federation.link]]`: a link this node opens (and reopens) to another node.
struct LinkOptions {
  std::string name;          // for the log and `carrier federation`
  std::string host;          // connect = "HOST:PORT"
  std::uint16_t port = 0;
  std::string username;      // checked against the far node's users; empty: none sent
  std::string password;
  std::int32_t cost = 1;     // asked for in negotiate
};

// `[federation]` (docs/configuration.md); the listener itself is Config::federation_listener.
struct Options {
  std::vector<LinkOptions> links;
  // Hops a message may still take when it leaves its first node; also how far demand spreads.
  std::int32_t ttl = 5;
  // Message ids remembered to drop duplicates (rings, meshes, redelivery after a cut).
  std::uint32_t dedup_window = 100000;
  // Reconnect back-off: randomised, doubling from min to max.
  std::uint32_t reconnect_min_ms = 100;
  std::uint32_t reconnect_max_ms = 10000;
  // Refused frames a peer may send before the link is dropped (and, outbound, retried).
  std::uint32_t max_bad_frames = 10;
  // Pushes awaiting the far node's answer, per destination and link (the forwarding
  // consumer's prefetch).
  std::uint32_t max_in_flight = 100;
  // A topic's messages bound for a link wait in a durable subscription while the link is down;
  // one no link has attached to for this long is deleted with its messages.
  std::uint32_t topic_backlog_idle_ms = 3600000;
  // Ways back for replies (sendback) remembered, and how long an unused one is kept.
  std::uint32_t reply_routes = 10000;
  std::uint32_t reply_route_idle_ms = 600000;
  codec::Limits limits;
};

}  // namespace carrier::federation
