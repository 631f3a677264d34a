#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "model/shard_id.hpp"

namespace carrier::protocol {

// What the admin API and /metrics see of a broker's federation links, and the runtime changes
// they may make (docs/federation.md "Links at runtime"). The federation protocol implements it;
// the HTTP sessions find it through ProtocolSet::find("federation") and never include
// federation/. Every call answers on `reply_on`, the caller's shard.
// Runs on: any shard (calls go to the federation's home shard and come back).
class FederationLinks {
 public:
  struct Link {
    std::string name;        // configured name, or the peer's address for an accepted link
    std::string direction;   // "outbound" (this node dials it) or "inbound"
    std::string connect;     // "HOST:PORT" dialled (outbound), or the peer's address
    bool tls = false;        // the link runs over TLS
    std::string state;       // "up", "handshake" or "connecting" (outbound, waiting to redial)
    std::string peer_node;   // hex; empty until established
    std::int32_t session = 0;
    std::uint64_t pushed = 0;        // messages pushed and acknowledged by the far node
    std::uint64_t push_failures = 0;  // pushes the far node refused
    std::uint64_t received = 0;      // pushes taken in from the far node (duplicates excluded)
    std::uint64_t replies_sent = 0;  // sendbacks over this link
    std::uint64_t bytes_out = 0;     // frame bytes written
    std::uint64_t bytes_in = 0;      // frame bytes read
    std::uint64_t in_flight = 0;     // requests awaiting the far node's answer
    std::uint64_t throttled = 0;     // pushes waiting for the rate limit
    std::uint64_t forwarding = 0;    // destinations forwarded over it
    std::uint64_t demand = 0;        // destinations the far node advertised
    std::uint32_t max_rate = 0;      // set by the far node; 0: none
    std::string max_rate_unit;       // "bits/s" or "messages/s"
    std::vector<std::string> paused;  // selectors paused toward the far node
  };
  struct Report {
    std::string node_id;
    std::vector<Link> links;
    std::uint64_t dedup_size = 0;
    std::uint64_t dedup_hits = 0;    // duplicates dropped since start
    std::uint64_t reply_routes = 0;  // ways back for replies known
  };
  struct NewLink {
    std::string name;
    std::string host;
    std::uint16_t port = 0;
    std::string username;
    std::string password;
    std::int32_t cost = 1;
    // TLS to the far node, as [[federation.link]]'s keys of the same names.
    bool tls = false;
    std::string ca_file, server_name, cert_file, key_file;
  };

  virtual ~FederationLinks() = default;
  virtual void report(model::ShardId reply_on, std::function<void(Report)> done) = 0;
  // Errc::already_exists for a name in use; the link is dialled at once.
  virtual void add_link(NewLink link, model::ShardId reply_on, std::function<void(Status)> done) = 0;
  // Errc::not_found for no outbound link of that name; an open link of that name closes.
  virtual void remove_link(std::string name, model::ShardId reply_on, std::function<void(Status)> done) = 0;
};

}  // namespace carrier::protocol
